// Generated Management API requests for fuzzing (test/reliability/fuzz-management.test.ts): methods, paths
// (the token's own flags mostly, so requests get past the 404), query strings, Authorization and other
// headers, content types, bodies (fuzz-bodies.ts), framing, and now and then raw bytes in the target; and
// each written as the bytes of one raw HTTP/1.1 request.
import fc from 'fast-check';
import { type BodyData, flagBodies, kBadEscapes, kEnvNames, kProtoWords, unicode } from './fuzz-bodies.js';
import { rawRequest } from './raw-http.js';

/** What the generators pick from: the data set's ids, names and tokens. */
export interface RequestData extends BodyData {
  flagIds: readonly string[];
  /** Write tokens, each of a project whose flags '@own' requests address. */
  writeSecrets: readonly string[];
  /** Real tokens that may not write there: read-only, revoked, expired, of an organisation below Teams. */
  otherSecrets: readonly string[];
  /** A write token and a read token, written into malformed Authorization headers. */
  write: string;
  read: string;
}

export function managementRequests(data: RequestData) {
  const { flagIds, flagNames } = data;
  const secrets = data.writeSecrets;
  const otherSecrets = data.otherSecrets;
  const percentBytes = fc.uint8Array({ maxLength: 24 }).map((b) => [...b].map((x) => `%${x.toString(16).padStart(2, '0')}`).join(''));
  const segment = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...flagIds, 'flg_doesNotExist0000', 'flg_') },
    { weight: 2, arbitrary: unicode.map(encodeURIComponent) },
    { weight: 1, arbitrary: percentBytes },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        ...kBadEscapes,
        ...kProtoWords,
        '..',
        '.',
        '%2F',
        '%2e%2e',
        ';',
        'a'.repeat(1000),
        'a'.repeat(5000),
        'a'.repeat(60_000),
      ),
    },
  );
  const path = fc.oneof(
    // '@own': a flag of the token's own project (filled in by wireRequest), so the request gets past the 404.
    { weight: 12, arbitrary: fc.constant('@own') },
    { weight: 3, arbitrary: fc.constant('/api/v1/flags') },
    { weight: 1, arbitrary: fc.constant('/api/v1/token') },
    { weight: 5, arbitrary: segment.map((s) => `/api/v1/flags/${s}`) },
    { weight: 1, arbitrary: fc.tuple(segment, segment).map(([a, b]) => `/api/v1/flags/${a}/${b}`) },
    { weight: 1, arbitrary: segment.map((s) => `/api/v1/${s}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '/api/v1',
        '/api/v1/',
        '/api/v1//flags',
        '/api/v1/flags/',
        '/api/v1/flags?',
        '/api/v1/./flags',
        '/API/V1/FLAGS',
        '/api/v2/flags',
      ),
    },
  );
  const queryKey = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('env', 'name') },
    { weight: 1, arbitrary: fc.constantFrom('token', 'access_token', 'api_key', 'ENV', 'env[]', 'cohort', ...kProtoWords) },
    { weight: 1, arbitrary: unicode.map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.constantFrom(...kBadEscapes) },
  );
  const queryValue = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...kEnvNames) },
    { weight: 2, arbitrary: fc.constantFrom(...flagNames) },
    { weight: 2, arbitrary: unicode.map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.constantFrom(...kBadEscapes) },
    { weight: 1, arbitrary: fc.constantFrom(`fw_${'A'.repeat(40)}`, data.write, 'x'.repeat(1000)) },
  );
  const query = fc
    .array(fc.tuple(queryKey, queryValue, fc.boolean()), { maxLength: 4 })
    .map((pairs) => pairs.map(([k, v, eq]) => (eq || v !== '' ? `${k}=${v}` : k)).join('&'));

  const body = flagBodies(data);
  const authorization = fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...secrets).map((s) => `Bearer ${s}`) },
    { weight: 2, arbitrary: fc.constantFrom(...otherSecrets).map((s) => `Bearer ${s}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        'Bearer',
        'Bearer ',
        `bearer ${data.write}`,
        `Bearer  ${data.write}  `,
        `Basic ${Buffer.from('a:b').toString('base64')}`,
        `Bearer ${data.write}x`,
        `Bearer fw_${'a'.repeat(200)}`,
        `Bearer ${data.write}, Bearer ${data.read}`,
        'Bearer fw_ä',
      ),
    },
  );
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'text/plain',
        '',
        'application/json, text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/jsonx',
      ),
    },
  );
  // Control characters in a header value are left out: uWS neither answers nor rejects such a request,
  // it waits until its 10 s idle timeout and closes (slow-clients.test.ts covers that case on its own).
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the fuzzer looks for exactly these characters
  const kControl = /[\x00-\x08\x0a-\x1f]/g;
  const extraHeader = fc.oneof(
    fc.constantFrom<[string, string]>(
      ['Expect', '100-continue'],
      ['Connection', 'close'],
      ['Content-Encoding', 'gzip'],
      ['X-Forwarded-For', '1.2.3.4'],
      ['Origin', 'https://evil.test'],
      ['Host', ''],
      ['Accept', '*/*'],
      ['X-Long', 'v'.repeat(5000)],
      ['X-Long', 'v'.repeat(3000)],
    ),
    fc.tuple(
      fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/),
      fc.string({ unit: 'binary-ascii', maxLength: 30 }).map((v) => v.replace(kControl, ' ')),
    ),
  );
  const method = fc.oneof(
    { weight: 6, arbitrary: fc.constant('PATCH') },
    { weight: 3, arbitrary: fc.constant('POST') },
    { weight: 2, arbitrary: fc.constant('GET') },
    { weight: 1, arbitrary: fc.constantFrom('PUT', 'DELETE', 'HEAD', 'OPTIONS', 'get', 'Patch', 'TRACE', 'CONNECT', 'FOO') },
  );
  const request = fc.record({
    method,
    path,
    query: fc.option(query, { nil: undefined }),
    authorization: fc.option(authorization, { freq: 12, nil: undefined }),
    contentType: fc.option(contentType, { freq: 10, nil: undefined }),
    extraHeaders: fc.array(extraHeader, { maxLength: 2 }),
    // One request in 40, drawn by fast-check so that a seed replays it.
    duplicateAuth: fc.noBias(fc.integer({ min: 0, max: 39 })).map((n) => n === 0),
    body: fc.option(body, { freq: 12, nil: undefined }),
    framing: fc.constantFrom('length', 'length', 'length', 'length', 'chunked', 'short-length'),
    // Raw bytes after /api/v1/flags/ in one request in 30. CR and LF are left out: they would break the
    // request line into a header line with control characters, which uWS leaves unanswered (see kControl).
    // 7 requests in 10 are made coherent (method fits the route, env fits the project) so they reach the body.
    coherent: fc.integer({ min: 0, max: 9 }).map((n) => n < 7),
    rawTarget: fc.oneof(
      { weight: 29, arbitrary: fc.constant(undefined) },
      {
        weight: 1,
        arbitrary: fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => b.map((x) => (x === 0x0a || x === 0x0d ? 0x2e : x))),
      },
    ),
  });
  return request;
}

export type GeneratedRequest = ReturnType<typeof managementRequests> extends fc.Arbitrary<infer R> ? R : never;

/** What turns a generated request into bytes: the server's port, and each write token's project, flags and environments. */
export interface WireContext {
  port: number;
  /** Sent as a second Authorization header where the request asks for one. */
  readSecret: string;
  flagIds: readonly string[];
  projectOf: ReadonlyMap<string, string>;
  ownFlags: ReadonlyMap<string, readonly string[]>;
  projectEnvs: ReadonlyMap<string, readonly string[]>;
}

export interface WireRequest {
  bytes: Buffer;
  method: string;
  target: string | Buffer;
  /** The connection cannot carry another request after this one (closed, or left mid-body). */
  dirty: boolean;
}

/**
 * The request as raw HTTP: '@own' becomes a flag of the token's own project and, for a coherent request, a
 * method that fits the route and an environment of the project; the body framed by length, chunks, or a
 * length one byte short.
 */
export function wireRequest(r: GeneratedRequest, context: WireContext): WireRequest {
  const headers: [string, string][] = [['Host', `127.0.0.1:${context.port}`]];
  if (r.authorization !== undefined) headers.push(['Authorization', r.authorization]);
  if (r.duplicateAuth) headers.push(['Authorization', `Bearer ${context.readSecret}`]);
  if (r.contentType !== undefined) headers.push(['Content-Type', r.contentType]);
  headers.push(...r.extraHeaders);
  let payload: Buffer | undefined;
  let dirty = r.rawTarget !== undefined || r.method === 'HEAD' || r.extraHeaders.some(([k]) => k === 'Connection');
  if (r.body !== undefined) {
    // A body of ASCII only is the same bytes either way, and its UTF-8 is one byte a code unit (any other
    // code unit is two or more): told by the length, not by the two scans below, which over the bodies
    // near 1 MiB (8% of those generated, each a new string of 'c's) cost the test process a second a run.
    const utf8 = Buffer.from(r.body, 'utf8');
    const bytes =
      utf8.length === r.body.length
        ? utf8
        : // biome-ignore lint/suspicious/noControlCharactersInRegex: a body of Latin-1 code units only is one read as bytes
          /[\x80-\xff]/.test(r.body) && !/[^\x00-\xff]/.test(r.body)
          ? Buffer.from(r.body, 'latin1')
          : utf8;
    if (r.framing === 'chunked') {
      headers.push(['Transfer-Encoding', 'chunked']);
      const half = Math.floor(bytes.length / 2);
      const chunk = (b: Buffer) =>
        b.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
      payload = Buffer.concat([chunk(bytes.subarray(0, half)), chunk(bytes.subarray(half)), Buffer.from('0\r\n\r\n')]);
    } else if (r.framing === 'short-length' && bytes.length > 1) {
      // Content-Length shorter than the body: the rest reaches the server as the start of another request.
      headers.push(['Content-Length', String(bytes.length - 1)]);
      payload = bytes;
      dirty = true;
    } else {
      headers.push(['Content-Length', String(bytes.length)]);
      payload = bytes;
    }
    // A big body answered early (401, 404) leaves the server skipping the rest: use a fresh connection next.
    if (bytes.length > 64 * 1024) dirty = true;
  }
  let path = r.path;
  let method = r.method;
  let query = r.query;
  const secret = r.authorization?.slice(7) ?? '';
  if (path === '@own') {
    const own = context.ownFlags.get(secret) ?? context.flagIds;
    path = `/api/v1/flags/${own[(r.body?.length ?? 0) % own.length]}`;
    if (r.coherent) {
      if (method === 'POST') method = 'PATCH';
      const envs = context.projectEnvs.get(context.projectOf.get(secret) ?? '') ?? [];
      const pick = envs[(r.body?.length ?? 0) % Math.max(1, envs.length)];
      const rest = (query ?? '').split('&').filter((p) => p !== '' && !p.startsWith('env'));
      query = [...rest, ...(pick !== undefined ? [`env=${pick}`] : [])].join('&') || undefined;
    }
  } else if (r.coherent && path === '/api/v1/flags' && method === 'PATCH') {
    method = 'POST';
  }
  const target =
    r.rawTarget !== undefined
      ? Buffer.concat([Buffer.from('/api/v1/flags/'), Buffer.from(r.rawTarget)])
      : `${path}${query !== undefined ? `?${query}` : ''}`;
  return { bytes: rawRequest(method, target, headers, payload), method, target, dirty };
}

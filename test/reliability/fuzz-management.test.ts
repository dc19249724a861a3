// Fuzzing the Management API (issue 8, item 2): generated methods, paths, query strings, headers and
// bodies (random JSON, wrong types, huge numbers, deep nesting, unicode, duplicated keys, __proto__ and
// constructor keys, raw bytes), sent as raw HTTP to the real server. Properties checked on every request:
//   - never a 5xx, never a hang (10 s), never a connection dropped without an answer;
//   - after every 4xx the store's records are unchanged (store-digest.ts: every record's bytes), compared
//     once the writer has committed everything sent to it (the /__test/writer-idle barrier), so a write
//     a refused request set off cannot slip past the comparison and be taken for the next 2xx's change;
//   - every error under /api/v1/ is the spec's envelope {error, detail, docs}, except the plain 429;
//   - every flag in a 2xx answer has the spec's shape;
// and at the end: the server is alive, logged no error, and stops cleanly.
// Default run: 8,000 requests (plus 5,000+ in fuzz-eval); FLAGWIRE_LONG=1: 50,000.
import t from 'tap';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { call } from '../helpers/http.js';
import { HangError, RawClient, rawRequest, type RawReply } from '../helpers/raw-http.js';
import { StoreDigest } from '../helpers/store-digest.js';
import { buildRichWorld, flagShapeProblems, kLong, kUnlimited } from './support.js';

const kRuns = Number(process.env.FLAGWIRE_FUZZ_RUNS ?? (kLong ? 50_000 : 8_000));
const kSeed = Number(process.env.FLAGWIRE_FUZZ_SEED ?? Date.now() % 2 ** 31);

t.test(`Management API fuzz: ${kRuns} generated requests (seed ${kSeed})`, async (t) => {
  const dataDir = tempDataDir();
  const world = buildRichWorld(dataDir);
  // uWS's 4 KiB request-line limit raised, so that long ids and values reach Flagwire's own code;
  // test hooks on for the writer barrier (no generated path reaches /__test/).
  const server = await startTestServer({
    dataDir,
    env: { ...kUnlimited, FLAGWIRE_LOG_LEVEL: 'warn', FLAGWIRE_TEST_HOOKS: '1', UWS_HTTP_MAX_HEADERS_SIZE: '131072' },
  });
  const digest = new StoreDigest(dataDir);
  const client = new RawClient(server.port);
  t.teardown(async () => {
    client.close();
    await server.stop();
    await digest.close();
    await world.store.close();
  });

  // ---- generators ------------------------------------------------------------------------------
  const secrets = [world.secrets.write, world.secrets.multiWrite, world.secrets.stagingWrite, world.proto.secret, world.multiB.secret];
  const otherSecrets = [
    world.secrets.read,
    world.secrets.multiRead,
    world.secrets.free,
    world.refused.revoked,
    world.refused.expired,
    world.multiB.readSecret,
  ];
  const flagIds = world.flags.map((f) => f.id);
  const projectOf = new Map<string, string>([
    [world.secrets.write, world.ids.single],
    [world.secrets.multiWrite, world.ids.multi],
    [world.secrets.stagingWrite, world.ids.multi],
    [world.proto.secret, world.proto.project],
    [world.multiB.secret, world.multiB.project],
  ]);
  world.store.resetReadTxn();
  const projectEnvs = new Map(world.projects.map((id) => [id, world.store.getProject(id)!.environments]));
  const ownFlags = new Map(
    [...projectOf].map(([secret, project]) => [secret, world.flags.filter((f) => f.project === project).map((f) => f.id)]),
  );
  const audienceIds = world.audiences.map((a) => a.id);
  const flagNames = world.flags.map((f) => f.name);
  const protoWords = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'];
  const envNames = ['staging', 'production', 'constructor', 'toString', 'valueOf', '__proto__', 'Staging', ''];
  const badEscapes = [
    '%',
    '%%',
    '%z',
    '%zz',
    '%G1',
    '%C3',
    '%C3%28',
    '%ED%A0%80',
    '%F4%90%80%80',
    '%C0%AF',
    '%E2%82',
    '%00',
    '%FF',
    '+%2B+',
  ];

  const unicode = fc.string({ unit: 'binary', maxLength: 24 });
  const percentBytes = fc.uint8Array({ maxLength: 24 }).map((b) => [...b].map((x) => `%${x.toString(16).padStart(2, '0')}`).join(''));
  const segment = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...flagIds, 'flg_doesNotExist0000', 'flg_') },
    { weight: 2, arbitrary: unicode.map(encodeURIComponent) },
    { weight: 1, arbitrary: percentBytes },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        ...badEscapes,
        ...protoWords,
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
    // '@own': a flag of the token's own project (filled in below), so the request gets past the 404.
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
    { weight: 1, arbitrary: fc.constantFrom('token', 'access_token', 'api_key', 'ENV', 'env[]', 'cohort', ...protoWords) },
    { weight: 1, arbitrary: unicode.map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.constantFrom(...badEscapes) },
  );
  const queryValue = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...envNames) },
    { weight: 2, arbitrary: fc.constantFrom(...flagNames) },
    { weight: 2, arbitrary: unicode.map(encodeURIComponent) },
    { weight: 1, arbitrary: fc.constantFrom(...badEscapes) },
    { weight: 1, arbitrary: fc.constantFrom(`fw_${'A'.repeat(40)}`, world.secrets.write, 'x'.repeat(1000)) },
  );
  const query = fc
    .array(fc.tuple(queryKey, queryValue, fc.boolean()), { maxLength: 4 })
    .map((pairs) => pairs.map(([k, v, eq]) => (eq || v !== '' ? `${k}=${v}` : k)).join('&'));

  // JSON text for one value: anything JSON can carry, plus number and string forms JSON.stringify never writes.
  const valueText = fc.oneof(
    { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? 'null') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '1e400',
        '-1e400',
        '1e308',
        '-0',
        '0.0',
        '100.0',
        '50.5',
        '1E2',
        '123456789012345678901234567890',
        '-1',
        '101',
        '9007199254740993',
        '0x10',
        'NaN',
        'Infinity',
        '"50"',
        '"true"',
        '[]',
        '{}',
        '"\\ud800"',
        '"\\udc00x"',
        '"\\u0000"',
        '""',
        '"   "',
        'null',
        'true',
      ),
    },
  );
  const stateValue = (key: string) => {
    switch (key) {
      case 'enabled':
        return fc.oneof({ weight: 3, arbitrary: fc.boolean().map(String) }, { weight: 1, arbitrary: valueText });
      case 'trafficPercentage':
        return fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 0, max: 100 }).map(String) }, { weight: 1, arbitrary: valueText });
      case 'cohorts':
        return fc.oneof(
          fc.array(unicode, { maxLength: 6 }).map((a) => JSON.stringify(a)),
          valueText,
        );
      case 'audienceId':
        return fc.oneof(
          fc.constantFrom(...audienceIds, 'aud_nope').map((a) => JSON.stringify(a)),
          fc.constant('null'),
          valueText,
        );
      default:
        return valueText;
    }
  };
  // An object written as text, so keys may repeat and "__proto__" is an ordinary own key.
  const objectText = (keys: fc.Arbitrary<string>, maxKeys: number) =>
    fc
      .array(
        keys.chain((k) => stateValue(k).map((v) => `${JSON.stringify(k)}:${v}`)),
        { maxLength: maxKeys },
      )
      .map((parts) => `{${parts.join(',')}}`);
  const stateKey = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('enabled', 'trafficPercentage', 'cohorts', 'audienceId') },
    { weight: 1, arbitrary: fc.constantFrom(...protoWords, 'Enabled', 'enabled ', 'name', 'environments', '') },
    { weight: 1, arbitrary: unicode },
  );
  const patchBody = objectText(stateKey, 5);
  const nameText = fc
    .oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map((s) => `${s}-${randomUUID().slice(0, 8)}`),
      fc.constantFrom('', ' ', '\t', 'x'.repeat(200), 'x'.repeat(201), ...flagNames),
      unicode,
    )
    .map((s) => JSON.stringify(s));
  const environmentsText = fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...envNames), unicode), fc.oneof(patchBody, valueText)), { maxLength: 3 })
    .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`);
  const createKey = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom('name', 'description', 'tags', 'environments', 'enabled', 'trafficPercentage', 'cohorts', 'audienceId'),
    },
    { weight: 1, arbitrary: fc.constantFrom(...protoWords) },
  );
  const createBody = fc
    .array(
      createKey.chain((k) => {
        const v =
          k === 'name'
            ? nameText
            : k === 'environments'
              ? fc.oneof(environmentsText, valueText)
              : k === 'tags'
                ? fc.oneof(
                    fc.array(unicode, { maxLength: 60 }).map((a) => JSON.stringify(a)),
                    valueText,
                  )
                : k === 'description'
                  ? fc.oneof(
                      unicode.map((s) => JSON.stringify(s)),
                      fc.constant(JSON.stringify('d'.repeat(2001))),
                      valueText,
                    )
                  : stateValue(k);
        return v.map((text) => `${JSON.stringify(k)}:${text}`);
      }),
      { maxLength: 6 },
    )
    .map((parts) => `{${parts.join(',')}}`);
  const deepNesting = fc.tuple(fc.integer({ min: 1, max: 200_000 }), fc.constantFrom('[', '{"a":', '{"cohorts":')).map(([depth, open]) => {
    const close = open === '[' ? ']' : '}';
    const inner = `${open.repeat(depth)}1${close.repeat(depth)}`;
    return open === '[' ? `{"cohorts":${inner}}` : inner;
  });
  // Near-valid bodies, so a good share of requests are accepted and write (and the 4xx around them
  // are checked against a store that keeps changing).
  const validPatch = fc
    .record(
      {
        enabled: fc.boolean(),
        trafficPercentage: fc.integer({ min: 0, max: 100 }),
        cohorts: fc.array(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }), { maxLength: 4 }),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(Object.keys(v).length === 0 ? { enabled: true } : v));
  const validCreate = fc
    .record(
      {
        name: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map((n) => `${n}-${randomUUID().slice(0, 8)}`),
        description: fc.string({ maxLength: 40 }),
        tags: fc.array(fc.string({ minLength: 1, maxLength: 10 }), { maxLength: 3 }),
      },
      { requiredKeys: ['name'] },
    )
    .map((v) => JSON.stringify(v));
  const body = fc.oneof(
    { weight: 3, arbitrary: validPatch },
    { weight: 2, arbitrary: validCreate },
    { weight: 5, arbitrary: patchBody },
    { weight: 4, arbitrary: createBody },
    { weight: 2, arbitrary: fc.json({ maxDepth: 4 }) },
    { weight: 1, arbitrary: valueText },
    { weight: 1, arbitrary: deepNesting },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        '\n',
        '{',
        '}',
        '{"enabled":true',
        '\ufeff{"enabled":true}',
        '{"enabled":true}garbage',
        '{"enabled":true}{"enabled":false}',
        'null',
      ),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('latin1')) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(1024 * 1024 - 20, 1024 * 1024 + 1, 2 * 1024 * 1024)
        .map((n) => `{"cohorts":["${'c'.repeat(Math.max(0, n - 16))}"]}`),
    },
  );
  const authorization = fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...secrets).map((s) => `Bearer ${s}`) },
    { weight: 2, arbitrary: fc.constantFrom(...otherSecrets).map((s) => `Bearer ${s}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        'Bearer',
        'Bearer ',
        `bearer ${world.secrets.write}`,
        `Bearer  ${world.secrets.write}  `,
        `Basic ${Buffer.from('a:b').toString('base64')}`,
        `Bearer ${world.secrets.write}x`,
        `Bearer fw_${'a'.repeat(200)}`,
        `Bearer ${world.secrets.write}, Bearer ${world.secrets.read}`,
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
    duplicateAuth: fc.boolean().map((b) => b && Math.random() < 0.05),
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

  // ---- the property ----------------------------------------------------------------------------
  let baseline = digest.take();
  const statuses = new Map<number, number>();
  let sent = 0;
  let fiveHundreds = 0;
  let changedOn4xx = 0;
  let writes = 0;
  let droppedWellFormed = 0;
  let uws505 = 0;
  let barriers = 0;
  const details = new Map<string, number>();
  /** Resolves once the server's writer has committed every command sent to it so far. */
  const writerIdle = async () => {
    const r = await call(server.baseUrl, 'POST', '/__test/writer-idle');
    if (r.status !== 200) throw new Error(`writer barrier answered ${r.status} ${r.text.slice(0, 200)}`);
    barriers++;
  };

  const property = fc.asyncProperty(request, async (r) => {
    const headers: [string, string][] = [['Host', `127.0.0.1:${server.port}`]];
    if (r.authorization !== undefined) headers.push(['Authorization', r.authorization]);
    if (r.duplicateAuth) headers.push(['Authorization', `Bearer ${world.secrets.read}`]);
    if (r.contentType !== undefined) headers.push(['Content-Type', r.contentType]);
    headers.push(...r.extraHeaders);
    let payload: Buffer | undefined;
    let dirty = r.rawTarget !== undefined || r.method === 'HEAD' || r.extraHeaders.some(([k]) => k === 'Connection');
    if (r.body !== undefined) {
      const bytes = Buffer.from(
        r.body,
        // biome-ignore lint/suspicious/noControlCharactersInRegex: a body of Latin-1 code units only is one read as bytes
        r.body.length > 0 && /[\x80-\xff]/.test(r.body) && !/[^\x00-\xff]/.test(r.body) ? 'latin1' : 'utf8',
      );
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
      const own = ownFlags.get(secret) ?? flagIds;
      path = `/api/v1/flags/${own[(r.body?.length ?? 0) % own.length]}`;
      if (r.coherent) {
        if (method === 'POST') method = 'PATCH';
        const envs = projectEnvs.get(projectOf.get(secret) ?? '') ?? [];
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
    const bytes = rawRequest(method, target, headers, payload);
    let reply: RawReply;
    try {
      reply = await client.request(bytes, { timeoutMs: 60_000, head: method === 'HEAD', closeAfter: dirty });
    } catch (err) {
      if (err instanceof HangError)
        throw new Error(`hang: ${err.message}\nrequest: ${JSON.stringify(bytes.subarray(0, 600).toString('latin1'))}`);
      throw err;
    }
    sent++;
    statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
    const describe = () =>
      `${reply.status} ${reply.body.subarray(0, 300).toString()}\nrequest: ${JSON.stringify(bytes.subarray(0, 600).toString('latin1'))}`;
    if (server.proc.exitCode !== null || server.proc.signalCode !== null) throw new Error(`server died: ${describe()}`);
    // uWS (not Flagwire) answers a request line it cannot split into method, target and "HTTP/1.1"
    // with 505 and closes (a control character or space in the target). Counted apart, and only accepted
    // when the request line really is malformed.
    if (reply.status === 505 && r.rawTarget !== undefined && r.rawTarget.some((b) => b <= 0x20 || b === 0x7f)) {
      uws505++;
      return;
    }
    if (reply.status >= 500) {
      fiveHundreds++;
      throw new Error(`5xx: ${describe()}`);
    }
    // A connection closed with no answer is only acceptable for a request that is not valid HTTP.
    if (reply.status === 0 && !dirty) {
      droppedWellFormed++;
      throw new Error(`connection dropped without an answer: ${describe()}`);
    }
    // A 2xx is answered after its own commit; after anything else, wait until the writer has committed
    // whatever was sent to it, so a write set off by this request (answered before it was committed)
    // is in the digest now, and fails this request, instead of being absorbed by the next 2xx.
    if (reply.status < 200 || reply.status >= 300) await writerIdle();
    const now = digest.take();
    if (reply.status >= 200 && reply.status < 300) {
      if (StoreDigest.changed(baseline, now).length > 0) writes++;
      baseline = now;
      const type = reply.headers.get('content-type') ?? '';
      if (type.startsWith('application/json') && reply.body.length > 0) {
        const value = JSON.parse(reply.body.toString());
        const flags = Array.isArray(value?.flags)
          ? value.flags
          : value?.flag !== undefined
            ? [value.flag]
            : typeof value?.kind === 'string'
              ? [value]
              : [];
        for (const flag of flags) {
          const problems = flagShapeProblems(flag);
          if (problems.length > 0) throw new Error(`flag with a broken shape (${problems.join(', ')}): ${describe()}`);
        }
      }
      return;
    }
    if (reply.status === 404 || reply.status === 400) {
      const key = `${reply.status} ${reply.body
        .subarray(0, 60)
        .toString()
        .replace(/"[^"]*(flg_|aud_)\w*[^"]*"/g, '"…"')}`;
      details.set(key, (details.get(key) ?? 0) + 1);
    }
    const changed = StoreDigest.changed(baseline, now);
    if (changed.length > 0) {
      changedOn4xx++;
      throw new Error(`a ${reply.status} changed the store (${changed.join(', ')}): ${describe()}`);
    }
    const isOurs =
      typeof target === 'string' &&
      target.startsWith('/api/v1/') &&
      (reply.headers.get('content-type') ?? '').startsWith('application/json');
    if (isOurs && reply.status >= 400 && method !== 'HEAD') {
      const value = JSON.parse(reply.body.toString());
      const keys = Object.keys(value).sort().join(',');
      if (keys !== 'detail,docs,error' || !String(value.docs).startsWith(`${server.baseUrl}/docs#`)) {
        throw new Error(`a ${reply.status} without the envelope: ${describe()}`);
      }
    }
  });

  const started = Date.now();
  const run = await fc.check(property, { numRuns: kRuns, seed: kSeed, endOnFailure: true });
  if (run.failed) {
    const cause = run.errorInstance instanceof Error ? run.errorInstance.message : String(run.errorInstance);
    t.fail(
      `property failed after ${run.numRuns} requests (replay: FLAGWIRE_FUZZ_SEED=${run.seed}, path ${run.counterexamplePath}): ${cause.slice(0, 2000)}`,
    );
  }
  const seconds = (Date.now() - started) / 1000;
  t.comment(
    `fuzz-management: ${sent} requests in ${seconds.toFixed(1)} s, seed ${kSeed}; 5xx: ${fiveHundreds}; 4xx that changed the store: ${changedOn4xx}; ` +
      `connections dropped on well-formed requests: ${droppedWellFormed}; requests that wrote: ${writes}; ` +
      `uWS 505 for request lines that are not HTTP/1.1: ${uws505}; writer barriers before comparing the store: ${barriers}`,
  );
  t.comment(
    `fuzz-management statuses: ${[...statuses]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}:${n}`)
      .join(' ')}`,
  );
  t.comment(
    `fuzz-management most frequent refusals: ${[...details]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([d, n]) => `${n}× ${d}`)
      .join(' | ')}`,
  );
  t.ok(sent >= kRuns, `${sent} requests sent`);
  t.equal(fiveHundreds, 0, 'no 5xx');
  t.equal(changedOn4xx, 0, 'no 4xx changed the store');
  t.ok(writes > 0, 'some generated requests were valid and wrote (the generators reach the writer)');
  t.ok((statuses.get(400) ?? 0) > kRuns / 10, 'most of the rest were refused as invalid (the generators reach validation)');
  const errors = server
    .logs()
    .split('\n')
    .filter((line) => /"level":(50|60)/.test(line));
  t.same(errors, [], 'the server logged no error');
  t.equal(await server.stop(), 0, 'the server stops cleanly afterwards');
});

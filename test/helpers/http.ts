// A request as fetch makes it, with a bearer token and a JSON body, returning status, headers, raw text and
// parsed JSON.
import http from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Raw body sent as is (no JSON encoding); bytes for a body that is not UTF-8. */
  raw?: string | Uint8Array<ArrayBuffer>;
  headers?: Record<string, string>;
}

// Its idle connections do not hold the process open (node's agent unrefs a kept-alive socket).
const keptAlive = new http.Agent({ keepAlive: true });

/** A header's value as fetch's Headers holds it: leading and trailing HTTP whitespace dropped. */
const trimmed = (value: string): string => value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');

/**
 * A reply's headers as fetch's Headers reads them (names in lower case, the values of one name joined
 * by ", " but Set-Cookie's each apart, in name order), without the global Headers: in Node 20 its first
 * use loads undici, what `call` is made without.
 */
class ReplyHeaders implements Headers {
  readonly #values = new Map<string, string[]>();

  constructor(raw: readonly string[] = []) {
    for (let i = 0; i < raw.length; i += 2) this.append(raw[i]!, raw[i + 1]!);
  }
  append(name: string, value: string): void {
    const key = name.toLowerCase();
    this.#values.set(key, [...(this.#values.get(key) ?? []), trimmed(value)]);
  }
  delete(name: string): void {
    this.#values.delete(name.toLowerCase());
  }
  get(name: string): string | null {
    return this.#values.get(name.toLowerCase())?.join(', ') ?? null;
  }
  getSetCookie(): string[] {
    return [...(this.#values.get('set-cookie') ?? [])];
  }
  has(name: string): boolean {
    return this.#values.has(name.toLowerCase());
  }
  set(name: string, value: string): void {
    this.#values.delete(name.toLowerCase());
    this.append(name, value);
  }
  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [key, value] of this) callback.call(thisArg, value, key, this);
  }
  *entries(): HeadersIterator<[string, string]> {
    for (const key of [...this.#values.keys()].sort()) {
      if (key === 'set-cookie') for (const value of this.#values.get(key)!) yield [key, value];
      else yield [key, this.get(key)!];
    }
  }
  *keys(): HeadersIterator<string> {
    for (const [key] of this.entries()) yield key;
  }
  *values(): HeadersIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }
  [Symbol.iterator](): HeadersIterator<[string, string]> {
    return this.entries();
  }
}

/** The headers fetch (Node 20's undici) adds to every request, which `call` adds where the caller gave none of that name. */
const kFetchHeaders: readonly (readonly [string, string])[] = [
  ['accept', '*/*'],
  ['accept-language', '*'],
  ['sec-fetch-mode', 'cors'],
  ['user-agent', 'node'],
  ['accept-encoding', 'gzip, deflate'],
];
/** The methods fetch sends upper-cased whatever their case (PATCH is not among them). */
const kFetchUpperCased = /^(?:delete|get|head|options|post|put)$/i;
const kRedirects = new Set([301, 302, 303, 307, 308]);
/** The headers fetch drops when a redirect turns the request into a GET without a body. */
const kBodyHeaders = ['content-encoding', 'content-language', 'content-location', 'content-type', 'content-length'];
/** The headers fetch drops on a redirect to another origin. */
const kCredentialHeaders = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * A request as fetch makes it, and its reply as fetch reads it: fetch's own request headers, its
 * method names, its redirects followed (up to 20), the body decoded from gzip, deflate or br and read as
 * UTF-8 less a byte-order mark, a connection error a TypeError `fetch failed` with the error as its cause.
 * It is made over node:http with kept-alive connections: a test process's first fetch loads undici (some
 * 40-60 ms of CPU), and each fetch costs it several times the CPU of a node:http request (issue 57). A
 * 3xx without a Location is the reply, as it is fetch's.
 */
export async function call(baseUrl: string, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  const given = requestOf(opts);
  // Names in any case, one header each, values trimmed and those of one name joined: as fetch's Headers holds them.
  let headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given.headers)) {
    const lower = name.toLowerCase();
    headers[lower] = headers[lower] === undefined ? trimmed(value) : `${headers[lower]}, ${trimmed(value)}`;
  }
  for (const [name, value] of kFetchHeaders) headers[name] ??= value;
  let body = given.body;
  let url = new URL(`${baseUrl}${path}`);
  let verb = kFetchUpperCased.test(method) ? method.toUpperCase() : method;
  for (let redirects = 0; ; redirects++) {
    const reply = await nodeHttpRequest(url, verb, headers, body);
    const location = reply.headers.get('location');
    if (!kRedirects.has(reply.status) || location === null) return reply;
    if (redirects === 20) throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
    const next = new URL(location, url);
    const dropped: string[] = [];
    if (
      (reply.status === 303 && verb !== 'GET' && verb !== 'HEAD') ||
      ((reply.status === 301 || reply.status === 302) && verb === 'POST')
    ) {
      verb = 'GET';
      body = undefined;
      dropped.push(...kBodyHeaders);
    }
    if (next.origin !== url.origin) dropped.push(...kCredentialHeaders);
    headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !dropped.includes(name)));
    url = next;
  }
}

/** A reply as it came: its status, its headers as sent (name, value, ...) and its body's bytes. */
interface RawReply {
  status: number;
  rawHeaders: string[];
  bytes: Buffer;
}

/**
 * One request over a kept-alive connection, its reply's body gathered: what `call` and `keptAliveCall`
 * send, each reading the reply its own way. A connection error rejects with the error itself.
 */
function keptAliveRequest(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  retried = false,
): Promise<RawReply> {
  return new Promise<RawReply>((resolve, reject) => {
    let answered = false;
    const req = http.request(url, { method, headers, agent: keptAlive }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, bytes: Buffer.concat(chunks) }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      // A kept-alive connection the server closed (its idle timeout) just as it was taken for this request:
      // nothing reached the server, so the request is sent once more on a new connection, as Node's
      // documentation of `reusedSocket` advises (reliability/body-budget waits out the idle timeout).
      if (!answered && !retried && req.reusedSocket && e.code === 'ECONNRESET') {
        keptAliveRequest(url, method, headers, body, true).then(resolve, reject);
        return;
      }
      reject(e);
    });
    req.end(body);
  });
}

/** One request as fetch makes it over a kept-alive connection; the reply's headers as the server sent them, its body decoded as fetch decodes it. */
async function nodeHttpRequest(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
): Promise<Reply> {
  try {
    const { status, rawHeaders, bytes } = await keptAliveRequest(url, method, headers, body);
    const replyHeaders = new ReplyHeaders(rawHeaders);
    const coding = (replyHeaders.get('content-encoding') ?? '').trim().toLowerCase();
    let decoded = bytes;
    if (method !== 'HEAD' && bytes.length > 0) {
      if (coding === 'gzip' || coding === 'x-gzip') decoded = gunzipSync(bytes);
      else if (coding === 'deflate') decoded = inflateSync(bytes);
      else if (coding === 'br') decoded = brotliDecompressSync(bytes);
    }
    return replyOf(status, replyHeaders, new TextDecoder().decode(decoded));
  } catch (cause) {
    throw new TypeError('fetch failed', { cause });
  }
}

/**
 * A request over node:http with kept-alive connections and only the caller's headers, for a test that
 * asks hundreds or thousands of answers in a loop (issue 57): `call` less fetch's request headers, method
 * names, redirects and decoding, which those answers do not need; the body read as UTF-8 as it came.
 */
export async function keptAliveCall(baseUrl: string, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  const { headers, body } = requestOf(opts);
  const { status, rawHeaders, bytes } = await keptAliveRequest(new URL(`${baseUrl}${path}`), method, headers, body);
  return replyOf(status, new ReplyHeaders(rawHeaders), bytes.toString('utf8'));
}

/** The headers and body a call with `opts` sends (`call`, `keptAliveCall`, and clients of other kinds). */
export function requestOf(opts: CallOptions): { headers: Record<string, string>; body: string | Uint8Array<ArrayBuffer> | undefined } {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  let body: string | Uint8Array<ArrayBuffer> | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  return { headers, body };
}

/** A reply from its parts: `json` is the text parsed, when it parses. */
export function replyOf(status: number, headers: Headers, text: string): Reply {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status, headers, text, json };
}

/** Samples of GET /metrics, `name{labels}` -> value. */
export async function scrapeMetrics(baseUrl: string): Promise<Map<string, number>> {
  const r = await call(baseUrl, 'GET', '/metrics');
  if (r.status !== 200) throw new Error(`metrics ${r.status}`);
  const samples = new Map<string, number>();
  for (const line of r.text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

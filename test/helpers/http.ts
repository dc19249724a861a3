// fetch with a bearer token and a JSON body, returning status, headers, raw text and parsed JSON.
import http from 'node:http';
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

export async function call(baseUrl: string, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  const { headers, body } = requestOf(opts);
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  return replyOf(res.status, res.headers, await res.text());
}

// Its idle connections do not hold the process open (node's agent unrefs a kept-alive socket).
const keptAlive = new http.Agent({ keepAlive: true });

/**
 * `call` over node:http with kept-alive connections, for a test that asks hundreds or thousands of
 * answers in a loop: undici's fetch costs the test process several times the CPU per request that a
 * kept-alive node:http request does (issue 57). The same request and the same reply as `call`.
 */
export async function keptAliveCall(baseUrl: string, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  const { headers, body } = requestOf(opts);
  return new Promise<Reply>((resolve, reject) => {
    const req = http.request(new URL(`${baseUrl}${path}`), { method, headers, agent: keptAlive }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const replyHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const one of Array.isArray(value) ? value : [value ?? '']) replyHeaders.append(name, one);
        }
        resolve(replyOf(res.statusCode ?? 0, replyHeaders, Buffer.concat(chunks).toString('utf8')));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The headers and body a call with `opts` sends (for clients other than fetch, which call uses). */
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
  const r = await fetch(`${baseUrl}/metrics`);
  if (r.status !== 200) throw new Error(`metrics ${r.status}`);
  const samples = new Map<string, number>();
  for (const line of (await r.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

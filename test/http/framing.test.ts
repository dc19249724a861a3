// Request framing a proxy could read differently (RFC 9112 §6.3): a 400 in the envelope, the connection
// closed, nothing written; and the limits of uWebSockets.js's own parser that docs/operations.md states.
import t from 'tap';
import { call } from '../helpers/http.js';
import { RawClient, rawRequest } from '../helpers/raw-http.js';
import { writerIdle } from '../helpers/test-hooks.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t, { FLAGWIRE_TEST_HOOKS: '1' });
const patchPath = `/api/v1/flags/${world.ids.flag}`;
const auth = ['Authorization', `Bearer ${world.secrets.write}`] as const;
const json = ['Content-Type', 'application/json'] as const;
const host = ['Host', '127.0.0.1'] as const;

async function send(bytes: Buffer, timeoutMs = 60_000) {
  const client = new RawClient(server.port);
  try {
    return await client.request(bytes, { timeoutMs });
  } finally {
    client.close();
  }
}

async function framingRefused(): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  return Number(/^flagwire_http_framing_refused_total (\d+)$/m.exec(text)?.[1] ?? NaN);
}

const body = '{"enabled":false}';
const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;

const refusedCases: {
  name: string;
  method: string;
  path: string;
  headers: (readonly [string, string])[];
  body?: string;
  detail: RegExp;
}[] = [
  {
    name: 'two Content-Length headers with different values',
    method: 'PATCH',
    path: patchPath,
    headers: [host, auth, json, ['Content-Length', String(body.length)], ['Content-Length', '2']],
    body,
    detail: /several Content-Length headers with different values/,
  },
  ...['xchunked', 'chunked, identity', 'gzip, chunked', 'identity'].map((te) => ({
    name: `Transfer-Encoding: ${te}`,
    method: 'PATCH',
    path: patchPath,
    headers: [host, auth, json, ['Transfer-Encoding', te] as const],
    body: chunked,
    detail: /Transfer-Encoding is not supported/,
  })),
  {
    name: 'two Transfer-Encoding headers',
    method: 'PATCH',
    path: patchPath,
    headers: [host, auth, json, ['Transfer-Encoding', 'chunked'], ['Transfer-Encoding', 'chunked']],
    body: chunked,
    detail: /Transfer-Encoding is not supported/,
  },
  {
    name: 'a POST creating a flag with conflicting lengths',
    method: 'POST',
    path: '/api/v1/flags',
    headers: [host, auth, json, ['Content-Length', '14'], ['Content-Length', '15']],
    body: '{"name":"smug"}',
    detail: /Content-Length/,
  },
  {
    name: 'an OFREP POST (credential-free) with an odd Transfer-Encoding',
    method: 'POST',
    path: '/ofrep/v1/evaluate/flags',
    headers: [host, json, ['X-Flagwire-Project', world.ids.single], ['Transfer-Encoding', 'xchunked']],
    body: '2\r\n{}\r\n0\r\n\r\n',
    detail: /Transfer-Encoding/,
  },
  {
    name: 'an evaluation GET with conflicting lengths',
    method: 'GET',
    path: `/v1/flags/${world.ids.flag}?targetingKey=u`,
    headers: [host, ['Content-Length', '0'], ['Content-Length', '1']],
    body: 'x',
    detail: /Content-Length/,
  },
];

t.test('conflicting or unsupported framing: 400 envelope, connection closed, nothing written', async (t) => {
  const before = await framingRefused();
  for (const c of refusedCases) {
    const snapshot = world.snapshot();
    const reply = await send(rawRequest(c.method, c.path, c.headers, c.body));
    t.equal(reply.status, 400, `${c.name}: 400`);
    t.ok(reply.closed, `${c.name}: the connection is closed`);
    const envelope = JSON.parse(reply.body.toString()) as { error: string; detail: string; docs: string };
    t.equal(envelope.error, 'Invalid request', `${c.name}: the spec's title`);
    t.match(envelope.detail, c.detail, `${c.name}: the detail says what is wrong`);
    t.match(envelope.docs, /#invalid-request$/, `${c.name}: the docs anchor`);
    await writerIdle(server);
    t.equal(world.snapshot(), snapshot, `${c.name}: nothing changed`);
  }
  t.equal(await framingRefused(), before + refusedCases.length, 'each refusal is counted in /metrics');
});

t.test('a request smuggled behind "Transfer-Encoding: chunked, identity" is never processed', async (t) => {
  // A proxy that honours only the last coding (identity) would forward the whole body as one request;
  // uWS would have framed the chunked part and then run the PATCH hidden after it.
  const hidden = rawRequest('PATCH', patchPath, [host, auth, json, ['Content-Length', '16']], '{"enabled":true}');
  const smuggle = rawRequest(
    'PATCH',
    patchPath,
    [host, auth, json, ['Transfer-Encoding', 'chunked, identity']],
    Buffer.concat([Buffer.from(`0\r\n\r\n`), hidden]),
  );
  const snapshot = world.snapshot();
  const reply = await send(smuggle);
  t.equal(reply.status, 400);
  t.ok(reply.closed);
  await writerIdle(server);
  t.equal(world.snapshot(), snapshot, 'neither the outer nor the hidden PATCH was applied');
});

t.test('well-framed requests still work', async (t) => {
  const same = await send(
    rawRequest(
      'PATCH',
      patchPath,
      [host, auth, json, ['Content-Length', String(body.length)], ['Content-Length', String(body.length)]],
      body,
    ),
  );
  t.equal(same.status, 200, 'a repeated Content-Length with the same value is one length (RFC 9112 §6.3)');
  const upper = await send(rawRequest('PATCH', patchPath, [host, auth, json, ['Transfer-Encoding', 'Chunked']], chunked));
  t.equal(upper.status, 200, 'the coding name is case-insensitive');
  t.equal(JSON.parse(upper.body.toString()).changed, false, 'and the body was read whole');
  const get = await call(server.baseUrl, 'GET', `/v1/flags/${world.ids.flag}?targetingKey=u`);
  t.equal(get.status, 200);
});

// What uws-pack 20.0.8's parser does before Flagwire sees a request (docs/operations.md: "HTTP framing"). These
// are checked so that the docs stay true: a uWS build that changes any of them fails here.
t.test('the parser limits the docs state', async (t) => {
  const http10 = await send(Buffer.from(`GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n`));
  t.equal(http10.status, 505, 'HTTP/1.0: 505 from uWS');
  t.ok(http10.closed);
  const tls = await send(Buffer.from('160301020001000100030300', 'hex'));
  t.equal(tls.status, 505, 'a TLS ClientHello: 505 from uWS');
  const h2 = await send(Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'));
  t.equal(h2.status, 505, 'the HTTP/2 preface: 505 from uWS');
  const extension = await send(
    rawRequest(
      'PATCH',
      patchPath,
      [host, auth, json, ['Transfer-Encoding', 'chunked']],
      `${body.length.toString(16)};note=1\r\n${body}\r\n0\r\n\r\n`,
    ),
  );
  t.equal(extension.status, 400, 'a chunk extension: 400 from uWS');
  t.ok(extension.closed);
  const both = await send(
    rawRequest('PATCH', patchPath, [host, auth, json, ['Transfer-Encoding', 'chunked'], ['Content-Length', '5']], chunked),
  );
  t.equal(both.status, 400, 'Transfer-Encoding with Content-Length: 400 from uWS');
  const noHost = new RawClient(server.port);
  const start = performance.now();
  const reply = await noHost.request(Buffer.from('GET /health HTTP/1.1\r\n\r\n'), { timeoutMs: 60_000 }).catch((err: Error) => err);
  noHost.close();
  t.ok(!(reply instanceof Error) && reply.status === 0 && reply.closed, 'HTTP/1.1 without Host: no answer, closed by the idle timeout');
  // uSockets rounds a timeout up to its 4 s tick and fires on a tick: 10 s closes after 8 to 12 s.
  const waited = performance.now() - start;
  t.ok(waited >= 7_900, `after the idle timeout (10 s on a 4 s tick: 8-12 s), not at once: ${Math.round(waited)} ms`);
});

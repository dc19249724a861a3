// spec: Errors, 413: a Management API body over 1 MiB is refused, sent with a Content-Length or chunked
// without one (the server stops reading and closes), and nothing changes; the server goes on serving.
// A refused body of a declared length up to kDrainBytes is drained, so a client still sending it reads
// its answer whole and may go on using the connection (docs/decisions.md: A refused body is drained).
// (Moved from flags-write.test.ts, whose subject is what a flag write does.)
import net from 'node:net';
import { once } from 'node:events';
import t, { type Test } from 'tap';
import { kDrainBytes, kMaxBodyBytes } from '../../src/http/body.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { rawRequest } from '../helpers/raw-http.js';
import { refusedRequest } from '../helpers/refused.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const post = (token: string, body: unknown) => call(server.baseUrl, 'POST', '/api/v1/flags', { token, body });

/** Sends a request that must be refused and checks that no record changed. */
const refused = (t: Test, status: number, request: () => Promise<{ status: number; json: any }>) =>
  refusedRequest(t, world, status, request);

/** A connection and everything it has received; `closed` once the server ends it, `failure` on a socket error. */
async function rawConnection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const conn = { socket, received: Buffer.alloc(0), closed: false, failure: null as Error | null };
  socket.on('data', (d: Buffer) => (conn.received = Buffer.concat([conn.received, d])));
  socket.on('error', (err) => (conn.failure = err));
  socket.on('close', () => (conn.closed = true));
  return conn;
}

/** A POST to /api/v1/flags with the write token, framed by `framing` (its Content-Length or Transfer-Encoding). */
const flagPost = (framing: readonly [string, string], body?: Buffer) =>
  rawRequest(
    'POST',
    '/api/v1/flags',
    [['Host', '127.0.0.1'], ['Authorization', `Bearer ${world.secrets.write}`], ['Content-Type', 'application/json'], framing],
    body,
  );

/** Waits until the server closes `conn`, having sent only a request's head, then checks its answer: `status`, `Connection: close`. */
async function answeredAndClosed(t: Test, conn: Awaited<ReturnType<typeof rawConnection>>, status: number) {
  await pollUntil(
    'the close',
    async () => conn.closed,
    (closed) => closed,
  );
  t.equal(conn.failure, null, 'no socket error: nothing of the body was sent');
  const text = conn.received.toString('latin1');
  t.match(text, new RegExp(`^HTTP/1\\.1 ${status} `));
  t.match(text, /\r\nconnection: close\r\n/i);
}

/** The status lines received so far (an answer's body, JSON here, runs straight into the next one's). */
const responses = (bytes: Buffer) => bytes.toString('latin1').match(/HTTP\/1\.1 \d{3} /g) ?? [];

t.test('413 for a body over 1 MiB, and nothing changes', async (t) => {
  const big = JSON.stringify({ name: 'big', description: 'x'.repeat(1024 * 1024) });
  const json = await refused(t, 413, () => call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.write, raw: big }));
  t.equal(json.error, 'Request body too large');
  const ok = await post(world.secrets.write, { name: 'after-413' });
  t.equal(ok.status, 201, 'the server keeps serving');
});

t.test('413 for a chunked body over 1 MiB without Content-Length: the server stops reading and closes', async (t) => {
  const before = world.snapshot();
  const conn = await rawConnection(server.port);
  conn.socket.write(flagPost(['Transfer-Encoding', 'chunked']));
  // Only the byte counter can stop this body: there is no Content-Length to refuse it by, and the body
  // never ends (no last chunk). The client sends just past 1 MiB and then waits: bytes still unread on
  // the server when it closes would turn its FIN into a reset, which can discard the answer unread.
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
  let sent = 0;
  while (sent <= 1024 * 1024) {
    if (!conn.socket.write(frame)) await once(conn.socket, 'drain');
    sent += chunk.length;
  }
  await pollUntil(
    'the close',
    async () => conn.closed,
    (closed) => closed,
  );
  t.equal(conn.failure, null, 'no socket error');
  t.ok(conn.socket.readableEnded, 'the server closed the connection, with the body unfinished');
  const text = conn.received.toString('latin1');
  t.match(text, /^HTTP\/1\.1 413 /);
  t.match(text, /\r\nconnection: close\r\n/i);
  const envelope = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
  t.same(Object.keys(envelope), ['error', 'detail', 'docs']);
  t.equal(envelope.error, 'Request body too large');
  t.match(envelope.docs, /#payload-too-large$/);
  t.equal(world.snapshot(), before, 'nothing changed');
  t.equal((await post(world.secrets.write, { name: 'after-chunked-413' })).status, 201, 'the server keeps serving');
});

t.test('a body declared over 1 MiB and sent whole: its 413 read whole, then the same connection serves on', async (t) => {
  const before = world.snapshot();
  const conn = await rawConnection(server.port);
  const body = Buffer.alloc(kMaxBodyBytes + 1, 'x');
  // Written at once: the answer is on its way while most of the body is still in the client's buffers.
  conn.socket.write(flagPost(['Content-Length', String(body.length)], body));
  await pollUntil(
    'the 413',
    async () => conn.received,
    (received) => responses(received).length === 1 && received.includes('}'),
  );
  const text = conn.received.toString('latin1');
  t.match(text, /^HTTP\/1\.1 413 /);
  t.notMatch(text, /\r\nconnection: close\r\n/i, 'the connection is kept');
  t.equal(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error, 'Request body too large');
  // The next request on the same connection: the server read the refused body to its declared end.
  const next = Buffer.from(JSON.stringify({ name: 'after-drained-413' }));
  conn.socket.write(flagPost(['Content-Length', String(next.length)], next));
  await pollUntil(
    'the second answer',
    async () => responses(conn.received).length,
    (n) => n === 2,
  );
  t.match(responses(conn.received)[1], /^HTTP\/1\.1 201 /, 'the second request, on the same connection, is served');
  t.equal(conn.failure, null, 'no socket error');
  t.equal(conn.closed, false, 'still open');
  conn.socket.destroy();
  const second = conn.received.toString('utf8');
  t.match(JSON.parse(second.slice(second.lastIndexOf('\r\n\r\n') + 4)), { name: 'after-drained-413' }, 'the flag of the second request');
  t.not(world.snapshot(), before, 'the second request wrote');
});

t.test('a body declared over the drain bound: 413, and the server closes without reading it', async (t) => {
  const before = world.snapshot();
  const conn = await rawConnection(server.port);
  conn.socket.write(flagPost(['Content-Length', String(kDrainBytes + 1)]));
  await answeredAndClosed(t, conn, 413);
  t.equal(world.snapshot(), before, 'nothing changed');
});

/**
 * Requests answered from their headers, before any of their body is read: the Management API's 401 (a
 * token it does not know), the 404 of a path no route has, the console's refusal of a change without its
 * Origin. One rule decides for all of them (closesConnection, src/http/http.ts).
 */
const kAnsweredFromHeaders: readonly { what: string; path: string; headers: [string, string][]; status: number }[] = [
  { what: 'a 401 for an unknown token', path: '/api/v1/flags', headers: [['Authorization', 'Bearer fw_not_a_token']], status: 401 },
  { what: 'a 404 for a path no route has', path: '/no/such/route', headers: [], status: 404 },
  { what: "the console's 403 for a change without its Origin", path: '/console/api/flags', headers: [], status: 403 },
];

for (const { what, path, headers, status } of kAnsweredFromHeaders) {
  const request = (framing: [string, string], body?: Buffer) =>
    rawRequest('POST', path, [['Host', '127.0.0.1'], ['Content-Type', 'application/json'], ...headers, framing], body);

  t.test(`${what}, before its body: a body within the drain bound is drained, and the connection serves on`, async (t) => {
    const conn = await rawConnection(server.port);
    t.teardown(() => conn.socket.destroy());
    const body = Buffer.alloc(60_000, 'x');
    const next = Buffer.from(JSON.stringify({ name: `after-${status}-drained` }));
    // Written at once: the second request is answered only if the first body was read to its declared end.
    conn.socket.write(
      Buffer.concat([request(['Content-Length', String(body.length)], body), flagPost(['Content-Length', String(next.length)], next)]),
    );
    await pollUntil(
      'both answers',
      async () => [responses(conn.received).length, conn.closed] as const,
      ([answers, closed]) => closed || answers === 2,
    );
    t.match(
      responses(conn.received),
      [new RegExp(`^HTTP/1\\.1 ${status} `), /^HTTP\/1\.1 201 /],
      'the refusal, then the next request served',
    );
    t.notMatch(conn.received.toString('latin1'), /\r\nconnection: close\r\n/i, 'the connection is kept');
    t.equal(conn.closed, false, 'still open');
    t.equal(conn.failure, null, 'no socket error');
  });

  for (const framing of [
    ['Content-Length', String(kDrainBytes + 1)],
    ['Transfer-Encoding', 'chunked'],
  ] as [string, string][]) {
    t.test(`${what}, before its body (${framing.join(': ')}): the server closes without reading the body`, async (t) => {
      const before = world.snapshot();
      const conn = await rawConnection(server.port);
      t.teardown(() => conn.socket.destroy());
      // Only the head: a server that meant to drain the body would wait for it, and never close.
      conn.socket.write(request(framing));
      await answeredAndClosed(t, conn, status);
      t.equal(world.snapshot(), before, 'nothing changed');
    });
  }
}

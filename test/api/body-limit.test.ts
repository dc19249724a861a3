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
import { rawRequest } from '../helpers/raw-http.js';
import { refusedRequest } from '../helpers/refused.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const post = (token: string, body: unknown) => call(server.baseUrl, 'POST', '/api/v1/flags', { token, body });

/** Sends a request that must be refused and checks that no record changed. */
const refused = (t: Test, status: number, request: () => Promise<{ status: number; json: any }>) =>
  refusedRequest(t, world, status, request);

t.test('413 for a body over 1 MiB, and nothing changes', async (t) => {
  const big = JSON.stringify({ name: 'big', description: 'x'.repeat(1024 * 1024) });
  const json = await refused(t, 413, () => call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.write, raw: big }));
  t.equal(json.error, 'Request body too large');
  const ok = await post(world.secrets.write, { name: 'after-413' });
  t.equal(ok.status, 201, 'the server keeps serving');
});

t.test('413 for a chunked body over 1 MiB without Content-Length: the server stops reading and closes', async (t) => {
  const before = world.snapshot();
  const socket = net.connect(server.port, '127.0.0.1');
  await once(socket, 'connect');
  let received = Buffer.alloc(0);
  socket.on('data', (d: Buffer) => (received = Buffer.concat([received, d])));
  let failure: Error | null = null;
  socket.on('error', (err) => (failure = err));
  const closing = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(
    rawRequest('POST', '/api/v1/flags', [
      ['Host', '127.0.0.1'],
      ['Authorization', `Bearer ${world.secrets.write}`],
      ['Content-Type', 'application/json'],
      ['Transfer-Encoding', 'chunked'],
    ]),
  );
  // Only the byte counter can stop this body: there is no Content-Length to refuse it by, and the body
  // never ends (no last chunk). The client sends just past 1 MiB and then waits: bytes still unread on
  // the server when it closes would turn its FIN into a reset, which can discard the answer unread.
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
  let sent = 0;
  while (sent <= 1024 * 1024) {
    if (!socket.write(frame)) await new Promise((resolve) => socket.once('drain', resolve));
    sent += chunk.length;
  }
  const timeout = setTimeout(() => socket.destroy(new Error('no answer and no close within 60 s')), 60_000);
  await closing;
  clearTimeout(timeout);
  t.equal(failure, null, 'no socket error');
  t.ok(socket.readableEnded, 'the server closed the connection, with the body unfinished');
  const text = received.toString('latin1');
  t.match(text, /^HTTP\/1\.1 413 /);
  t.match(text, /\r\nconnection: close\r\n/i);
  const envelope = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
  t.same(Object.keys(envelope), ['error', 'detail', 'docs']);
  t.equal(envelope.error, 'Request body too large');
  t.match(envelope.docs, /#payload-too-large$/);
  t.equal(world.snapshot(), before, 'nothing changed');
  t.equal((await post(world.secrets.write, { name: 'after-chunked-413' })).status, 201, 'the server keeps serving');
});

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

/** Waits (a minute at most: it only catches a hang) until `done` holds. */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The status lines received so far (an answer's body, JSON here, runs straight into the next one's). */
const responses = (bytes: Buffer) => bytes.toString('latin1').match(/HTTP\/1\.1 \d{3} /g) ?? [];

t.test('a body declared over 1 MiB and sent whole: its 413 read whole, then the same connection serves on', async (t) => {
  const before = world.snapshot();
  const conn = await rawConnection(server.port);
  const body = Buffer.alloc(kMaxBodyBytes + 1, 'x');
  const head = (length: number) =>
    [
      ['Host', '127.0.0.1'],
      ['Authorization', `Bearer ${world.secrets.write}`],
      ['Content-Type', 'application/json'],
      ['Content-Length', String(length)],
    ] as const;
  // Written at once: the answer is on its way while most of the body is still in the client's buffers.
  conn.socket.write(Buffer.concat([rawRequest('POST', '/api/v1/flags', head(body.length)), body]));
  await until(() => responses(conn.received).length === 1 && conn.received.includes('}'), 'the 413');
  const text = conn.received.toString('latin1');
  t.match(text, /^HTTP\/1\.1 413 /);
  t.notMatch(text, /\r\nconnection: close\r\n/i, 'the connection is kept');
  t.equal(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error, 'Request body too large');
  // The next request on the same connection: the server read the refused body to its declared end.
  const next = Buffer.from(JSON.stringify({ name: 'after-drained-413' }));
  conn.socket.write(Buffer.concat([rawRequest('POST', '/api/v1/flags', head(next.length)), next]));
  await until(() => responses(conn.received).length === 2, 'the second answer');
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
  conn.socket.write(
    rawRequest('POST', '/api/v1/flags', [
      ['Host', '127.0.0.1'],
      ['Authorization', `Bearer ${world.secrets.write}`],
      ['Content-Type', 'application/json'],
      ['Content-Length', String(kDrainBytes + 1)],
    ]),
  );
  await until(() => conn.closed, 'the close');
  t.equal(conn.failure, null, 'no socket error: nothing of the body was sent');
  const text = conn.received.toString('latin1');
  t.match(text, /^HTTP\/1\.1 413 /);
  t.match(text, /\r\nconnection: close\r\n/i);
  t.equal(world.snapshot(), before, 'nothing changed');
});

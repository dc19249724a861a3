// In-process: the gRPC server's own accounting (src/capability/grpc-server.ts), read from the server as
// raw HTTP/2 clients that do not read hold its calls: every call counted against the cap, a Buffer queued
// on many calls held once, nothing held once the calls' connection is gone, and past the bound the
// longest-waiting calls cut.
import http2 from 'node:http2';
import t from 'tap';
import { frameMessage } from '../../src/capability/grpc-frame.js';
import { type GrpcCall, GrpcServer, GrpcStatus } from '../../src/capability/grpc-server.js';
import { pollUntil } from '../helpers/poll.js';

const kPath = '/test.Service/Stream';
/** 1 MiB: far more than HTTP/2's flow-control window, so a reader that does not read holds the write. */
const shared = frameMessage(Buffer.alloc(1024 * 1024, 1));

function serve(maxCalls: number, maxHeldBytes: number, handler: (call: GrpcCall) => void): Promise<{ server: GrpcServer; port: number }> {
  const server = new GrpcServer({
    maxCalls,
    busyMessage: 'busy',
    maxHeldBytes,
    port: { setting: 'PORT', whenTaken: 'choose another' },
    onError: (err) => t.error(err),
  });
  server.handle(kPath, handler);
  return server.listen('127.0.0.1', 0).then((port) => ({ server, port }));
}

/** A call's RST_STREAM code once it closed; null while open. */
const closedWith = new WeakMap<http2.ClientHttp2Stream, number>();
const closed = (call: http2.ClientHttp2Stream): number | null => closedWith.get(call) ?? null;

/** `count` calls on one connection that read nothing; resolves with them (and the session) once each was answered headers. */
async function unread(port: number, count: number): Promise<{ session: http2.ClientHttp2Session; calls: http2.ClientHttp2Stream[] }> {
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on('error', () => undefined);
  const calls = Array.from({ length: count }, () => {
    const request = session.request({ ':method': 'POST', ':path': kPath, 'content-type': 'application/grpc', te: 'trailers' });
    request.on('error', () => undefined);
    request.end(Buffer.alloc(5));
    request.pause();
    request.once('close', () => closedWith.set(request, request.rstCode ?? 0));
    return request;
  });
  await Promise.all(calls.map((c) => new Promise((resolve) => c.once('response', resolve))));
  return { session, calls };
}

t.test('a Buffer queued on thirty calls is held once, and nothing is held once their connection is gone', async (t) => {
  const { server, port } = await serve(100, 64 * 1024 * 1024, (call) => call.write(shared, () => undefined));
  t.teardown(() => server.close());
  const { session } = await unread(port, 30);
  t.equal(server.calls, 30, 'thirty calls open');
  t.equal(server.heldBytes, shared.length, 'one Buffer held, not thirty');
  session.destroy();
  await pollUntil(
    'the calls close',
    async () => [server.calls, server.heldBytes],
    ([calls]) => calls === 0,
  );
  t.equal(server.heldBytes, 0, 'nothing held');
});

t.test('unary calls count against the cap as streams do; one more is refused RESOURCE_EXHAUSTED', async (t) => {
  const { server, port } = await serve(3, 64 * 1024 * 1024, (call) => call.reply(shared));
  t.teardown(() => server.close());
  const { session } = await unread(port, 3);
  t.teardown(() => session.destroy());
  t.equal(server.calls, 3);
  const refused = session.request({ ':method': 'POST', ':path': kPath, 'content-type': 'application/grpc', te: 'trailers' });
  refused.end(Buffer.alloc(5));
  const headers = await new Promise<http2.IncomingHttpHeaders>((resolve) => refused.once('response', resolve));
  t.equal(headers['grpc-status'], String(GrpcStatus.RESOURCE_EXHAUSTED));
  t.equal(headers['grpc-message'], 'busy');
});

t.test('past the bound, the calls that have waited longest are cut until the held bytes are under it', async (t) => {
  let next = 0;
  // Each call is sent a Buffer of its own: three of them pass a bound of 2.5 MiB.
  const { server, port } = await serve(100, 2.5 * 1024 * 1024, (call) =>
    call.write(frameMessage(Buffer.alloc(1024 * 1024, next++)), () => undefined),
  );
  t.teardown(() => server.close());
  const first = await unread(port, 2);
  t.teardown(() => first.session.destroy());
  t.equal(server.heldBytes, 2 * shared.length);
  const later = await unread(port, 1);
  t.teardown(() => later.session.destroy());
  await pollUntil(
    'the longest waiting call is cut',
    async () => closed(first.calls[0]!),
    (code) => code !== null,
  );
  t.equal(closed(first.calls[0]!), http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
  t.equal(server.heldBytes, 2 * shared.length, 'under the bound again');
  t.equal(closed(first.calls[1]!), null, 'the others are not cut');
  t.equal(closed(later.calls[0]!), null);
});

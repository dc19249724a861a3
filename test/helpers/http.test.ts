// In-process: the test helpers' requests (http.ts) over a kept-alive connection that the server closes as
// the agent hands it out (an idle timeout running out just then): nothing reached the server, so both
// `call` and `keptAliveCall` send the request once more on a new connection; a second close is an error.
// The server is a plain socket server that answers the first request of each connection and closes the
// connection when a second one comes, unanswered.
import { createServer, type Socket } from 'node:net';
import t from 'tap';
import { call, keptAliveCall } from './http.js';

/** A server whose connections each answer one request; `answered` counts them, `cut` the requests closed unanswered. */
async function oneRequestPerConnection(closeEvery: boolean) {
  const counts = { answered: 0, cut: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    let requests = 0;
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      for (let end = head.indexOf('\r\n\r\n'); end !== -1; end = head.indexOf('\r\n\r\n')) {
        head = head.slice(end + 4);
        requests++;
        if (requests > 1 || closeEvery) {
          counts.cut++;
          socket.destroy();
          return;
        }
        counts.answered++;
        socket.write(
          'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nConnection: keep-alive\r\n\r\n{"ok":true}',
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { baseUrl: `http://127.0.0.1:${port}`, counts };
}

for (const [name, send] of [
  ['keptAliveCall', keptAliveCall],
  ['call', call],
] as const) {
  t.test(`${name}: a kept-alive connection closed as it is taken is replaced, and the request sent once more`, async (t) => {
    const { baseUrl, counts } = await oneRequestPerConnection(false);
    const first = await send(baseUrl, 'GET', '/one');
    t.equal(first.status, 200, 'the first request is answered');
    // The agent hands out the first connection again; the server closes it on this request, unanswered.
    const second = await send(baseUrl, 'GET', '/two');
    t.equal(second.status, 200, 'the second is answered, on a new connection');
    t.strictSame(second.json, { ok: true });
    t.strictSame(counts, { answered: 2, cut: 1 }, 'one request cut, sent again once');
  });
}

t.test('a new connection closed without an answer is an error: only a reused one is retried', async (t) => {
  const { baseUrl, counts } = await oneRequestPerConnection(true);
  await t.rejects(keptAliveCall(baseUrl, 'GET', '/one'), { code: 'ECONNRESET' }, 'keptAliveCall rejects with the error');
  await t.rejects(
    call(baseUrl, 'GET', '/one'),
    { name: 'TypeError', message: 'fetch failed', cause: { code: 'ECONNRESET' } },
    'call as fetch does',
  );
  t.strictSame(counts, { answered: 0, cut: 2 }, 'each sent once');
});

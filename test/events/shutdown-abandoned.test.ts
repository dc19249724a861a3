// Batches whose clients went away, at a node's shutdown (docs/events.md): a client that sends a whole
// batch and closes its connection before the answer leaves no request in flight for the shutdown's
// drain to wait on, but its batch is already with the events thread. The thread finishes counting
// what it holds before it closes its files: no batch fails on a closed database (logged as a fault of
// ours), and the node exits cleanly.
import { once } from 'node:events';
import { connect } from 'node:net';
import t from 'tap';
import { startExperimentServer } from '../helpers/experiment-server.js';

/** One whole POST of a batch of `events` fresh subjects' outcomes, its connection destroyed once written. */
async function sendAndAbandon(port: number, clientKey: string, n: number, events: number): Promise<void> {
  const batch = Array.from({ length: events }, (_, i) => ({
    kind: 'track',
    key: 'purchase',
    targetingKey: `user-${n}-${i}`,
    value: i,
    timestamp: Date.now(),
  }));
  const body = JSON.stringify({ events: batch });
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const head =
    'POST /ofrep/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
    `Authorization: Bearer ${clientKey}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  await new Promise<void>((resolve, reject) => socket.write(head + body, (err) => (err ? reject(err) : resolve())));
  socket.destroy();
}

t.test('a node shut down with abandoned batches in its events thread closes cleanly', async (t) => {
  // A minute's drain budget (its deadline is a second more): at load 20 the thread's finishing 24,000
  // events outlasted the default deadline (4.5 s), which exits 1; what this proves is the order, not the time.
  const { server, clientKey } = await startExperimentServer(t, { FLAGWIRE_SHUTDOWN_DRAIN_MS: '60000' });
  // Many batches, each sent whole and abandoned at once, then SIGTERM: some are still being counted
  // when the shutdown, which has no request in flight to wait for, closes the events thread.
  await Promise.all(Array.from({ length: 24 }, (_, n) => sendAndAbandon(server.port, clientKey, n, 1000)));
  const code = await server.stop();
  if (!server.proc.stderr!.closed) await once(server.proc.stderr!, 'close');
  t.equal(code, 0, `the node exited cleanly\n${server.logs()}`);
  const failed = server
    .logs()
    .split('\n')
    .filter((line) => line.includes('events batch failed') || line.includes('Database is closed'));
  t.same(failed, [], 'no batch failed on a closed database');
});

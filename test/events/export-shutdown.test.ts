// An export running when its node shuts down (docs/events.md: Raw events), against a real embedded node
// sent SIGTERM mid-export: the export holds the shutdown's drain of in-flight requests, so one whose
// client reads on ends whole, every event once, before the node exits; one whose client stops reading
// past the drain bound is cut, its connection closed, which its client sees as an error, never as a body
// that ends as if whole; a Parquet export cut so leaves no scratch folder in the data dir.
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { nodeWithRawEvents, scratchFolders } from '../helpers/raw-events-node.js';
import type { TestServer } from '../helpers/server.js';
import { until } from '../helpers/smtp.js';

/**
 * A node keeping `events` raw events sent SIGTERM once its export's first chunk is read, its client
 * reading no more for now; its drain budget `drainMs` (FLAGWIRE_SHUTDOWN_DRAIN_MS).
 */
async function sigtermMidExport(t: Test, events: number, drainMs: number, format: 'jsonl' | 'parquet' = 'jsonl', random = false) {
  const { server, reader } = await nodeWithRawEvents(t, events, random, { FLAGWIRE_SHUTDOWN_DRAIN_MS: String(drainMs) });
  const body = await reader(format);
  const first = await body.read();
  t.notOk(first.done, 'the export started');
  server.proc.kill('SIGTERM');
  return { server, body, first };
}

/**
 * The node's exit code once it exits of itself, after the SIGTERM sigtermMidExport sent: never another
 * signal (server.stop() sends one to a node still running), as a second SIGTERM ends a node mid-shutdown
 * at once, killed by it (no exit code).
 */
async function exitCode(server: TestServer): Promise<number | null> {
  const { proc } = server;
  if (proc.exitCode === null && proc.signalCode === null) await once(proc, 'exit');
  return proc.exitCode;
}

/** Once all the node printed is read: its exit may come before the last of its stderr. */
async function logsEnded(server: TestServer): Promise<void> {
  if (!server.proc.stderr!.closed) await once(server.proc.stderr!, 'close');
}

/** What a reader reads to its end: the bytes, or the error it ends with. */
async function readToEnd(reader: ReadableStreamDefaultReader<Uint8Array>, first: Uint8Array): Promise<{ text: string; error: unknown }> {
  const chunks = [Buffer.from(first)];
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(Buffer.from(next.value));
    return { text: Buffer.concat(chunks).toString(), error: null };
  } catch (error) {
    return { text: Buffer.concat(chunks).toString(), error };
  }
}

t.test('SIGTERM mid-export, its client reading on: the export ends whole, then the node exits 0', async (t) => {
  const events = 6000;
  // Its client pauses: the node is held writing the rest when the signal comes, and drains. A drain
  // budget of a minute, which only a hang outlasts: at load, 8 MB took longer than the default 3.5 s.
  const { server, body, first } = await sigtermMidExport(t, events, 60_000);
  await until('the node shutting down', () => /shutting down/.test(server.logs()));
  const read = await readToEnd(body, first.value!);
  t.equal(read.error, null, 'read to its end');
  const lines = read.text.split('\n');
  t.equal(lines.pop(), '', 'the last line ends');
  t.strictSame(
    lines.map((line) => JSON.parse(line).value),
    Array.from({ length: events }, (_, i) => i),
    'every event, once, in order',
  );
  t.equal(await exitCode(server), 0, 'the node exits 0');
  await logsEnded(server);
  t.notMatch(server.logs(), /drain budget ended with requests in flight/, 'the export ended within the drain');
});

t.test('SIGTERM mid-export, its client not reading past the drain bound: the export is cut, which its client sees', async (t) => {
  // Far more than the sockets' buffers hold: the node cannot have written it all when the signal comes.
  const events = 12_000;
  const { server, body, first } = await sigtermMidExport(t, events, 1000);
  t.equal(await exitCode(server), 0, 'the node exits 0, once its drain bound passed');
  await logsEnded(server);
  t.match(server.logs(), /drain budget ended with requests in flight/, 'the export held the drain to its bound');
  // Read only now: what the sockets held, then the cut.
  await sleep(100);
  const read = await readToEnd(body, first.value!);
  t.not(read.error, null, `the body ends in an error, never as if whole (${read.text.length} bytes read)`);
  t.ok(read.text.split('\n').length - 1 < events, 'not every event was sent');
});

t.test(
  'SIGTERM mid-Parquet export, its client not reading: the export is cut, and its scratch folder removed before the node exits',
  async (t) => {
    // Random details, which Parquet cannot compress: some 24 MB of file, far more than the sockets hold,
    // so the export is suspended mid-file, its scratch folder in the data dir, when the signal comes. What
    // removes it is a race (the export's own end once its connection is closed, or the node's close:
    // export-scratch-close.test.ts); that none is left is what this proves.
    const events = 18_000;
    const { server, body, first } = await sigtermMidExport(t, events, 1000, 'parquet', true);
    const folders = scratchFolders(server.dataDir);
    t.equal(folders.length, 1, 'the export writes in one scratch folder');
    t.match(folders[0], new RegExp(`^\\.export-${server.proc.pid}\\.[0-9]*-`), 'named for its process');
    t.equal(await exitCode(server), 0, 'the node exits 0, once its drain bound passed');
    await logsEnded(server);
    t.match(server.logs(), /drain budget ended with requests in flight/, 'the export was still running at the drain bound');
    t.strictSame(scratchFolders(server.dataDir), [], 'no scratch folder is left');
    const read = await readToEnd(body, first.value!);
    t.not(read.error, null, `the body ends in an error, never as if whole (${read.text.length} bytes read)`);
  },
);

// An export running when its node shuts down (docs/events.md: Raw events), against a real embedded node
// sent SIGTERM mid-export: the export holds the shutdown's drain of in-flight requests, so one whose
// client reads on ends whole, every event once, before the node exits; one whose client stops reading
// past the drain bound is cut, its connection closed, which its client sees as an error, never as a body
// that ends as if whole.
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { startExperimentServer, must } from '../helpers/experiment-server.js';
import { call } from '../helpers/http.js';
import type { TestServer } from '../helpers/server.js';
import { until } from '../helpers/smtp.js';

/** A node keeping `events` raw events of about 1.3 KB each (their details), sent 600 a batch. */
async function nodeWithRawEvents(t: Test, events: number) {
  const started = await startExperimentServer(t, { FLAGWIRE_LOG_LEVEL: 'info' });
  const { base, world, clientKey } = started;
  must(await call(base, 'PATCH', '/api/v1/events/settings', { token: world.secrets.write, body: { rawEventRetentionDays: 30 } }), 200);
  const details = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`field${i}`, 'x'.repeat(240)]));
  for (let sent = 0; sent < events; sent += 600) {
    const batch = Array.from({ length: Math.min(600, events - sent) }, (_, i) => ({
      kind: 'track',
      key: 'purchase',
      targetingKey: `user-${sent + i}`,
      value: sent + i,
      details,
      timestamp: Date.now(),
    }));
    must(await call(base, 'POST', '/ofrep/v1/events', { token: clientKey, body: { events: batch } }), 200);
  }
  const reader = async () => {
    const r = await fetch(`${base}/api/v1/events/export`, { headers: { authorization: `Bearer ${world.secrets.read}` } });
    t.equal(r.status, 200);
    return r.body!.getReader();
  };
  return { ...started, reader };
}

/** A node keeping `events` raw events sent SIGTERM once its export's first chunk is read, its client reading no more for now. */
async function sigtermMidExport(t: Test, events: number) {
  const { server, reader } = await nodeWithRawEvents(t, events);
  const body = await reader();
  const first = await body.read();
  t.notOk(first.done, 'the export started');
  server.proc.kill('SIGTERM');
  return { server, body, first };
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
  // Its client pauses: the node is held writing the rest when the signal comes, and drains.
  const { server, body, first } = await sigtermMidExport(t, events);
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
  t.equal(await server.stop(), 0, 'the node exits 0');
  await logsEnded(server);
  t.notMatch(server.logs(), /drain budget ended with requests in flight/, 'the export ended within the drain');
});

t.test('SIGTERM mid-export, its client not reading past the drain bound: the export is cut, which its client sees', async (t) => {
  // Far more than the sockets' buffers hold: the node cannot have written it all when the signal comes.
  const events = 12_000;
  const { server, body, first } = await sigtermMidExport(t, events);
  t.equal(await server.stop(), 0, 'the node exits 0, once its drain bound passed');
  await logsEnded(server);
  t.match(server.logs(), /drain budget ended with requests in flight/, 'the export held the drain to its bound');
  // Read only now: what the sockets held, then the cut.
  await sleep(100);
  const read = await readToEnd(body, first.value!);
  t.not(read.error, null, `the body ends in an error, never as if whole (${read.text.length} bytes read)`);
  t.ok(read.text.split('\n').length - 1 < events, 'not every event was sent');
});

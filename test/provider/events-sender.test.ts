// FlagwireEvents' sending (src/provider/events.ts) against a local HTTP server that answers as POST
// /ofrep/v1/events does, or fails as told: `await flush()` while a flush is under way still sends every
// event recorded before it; close() after a failed request tries again and delivers; close() against a
// server that never takes the events (failing, or never answering) gives up within its bound, counts
// what it drops in `dropped`, and says so to onError.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import t, { type Test } from 'tap';
import { FlagwireEvents } from '../../src/provider/events.js';

interface Batch {
  batchId: string;
  events: { targetingKey: string }[];
}

/**
 * A server that answers each request with `answer(n, batch, res)` (n counts requests from 1); `taken`
 * holds the batches it answered 200, as the real route counts them: once per batch id.
 */
async function eventsServer(t: Test, answer: (n: number, batch: Batch, res: ServerResponse, req: IncomingMessage) => boolean) {
  const taken = new Map<string, Batch>();
  let requests = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const batch = JSON.parse(Buffer.concat(chunks).toString()) as Batch;
      if (!answer(++requests, batch, res, req)) return;
      taken.set(batch.batchId, batch);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ accepted: batch.events.length, duplicates: 0, rejected: [] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const subjects = () => [...taken.values()].flatMap((b) => b.events.map((e) => e.targetingKey)).sort();
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, subjects, requests: () => requests };
}

// Only a hang (a close() that never settles) could take this long.
t.setTimeout(60_000);

const names = (from: number, count: number) => Array.from({ length: count }, (_, i) => `s${from + i}`);

t.test('await flush() while a flush is under way: every event recorded before it is sent', async (t) => {
  const server = await eventsServer(t, () => true);
  const events = new FlagwireEvents({
    url: server.url,
    clientKey: 'fwc_test',
    flushIntervalMs: 10_000,
    onError: (err) => t.fail(err.message),
  });
  t.teardown(() => events.close());
  // The 1,000th and 2,000th events each start a flush: the first is under way when the last flush is asked.
  for (let i = 0; i < 2500; i++) events.track('m', { targetingKey: `s${i}` });
  await events.flush();
  t.equal(server.subjects().length, 2500, 'all 2,500 sent when flush() settles');
  t.strictSame(server.subjects(), names(0, 2500).sort());
});

t.test('close() after a request that failed: tries again, and delivers everything', async (t) => {
  for (const [how, fail] of [
    ['connection dropped', (res: ServerResponse) => res.socket!.destroy()],
    ['503', (res: ServerResponse) => res.writeHead(503).end()],
  ] as const) {
    const ids: string[] = [];
    const server = await eventsServer(t, (n, batch, res) => {
      ids.push(batch.batchId);
      if (n > 1) return true;
      fail(res);
      return false;
    });
    const errors: string[] = [];
    const events = new FlagwireEvents({ url: server.url, clientKey: 'fwc_test', onError: (err) => errors.push(err.message) });
    for (let i = 0; i < 300; i++) events.track('m', { targetingKey: `s${i}` });
    await events.close();
    t.equal(server.subjects().length, 300, `${how}: all 300 delivered`);
    t.equal(events.dropped, 0, `${how}: none dropped`);
    t.equal(new Set(ids).size, 1, `${how}: sent again under its batch id`);
    t.ok(
      errors.every((e) => !e.includes('sent again later')),
      `${how}: onError never promises a later send after close: ${errors}`,
    );
  }
});

t.test('close() against a server that never takes them: dropped, counted, and said', async (t) => {
  const failing = await eventsServer(t, (_n, _batch, res) => {
    res.writeHead(503).end();
    return false;
  });
  // Accepts and never answers.
  const silent = await eventsServer(t, () => false);
  for (const [how, url] of [
    ['503 to every request', failing.url],
    ['never answering', silent.url],
  ] as const) {
    const errors: string[] = [];
    const events = new FlagwireEvents({ url, clientKey: 'fwc_test', closeTimeoutMs: 300, onError: (err) => errors.push(err.message) });
    for (let i = 0; i < 300; i++) events.track('m', { targetingKey: `s${i}` });
    await events.close();
    t.equal(events.dropped, 300, `${how}: the 300 counted as dropped`);
    t.match(errors.at(-1), /^300 event\(s\) were dropped: Flagwire did not take them before close\(\) gave up after 300 ms$/, how);
    t.ok(
      errors.every((e) => !e.includes('sent again later')),
      `${how}: onError never promises a later send: ${errors}`,
    );
  }
  t.ok(failing.requests() > 1, 'the failing server was asked again before close() gave up');
});

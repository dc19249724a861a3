// A JSON-lines export's pages (issue 96, item 8; docs/events.md: Raw events) are read and written as JSON
// lines on the events thread, the front end only sending them: against a real embedded node keeping raw
// events, a front end's events handle (in-process, on the node's data dir) gives, page by page, the bytes
// the export route sends and those the tally file's pages make, each page in an ArrayBuffer of its own
// (moved from the thread, never a slice of a shared pool); more than one page; and none where the data
// dir has no tally file.
import pino from 'pino';
import t from 'tap';
import { Clock } from '../../src/clock.js';
import { EventCounter } from '../../src/events/event-counter.js';
import { jsonLines, localJsonLines } from '../../src/events/export.js';
import { TallyFile } from '../../src/events/tally/tally-file.js';
import { must, startExperimentServer } from '../helpers/experiment-server.js';
import { call } from '../helpers/http.js';
import { tempDataDir } from '../helpers/server.js';

const { server, world, base, clientKey } = await startExperimentServer(t, { FLAGWIRE_HTTP_THREADS: '1' });
const { secrets } = world;
must(await call(base, 'PATCH', '/api/v1/events/settings', { token: secrets.write, body: { rawEventRetentionDays: 30 } }), 200);
const now = Date.now();
// Past one page of 100 events.
const events = Array.from({ length: 250 }, (_, i) => ({
  kind: 'track',
  key: 'purchase',
  targetingKey: `user-${i}`,
  value: i,
  timestamp: now,
  details: { note: `é ${i}` },
}));
must(await call(base, 'POST', '/ofrep/v1/events', { token: clientKey, body: { events } }), 200);

const config = (dataDir: string) => ({
  dataDir,
  databaseUrl: null,
  eventsPerSecond: 1_000_000,
  httpThreads: 1,
  eventSubjectsPerEnvironment: 1_000_000,
  rawEventBytesPerProject: 1_000_000_000,
});
const scope = { projectId: world.ids.single, environment: '' };
const range = { from: 0, to: Date.now() + 1, now: Date.now() };

async function chunksOf(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const all: Uint8Array[] = [];
  for await (const chunk of chunks) all.push(chunk);
  return all;
}

t.test("the events thread's pages: the route's bytes and the tally file's, each in a buffer of its own", async (t) => {
  const counter = new EventCounter(config(server.dataDir), pino({ level: 'silent' }), Clock.create());
  t.teardown(() => counter.close());
  const pages = await chunksOf(jsonLines(counter.exportPages(), scope, range));
  t.ok(pages.length > 1, `more than one page (${pages.length})`);
  for (const page of pages) t.ok(page.byteOffset === 0 && page.byteLength === page.buffer.byteLength, 'a buffer of its own');
  const file = TallyFile.open(server.dataDir);
  t.teardown(() => file.close());
  const local = await chunksOf(jsonLines(localJsonLines(file), scope, range));
  t.strictSame(Buffer.concat(pages), Buffer.concat(local), "the tally file's pages, written alike");
  const lines = Buffer.concat(pages).toString().trimEnd().split('\n');
  t.equal(lines.length, events.length, 'every event kept');
  t.equal(JSON.parse(lines.at(-1)!).details.note, 'é 249', 'in the order counted, in UTF-8');
  const route = await fetch(`${base}/api/v1/events/export`, { headers: { authorization: `Bearer ${secrets.read}` } });
  t.equal(route.status, 200);
  t.strictSame(Buffer.from(await route.arrayBuffer()), Buffer.concat(pages), 'what the route sends');
});

t.test('no tally file: no pages, and none made', async (t) => {
  const dataDir = tempDataDir();
  const counter = new EventCounter(config(dataDir), pino({ level: 'silent' }), Clock.create());
  t.teardown(() => counter.close());
  t.equal(counter.exportPages(), null);
  t.equal(TallyFile.exists(dataDir), false);
});

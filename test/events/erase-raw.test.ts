// A subject's raw events erased in bounded transactions (docs/events.md: Erasing a subject), in both
// tallies: the tally file and PostgreSQL's. Over many subjects, one with thousands of raw events: each
// step removes at most its bound, only the erased subject's, only those stored before the erasure began
// (a later subject of the same key keeps its own), the project's raw bytes follow, and every other
// subject's raw events stay, in their order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { kEraseRawPerTxn, TallyWrites } from '../../src/events/tally-writes.js';
import { type CountedEvent, eraseSubject, millionths, tallyBatch } from '../../src/events/tally.js';
import { PgTally } from '../../src/events/tally/pg-tally.js';
import { type RawCursor, type RawEvent, rawEventBytes, type TallyScope } from '../../src/events/tally/tally-file.js';
import { sharedPostgres } from '../helpers/postgres.js';

const scope: TallyScope = { projectId: 'prj_1', environment: 'production' };
const keepMs = 30 * 24 * 3_600_000;
const now = Date.now();

type Sent = Omit<RawEvent, 'storedAt'>;
const track = (subject: string, n: number): Sent => ({
  kind: 'track',
  key: 'purchase',
  targetingKey: subject,
  variant: null,
  value: n,
  details: null,
  timestamp: now - 1000,
});

/** Counts `events` and keeps them raw, in one transaction. */
async function keep(writes: TallyWrites, events: readonly Sent[]): Promise<void> {
  const counted = events.map(
    (e): CountedEvent => ({ kind: 'track', subject: e.targetingKey, metric: e.key, value: millionths(e.value!), at: e.timestamp }),
  );
  const subjects = [...new Set(events.map((e) => e.targetingKey))];
  const metrics = [...new Set(events.map((e) => e.key))];
  await writes.count(scope, { batchId: null, subjects, metrics, keepsRaw: { scopes: [scope], now } }, (txn) => {
    tallyBatch(txn, scope, counted, new Set());
    txn.putRawEvents(scope, events, now, keepMs);
  });
}

/** Every raw event of the scope, in the order kept, read a page at a time. */
async function exported(writes: TallyWrites): Promise<RawEvent[]> {
  const pages = (await writes.rawPages())!;
  const all: RawEvent[] = [];
  let after: RawCursor | null = null;
  do {
    const page = await pages.rawEvents(scope, { from: 0, to: now + keepMs, now }, after, 700);
    all.push(...page.events);
    after = page.last;
  } while (after !== null);
  return all;
}

/** The project's raw bytes as the tally counts them. */
const rawBytes = (writes: TallyWrites) =>
  writes.count(scope, { batchId: null, subjects: [], keepsRaw: { scopes: [scope], now } }, (txn) => txn.rawBytes(scope.projectId));

const withoutStoredAt = (events: readonly RawEvent[]) => events.map(({ storedAt: _, ...e }) => e);

/** The bytes of the raw events exported, each counted as when it was kept: what the project's count must be. */
const bytesOf = async (writes: TallyWrites) =>
  (await exported(writes)).reduce((sum, e) => sum + rawEventBytes(scope, JSON.stringify(e), e.targetingKey), 0);

/** One step of an erasure's raw events, in the store itself (the tally file, or PostgreSQL's tally). */
type RemoveStep = (subject: string, end: RawCursor, limit: number) => Promise<number>;

async function erasesInBoundedSteps(t: Test, writes: TallyWrites, step: RemoveStep): Promise<void> {
  const subjects = Array.from({ length: 300 }, (_, i) => `user-${i}`);
  const heavy = 'heavy';
  const heavyEvents = 2 * kEraseRawPerTxn + 500;
  // Many subjects' events interleaved with the heavy one's, kept in batches of 1,000.
  const others = Array.from({ length: subjects.length * 3 }, (_, i) => track(subjects[i % subjects.length]!, i));
  const heavies = Array.from({ length: heavyEvents }, (_, i) => track(heavy, -i - 1));
  const sent: Sent[] = [];
  for (let i = 0; i < heavyEvents; i++) {
    if (i < others.length) sent.push(others[i]!);
    sent.push(heavies[i]!);
  }
  for (let i = 0; i < sent.length; i += 1000) await keep(writes, sent.slice(i, i + 1000));
  const all = await exported(writes);
  t.strictSame(withoutStoredAt(all), sent, 'every event kept, in order');
  t.equal(await rawBytes(writes), await bytesOf(writes), "the project's raw bytes are its events'");

  // The heavy subject's counts erased in one transaction, which says where its raw events end; a later
  // subject of the same key counts (and keeps) two more; then its raw events a step at a time.
  const { erased, rawEnd } = await writes.count(scope, { batchId: null, subjects: [heavy], readsRawEnd: true }, (txn) =>
    eraseSubject(txn, scope, heavy),
  );
  t.equal(erased, true);
  t.not(rawEnd, null, 'it has raw events');
  const later = [track(heavy, 1e6), track(heavy, 1e6 + 1)];
  await keep(writes, later);
  const steps: number[] = [];
  for (let removed = -1; removed !== 0; ) {
    removed = await step(heavy, rawEnd!, kEraseRawPerTxn);
    steps.push(removed);
  }
  t.strictSame(
    steps,
    [kEraseRawPerTxn, kEraseRawPerTxn, 500, 0],
    `${heavyEvents} raw events removed ${kEraseRawPerTxn} a transaction at most`,
  );
  const left = [...sent.filter((e) => e.targetingKey !== heavy), ...later];
  t.strictSame(withoutStoredAt(await exported(writes)), left, "the others' raw events, and the later subject's, stay in order");
  t.equal(await rawBytes(writes), await bytesOf(writes), "the project's raw bytes follow");

  // Twenty more subjects erased whole through the erasure itself.
  const gone = new Set(subjects.slice(100, 120));
  for (const subject of gone) t.equal(await writes.erase(scope, subject), true, `${subject} erased`);
  t.equal(await writes.erase(scope, 'user-100'), false, 'erased twice: nothing left the second time');
  t.strictSame(
    withoutStoredAt(await exported(writes)),
    left.filter((e) => !gone.has(e.targetingKey)),
    "only the erased subjects' raw events are gone",
  );
  t.equal(await rawBytes(writes), await bytesOf(writes), "the project's raw bytes follow");
}

t.test('in the tally file', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'flagwire-erase-'));
  const writes = new TallyWrites({ dataDir, databaseUrl: null });
  t.teardown(async () => {
    await writes.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await erasesInBoundedSteps(t, writes, (subject, end, limit) => writes.existingFile!.removeRawEvents(scope, subject, end, limit));
});

t.test('in PostgreSQL', async (t) => {
  const pg = await sharedPostgres();
  t.teardown(() => pg.destroy());
  const url = await pg.newDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'flagwire-erase-'));
  const writes = new TallyWrites({ dataDir, databaseUrl: url });
  const own = PgTally.open(url, 1);
  t.teardown(async () => {
    await Promise.all([writes.close(), own.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });
  await erasesInBoundedSteps(t, writes, (subject, end, limit) => own.removeRawEvents(scope, subject, end, limit));
});

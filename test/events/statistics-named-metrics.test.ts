// A read of an experiment's sums of named metrics only (issue 96, item 3; docs/events.md: What a read
// costs), in both tallies, the tally file and PostgreSQL's: what the results route and a release plan's
// guard read. It gives every arm, and of the sums exactly those of the metrics named that are counted,
// as a read of every metric gives them; naming none gives the arms alone.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { TallyWrites } from '../../src/events/tally-writes.js';
import { type CountedEvent, millionths, tallyBatch } from '../../src/events/tally.js';
import type { TallyScope } from '../../src/events/tally/tally-file.js';
import { sharedPostgres } from '../helpers/postgres.js';

const scope: TallyScope = { projectId: 'prj_1', environment: 'production' };
const now = Date.now();
const metrics = ['a', 'b', 'c', 'd'];

async function readsNamedMetrics(t: Test, writes: TallyWrites): Promise<void> {
  const subjects = Array.from({ length: 30 }, (_, i) => `user-${i}`);
  const events: CountedEvent[] = subjects.flatMap((subject, i): CountedEvent[] => [
    { kind: 'exposure', subject, experiment: 'exp', variant: ['on', 'off', 'x'][i % 3]!, at: now - 5000 },
    ...metrics
      .slice(0, 1 + (i % metrics.length))
      .map((metric): CountedEvent => ({ kind: 'track', subject, metric, value: millionths(i + 0.5), at: now - 1000 })),
  ]);
  await writes.count(scope, { batchId: null, subjects, metrics: [] }, (txn) => tallyBatch(txn, scope, events, new Set(metrics)));
  const all = await writes.experiment(scope, 'exp', null);
  t.equal(all.arms.length, 3, 'three arms');
  t.equal(all.sums.length, 3 * metrics.length, 'every metric of every arm');
  const named = await writes.experiment(scope, 'exp', ['c', 'a', 'unknown', 'a']);
  const key = (s: { variant: string; metric: string }) => `${s.variant}/${s.metric}`;
  t.strictSame(named.arms, all.arms, 'every arm');
  t.strictSame(
    [...named.sums].sort((x, y) => key(x).localeCompare(key(y))),
    all.sums.filter((s) => s.metric === 'a' || s.metric === 'c').sort((x, y) => key(x).localeCompare(key(y))),
    'the sums of the metrics named that are counted, as a read of all gives them',
  );
  t.strictSame(await writes.experiment(scope, 'exp', []), { arms: all.arms, sums: [] }, 'none named: the arms alone');
}

t.test('in the tally file', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'flagwire-named-'));
  const writes = new TallyWrites({ dataDir, databaseUrl: null });
  t.teardown(async () => {
    await writes.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await readsNamedMetrics(t, writes);
});

t.test('in PostgreSQL', async (t) => {
  const pg = await sharedPostgres();
  t.teardown(() => pg.destroy());
  const url = await pg.newDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'flagwire-named-'));
  const writes = new TallyWrites({ dataDir, databaseUrl: url });
  t.teardown(async () => {
    await writes.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await readsNamedMetrics(t, writes);
});

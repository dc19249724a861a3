// The scheduler in process, over a real store: at start it runs everything already due, batch after
// batch, before it returns (so before the node listens), and later polls pick up what falls due; a write
// that fails is retried at the next poll.
import pino from 'pino';
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { Clock } from '../../src/clock.js';
import { GuardReader } from '../../src/release-plans/guard-reader.js';
import { MetricAllowList } from '../../src/release-plans/promql-metrics.js';
import { Scheduler } from '../../src/release-plans/scheduler.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { kEveryChange } from '../helpers/store-pages.js';
import { getSchedule, listSchedules } from '../../src/release-plans/records.js';

const world = buildWorld(tempDataDir());
t.teardown(() => world.store.close());
const clock = Clock.create();
const log = pino({ level: 'silent' });
const kHour = 3_600_000;

t.test('everything due at start runs before start returns, past one batch; later changes at their polls', async (t) => {
  const flag = world.run('flagCreate', { projectId: world.ids.single, principal: kOperator, body: { name: 'many' } });
  const now = clock.now();
  // 120 changes, more than two batches of 50, all due an hour from now.
  for (let i = 0; i < 120; i++) {
    world.run(
      'scheduleCreate',
      { principal: kOperator, flagId: flag.id, env: null, body: { at: now + kHour + i, patch: { trafficPercentage: i % 101 } } },
      now,
    );
  }
  const later = world.run(
    'scheduleCreate',
    { principal: kOperator, flagId: flag.id, env: null, body: { at: now + 3 * kHour, patch: { enabled: true } } },
    now,
  );
  clock.advance(2 * 3600);
  let failures = 1;
  const scheduler = new Scheduler(
    world.store,
    {
      async runSchedule(scheduleId) {
        // The first write fails (storage busy, say): the change stays due and runs at a later round.
        if (failures-- > 0) throw new Error('storage busy');
        return world.run('scheduleRun', { scheduleId }, clock.now());
      },
      advanceRollout: async (rolloutId) => world.run('rolloutAdvance', { rolloutId }, clock.now()),
      recordGuardReading: async (rolloutId, dueAt, reading) => world.run('rolloutGuardRecord', { rolloutId, dueAt, reading }, clock.now()),
    },
    clock,
    log,
    new GuardReader({
      prometheusUrl: null,
      prometheusMetrics: new MetricAllowList([]),
      timeoutMs: 5000,
      metrics: false,
      ownMetricsUrl: () => null,
      experiment: async () => ({ arms: [], sums: [] }),
    }),
    20,
  );
  await scheduler.start();
  t.teardown(() => scheduler.stop());
  world.store.resetReadTxn();
  const statuses = listSchedules(world.store, world.ids.single, kEveryChange).items.filter((s) => s.flagId === flag.id);
  t.equal(
    statuses.filter((s) => s.status === 'applied').length,
    120,
    'all 120 due ones ran before start returned, the failed one in a later round',
  );
  t.match(getSchedule(world.store, later.id), { status: 'pending' }, 'the later one waits');

  clock.advance(3600);
  const deadline = Date.now() + 60_000;
  while (getSchedule(world.store, later.id)!.status === 'pending') {
    if (Date.now() > deadline) throw new Error('the later change never ran');
    await new Promise((r) => setTimeout(r, 20));
    world.store.resetReadTxn();
  }
  t.match(getSchedule(world.store, later.id), { status: 'applied', outcome: 'changed' }, 'a poll ran it once due');
});

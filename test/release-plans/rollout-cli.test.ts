// Progressive rollouts from the command line: `flagwire flag rollout` with steps and a guard, `rollout
// list` showing the guard's reading (4 significant digits) and the step in force (none once rolled back),
// the actions; bad options refused with usage (exit 2) and nothing written.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import type { RolloutPlan } from '../../src/release-plans/rollouts.js';
import { cli, expectRefused, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { exportStore } from '../helpers/store-export.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDir(t);
const world = buildWorld(dataDir);
t.teardown(() => world.store.close());
const { ids } = world;
const flag = world.run('flagCreate', { projectId: ids.single, principal: kOperator, body: { name: 'cli-ramp', enabled: true } });

t.test('a rollout with a guard, listed with its reading, then rolled back', async (t) => {
  const plan = await ok(t, dataDir, [
    'flag',
    'rollout',
    flag.id,
    '--steps',
    '10:1h,50:2h,100',
    '--guard-prometheus',
    'sum(rate(http_errors_total[5m]))',
    '--guard-max',
    '0.05',
    '--guard-every',
    '1m',
    '--on-breach',
    'rollback',
  ]);
  t.match(plan, {
    status: 'running',
    steps: [{ trafficPercentage: 10, holdMs: 3_600_000 }, { trafficPercentage: 50, holdMs: 7_200_000 }, { trafficPercentage: 100 }],
    guard: { prometheus: 'sum(rate(http_errors_total[5m]))', max: 0.05, min: null, intervalMs: 60_000, onBreach: 'rollback' },
    guardReading: null,
  });
  const listed = await cli(dataDir, ['rollout', 'list', ids.single], { json: false });
  t.equal(listed.code, 0);
  t.match(listed.stdout, /GUARD/);
  t.match(listed.stdout, /not read yet/);
  t.match(await ok(t, dataDir, ['rollout', 'rollback', plan.id]), { status: 'rolled-back' });
});

t.test('rollout list: readings to 4 significant digits, no step in force once rolled back', async (t) => {
  const guarded = (name: string) => {
    const f = world.run('flagCreate', { projectId: ids.single, principal: kOperator, body: { name, enabled: true } });
    const guard = { prometheus: 'max(error_ratio)', max: 0.05, intervalMs: 60_000, onBreach: 'pause' as const };
    return world.run('rolloutStart', {
      principal: kOperator,
      flagId: f.id,
      env: null,
      body: { steps: [{ trafficPercentage: 10, holdMs: 3_600_000 }, { trafficPercentage: 100 }], guard },
      guardMetrics: null,
    });
  };
  const record = (plan: RolloutPlan, value: number) =>
    world.run('rolloutGuardRecord', { rolloutId: plan.id, dueAt: plan.guardNextAt!, reading: { values: [value], note: null } });
  const rowOf = async (id: string) => {
    const listed = await cli(dataDir, ['rollout', 'list', ids.single], { json: false });
    t.equal(listed.code, 0);
    return listed.stdout.split('\n').find((line) => line.startsWith(id)) ?? '';
  };

  const healthy = guarded('cli-ramp-healthy');
  record(healthy, 0.012345678901234);
  t.match(
    await rowOf(healthy.id),
    /\[10%\] -> 100%\s+running .* 0\.01235 at \d{4}-/,
    'a healthy reading, rounded; the first step in force',
  );
  t.notMatch(await rowOf(healthy.id), /0\.0123456/, 'not at full precision');
  t.equal(
    (await cli(dataDir, ['rollout', 'list', ids.single])).json.rollouts.find((r: { id: string }) => r.id === healthy.id).guardReading.value,
    0.012345678901234,
    'the JSON keeps the exact value',
  );

  const breached = guarded('cli-ramp-breached');
  record(breached, 0.123456789);
  t.match(
    await rowOf(breached.id),
    /paused .* breached: read 0\.1235, above max 0\.05 .*guard breached: read 0\.1235, above max 0\.05/,
    'a breach, rounded in the reading and in why it paused',
  );

  await ok(t, dataDir, ['rollout', 'rollback', healthy.id]);
  const rolledBack = await rowOf(healthy.id);
  t.match(rolledBack, /10% -> 100%\s+rolled-back/, 'rolled back: the steps listed');
  t.notMatch(rolledBack, /\[/, 'rolled back: no step marked as the one in force');
});

t.test('bad guard options: usage, exit 2, nothing written', async (t) => {
  const before = await exportStore(dataDir);
  for (const [option, value, said] of [
    ['--guard-max', 'lots', /--guard-max: "lots" is not a number/],
    ['--guard-every', '5 minutes', /--guard-every: "5 minutes" is not a duration/],
    ['--on-breach', 'explode', /--on-breach: "explode" is not pause or rollback/],
  ] as const) {
    const r = await cli(dataDir, ['flag', 'rollout', flag.id, '--steps', '10:1h,100', '--guard-metric', 'up', option, value]);
    t.equal(r.code, 2, `${option} ${value}: exit 2`);
    t.match(r.stderr, said);
  }
  t.strictSame(await exportStore(dataDir), before, 'store unchanged');
  await expectRefused(t, dataDir, ['flag', 'rollout', flag.id, '--steps', '10:1h,100', '--guard-metric', 'up'], {
    error: 'Invalid request',
    detail: /guard: give max, min or both/,
  });
});

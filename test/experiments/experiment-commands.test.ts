// Experiments' rules in process (issue 59, item 1): made, started, stopped, changed and deleted, each
// audited; starting sets the flag state's experiment key in the same transaction and stopping clears it;
// a running experiment's plan is not changed, nor is it deleted; bad plans are refused naming the
// field, and nothing is written; another project's token finds nothing; a guarded environment holds a
// start; the sample-ratio history only goes down; the daily interval history is bounded.
import t from 'tap';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { kMaxExperiments } from '../../src/experiments/experiment-commands.js';
import { getExperiment } from '../../src/experiments/records.js';
import { kMaxIntervalPoints } from '../../src/experiments/schemas.js';
import { effectiveState } from '../../src/flags/records/flag-state.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import { jsonBody } from '../../src/model/request-body.js';
import { refusedCommand } from '../helpers/refused.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { experimentPlan } from '../helpers/experiment-plan.js';

const world = buildWorld(tempDataDir());
const { ids } = world;

const plan = experimentPlan(ids.flag, 10_000);
const single = { principal: kOperator, projectId: ids.single, env: null };
const create = (body: object, target: object = single) =>
  world.run('experimentCreate', { ...single, ...target, received: jsonBody(JSON.stringify(body)) });
const flagExperiment = (flagId: string, env: string | null) => {
  world.store.resetReadTxn();
  return effectiveState(getFlag(world.store, flagId)!, env).experiment;
};
const actions = (projectId: string) => {
  world.store.resetReadTxn();
  return world.store.listAudit(projectId, { limit: 1000, before: null }).map((e) => e.action);
};

t.test('bad plans are refused naming what is wrong, and nothing is written', async (t) => {
  const refused = (body: object, pattern: RegExp, target: object = single) =>
    t.match(
      refusedCommand(t, world, 'INVALID_REQUEST', () => create(body, target)),
      pattern,
    );
  refused({ ...plan, alpha: 1 }, /alpha.*strictly between 0 and 1/);
  refused({ ...plan, alpha: 0 }, /alpha/);
  refused({ ...plan, variants: [{ variant: 'off', weight: 0 }, plan.variants[1]] }, /weight.*positive/);
  refused({ ...plan, plannedSubjects: 0 }, /plannedSubjects.*at least 1/);
  refused({ ...plan, variants: [plan.variants[0]] }, /variants/);
  refused({ ...plan, control: 'both' }, /control: "both" must be one of variants \(off, on\)/);
  refused({ ...plan, primaryMetric: 'clicks' }, /primaryMetric: "clicks" must be one of metrics/);
  refused({ ...plan, variants: [plan.variants[0], plan.variants[0]] }, /each variant may be named once/);
  refused({ ...plan, metrics: [{ metric: 'purchase', kind: 'median' }] }, /conversion.*mean/);
  refused({ ...plan, key: 'Checkout 2026' }, /key/);
  refused({ ...plan, flagId: ids.flagB }, /flagId: no flag with id/, {});
  refused(plan, /single-environment project.*drop/, { env: 'production' });
  refused({ ...plan, flagId: ids.groupFlag }, /multi-environment project: add the "env"/, { projectId: ids.multi });
});

t.test('made, started (the flag state takes the key, in the same transaction), stopped (it is cleared), audited', async (t) => {
  const made = create(plan);
  t.match(made, { key: 'checkout-2026', environment: null, status: 'draft', alpha: 0.05, lowestSrmPValue: 1, startedAt: null });
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => create(plan)),
    /already exists/,
  );
  t.equal(flagExperiment(ids.flag, null), undefined, 'made, not started: the flag carries no key');

  const started = world.run('experimentStart', { ...single, key: 'checkout-2026' }, 1_000);
  t.match(started, { status: 'running', startedAt: 1_000, stoppedAt: null });
  t.equal(flagExperiment(ids.flag, null), 'checkout-2026', "the flag's state carries the key");
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => world.run('experimentStart', { ...single, key: 'checkout-2026' })),
    /"checkout-2026" is already running/,
  );

  // A running experiment's plan is not changed (whatever the field), nor is it deleted.
  for (const change of [
    {
      variants: [
        { variant: 'off', weight: 1 },
        { variant: 'on', weight: 3 },
      ],
    },
    { control: 'on' },
    { metrics: plan.metrics.slice(0, 1) },
    { alpha: 0.1 },
  ]) {
    t.match(
      refusedCommand(t, world, 'INVALID_REQUEST', () =>
        world.run('experimentUpdate', { ...single, key: 'checkout-2026', received: jsonBody(JSON.stringify(change)) }),
      ),
      /Experiment "checkout-2026" is running: its plan .* cannot change while it runs. Stop it first/,
    );
  }
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => world.run('experimentDelete', { ...single, key: 'checkout-2026' })),
    /"checkout-2026" is running: stop it before deleting it/,
  );
  // Another experiment on the same flag is refused while this one runs there.
  create({ ...plan, key: 'rival' });
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => world.run('experimentStart', { ...single, key: 'rival' })),
    /Flag checkout already runs experiment "checkout-2026" here/,
  );

  const stopped = world.run('experimentStop', { ...single, key: 'checkout-2026' }, 2_000);
  t.match(stopped, { status: 'stopped', startedAt: 1_000, stoppedAt: 2_000 });
  t.equal(flagExperiment(ids.flag, null), undefined, "the flag's state no longer carries the key");
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => world.run('experimentStop', { ...single, key: 'checkout-2026' })),
    /is not running/,
  );

  // Stopped, its plan may change again.
  const changed = world.run(
    'experimentUpdate',
    { ...single, key: 'checkout-2026', received: jsonBody('{"plannedSubjects": 20000}') },
    3_000,
  );
  t.match(changed, { plannedSubjects: 20_000, control: 'off', status: 'stopped' });
  const log = actions(ids.single);
  for (const action of ['experiment.create', 'experiment.start', 'experiment.stop', 'experiment.update'])
    t.ok(log.includes(action), `${action} is audited`);
  t.equal(log.filter((a) => a === 'flag.patch').length >= 2, true, "the flag state's key is audited as the flag's change too");

  t.same(world.run('experimentDelete', { ...single, key: 'rival' }), { key: 'rival', deleted: true });
  world.store.resetReadTxn();
  t.equal(getExperiment(world.store, ids.single, null, 'rival'), undefined, 'deleted');
  t.ok(actions(ids.single).includes('experiment.delete'));
});

t.test('a variant the flag never answers is refused at the start, naming it and the flag', async (t) => {
  create({ ...plan, key: 'colours', flagId: ids.flag2, variants: [plan.variants[0], { variant: 'blue', weight: 1 }] });
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => world.run('experimentStart', { ...single, key: 'colours' })),
    /compares "blue", which flag banner never answers here \(its variants: on, off\)/,
  );
});

t.test("in a multi-environment project it runs in its environment only; another project's token finds nothing", async (t) => {
  const multi = { principal: kOperator, projectId: ids.multi, env: 'production' };
  create({ ...plan, flagId: ids.groupFlag }, multi);
  world.run('experimentStart', { ...multi, key: 'checkout-2026' });
  t.equal(flagExperiment(ids.groupFlag, 'production'), 'checkout-2026');
  t.equal(flagExperiment(ids.groupFlag, 'staging'), undefined, 'staging is left alone');
  const other = { principal: { kind: 'token' as const, tokenId: world.tokenIds.writeB! }, projectId: ids.multi, env: null };
  t.match(
    refusedCommand(t, world, 'NOT_FOUND', () => world.run('experimentStop', { ...other, key: 'checkout-2026' })),
    /No experiment "checkout-2026" exists in this project.s environment\. Events sent under a key are counted, but an experiment is its plan/,
  );
  const staging = { principal: { kind: 'token' as const, tokenId: world.tokenIds.stagingWrite! }, projectId: ids.multi, env: 'production' };
  refusedCommand(t, world, 'ENVIRONMENT_NOT_PERMITTED', () => world.run('experimentStop', { ...staging, key: 'checkout-2026' }));
  world.run('experimentStop', { ...multi, key: 'checkout-2026' });
});

t.test('the sample-ratio history keeps the lowest p-value seen', async (t) => {
  const look = (pValue: number) =>
    world.run('experimentLook', { projectId: ids.single, environment: null, key: 'checkout-2026', pValue, point: null })!.lowestSrmPValue;
  t.equal(look(0.4), 0.4);
  t.equal(look(0.7), 0.4, 'a higher p-value leaves it');
  t.equal(look(0.1), 0.1);
  world.store.resetReadTxn();
  t.equal(getExperiment(world.store, ids.single, null, 'checkout-2026')?.lowestSrmPValue, 0.1);
});

t.test('the interval history keeps the first look of each UTC day while it runs, at most kMaxIntervalPoints', async (t) => {
  const kDay = 86_400_000;
  const day0 = Date.UTC(2026, 0, 1);
  const pointAt = (at: number, estimate: number) => ({
    at,
    metric: 'purchase',
    comparisons: [{ variant: 'on', scale: 'relative' as const, estimate, lower: estimate - 0.1, upper: estimate + 0.1 }],
  });
  const look = (at: number, estimate = 0) =>
    world.run('experimentLook', {
      projectId: ids.single,
      environment: null,
      key: 'checkout-2026',
      pValue: 0.5,
      point: pointAt(at, estimate),
    });
  const kept = () => {
    world.store.resetReadTxn();
    return (getExperiment(world.store, ids.single, null, 'checkout-2026')?.intervals ?? []).map((p) => [p.at, p.comparisons[0]!.estimate]);
  };
  look(day0);
  t.same(kept(), [], 'stopped: no point kept');
  world.run('experimentStart', { ...single, key: 'checkout-2026' });
  look(day0, 0.01);
  look(day0 + 3_600_000, 0.02);
  t.same(kept(), [[day0, 0.01]], "the day's first look only");
  look(day0 + kDay, 0.03);
  t.same(kept(), [
    [day0, 0.01],
    [day0 + kDay, 0.03],
  ]);
  for (let d = 2; d < kMaxIntervalPoints + 5; d++) look(day0 + d * kDay, d);
  const bounded = kept();
  t.equal(bounded.length, kMaxIntervalPoints, 'bounded');
  t.same(bounded.at(-1), [day0 + (kMaxIntervalPoints + 4) * kDay, kMaxIntervalPoints + 4], 'the newest kept');
  t.same(bounded[0], [day0 + 5 * kDay, 5], 'the oldest dropped');
  world.run('experimentStop', { ...single, key: 'checkout-2026' });
});

t.test('a guarded environment holds a start as a change request (experiment-guards.test.ts): nothing changes until approved', async (t) => {
  world.run('approvalsSet', { projectId: ids.single, env: null, required: 1, principal: principalOf(ids.admin) });
  const outcome = world.outcome('experimentStart', { ...single, principal: principalOf(ids.editor), key: 'checkout-2026' });
  t.notOk(outcome.applied, 'held');
  t.equal(flagExperiment(ids.flag, null), undefined);
});

t.test('an environment keeps at most kMaxExperiments experiments: the next is refused, naming the limit', async (t) => {
  const staging = { principal: kOperator, projectId: ids.multi, env: 'staging' };
  for (let i = 0; i < kMaxExperiments; i++) create({ ...plan, key: `bounded-${i}`, flagId: ids.groupFlag }, staging);
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => create({ ...plan, key: 'one-more', flagId: ids.groupFlag }, staging)),
    new RegExp(`at most ${kMaxExperiments} experiments: delete one first`),
  );
});

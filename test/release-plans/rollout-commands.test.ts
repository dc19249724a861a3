// Progressive rollouts (issue 27, item 2) through the writer's own commands, in process: the first step
// at once, each next one when its hold ends (never before, never twice), pause, resume, skip, roll back;
// one rollout per flag (environment); a change made by hand to the percentage pauses it, saying who.
// Rollouts by variant weights: each step the flag's `fractional` split, evaluated by the eval engine;
// their refusals, a hand change to the targeting or the variants, and a rollback to the targeting before;
// `flagwire flag rollout --steps` with weights, and `rollout list` showing them.
import t, { type Test } from 'tap';
import { kConsoleActor, kOperator, tokenActor } from '../../src/audit/audit-actor.js';
import { EvalEngine } from '../../src/eval/engine.js';
import { ResultReader, ResultWriter } from '../../src/eval/protocol.js';
import type { TypedVariants } from '../../src/model/flags.js';
import { rolloutView } from '../../src/release-plans/schemas.js';
import { tempDataDir } from '../helpers/server.js';
import { cli, expectAllRefused, ok } from '../helpers/cli.js';
import { refusedCommand } from '../helpers/refused.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDataDir();
const world = buildWorld(dataDir);
t.teardown(() => world.store.close());
const { ids } = world;
const kHour = 3_600_000;
const t0 = Date.now();

const read = () => {
  world.store.resetReadTxn();
  return world.store;
};
const percentage = (flagId: string) => (read().getFlag(flagId) as { state: { trafficPercentage: number } }).state.trafficPercentage;
const audit = (projectId: string) => read().listAudit(projectId, { limit: 1000, before: null });
const start = (flagId: string, steps: unknown, env: string | null = null, now = t0) =>
  world.run('rolloutStart', { principal: kOperator, flagId, env, body: { steps }, guardMetrics: null }, now);
const advance = (rolloutId: string, now: number) => world.run('rolloutAdvance', { rolloutId }, now);
const act = (rolloutId: string, action: 'pause' | 'resume' | 'skip' | 'rollback', now: number) =>
  world.run('rolloutAct', { principal: kOperator, rolloutId, action }, now);

const refused = (t: Test, code: string, fn: () => unknown) => refusedCommand(t, world, code, fn);

const kSteps = [{ trafficPercentage: 10, holdMs: kHour }, { trafficPercentage: 50, holdMs: kHour }, { trafficPercentage: 100 }];

t.test('steps taken in order, each when its hold ends, once, audited as plan:<id>; then completed', async (t) => {
  const flag = world.run('flagCreate', {
    projectId: ids.single,
    actor: kConsoleActor,
    body: { name: 'ramp', enabled: true, trafficPercentage: 0 },
  });
  const plan = start(flag.id, kSteps);
  t.match(plan, { status: 'running', current: 0, nextAt: t0 + kHour, initialPercentage: 0, createdBy: 'console' });
  t.same(plan.appliedAt, [t0], 'when each step was applied');
  t.equal(percentage(flag.id), 10, 'the first step at once');
  t.match(audit(ids.single)[0], {
    action: 'flag.patch',
    actor: `plan:${plan.id}`,
    changes: { trafficPercentage: { before: 0, after: 10 } },
  });
  t.match(audit(ids.single)[1], { action: 'rollout.start', actor: 'console' });

  t.equal(advance(plan.id, t0 + kHour - 1), null, 'not before its hold ends');
  t.same(
    read()
      .listDueRollouts(t0 + kHour, 10)
      .map((p) => p.id),
    [plan.id],
  );
  t.match(advance(plan.id, t0 + kHour), { current: 1, status: 'running', nextAt: t0 + 2 * kHour });
  t.equal(percentage(flag.id), 50);
  const entries = audit(ids.single).length;
  t.equal(advance(plan.id, t0 + kHour + 1), null, 'a second ask (another node) does nothing');
  t.equal(audit(ids.single).length, entries, 'and writes nothing');
  t.same(advance(plan.id, t0 + 2 * kHour)?.appliedAt, [t0, t0 + kHour, t0 + 2 * kHour]);
  t.match(read().getRollout(plan.id), { current: 2, status: 'completed', nextAt: null });
  t.equal(percentage(flag.id), 100);
  t.same(read().listDueRollouts(t0 + 10 * kHour, 10), [], 'a completed rollout is due no more');

  // Rolled back after completing: the percentage before the first step.
  t.match(act(plan.id, 'rollback', t0 + 3 * kHour), { status: 'rolled-back' });
  t.equal(percentage(flag.id), 0);
  t.match(
    refused(t, 'INVALID_REQUEST', () => act(plan.id, 'resume', t0 + 3 * kHour)),
    /is rolled-back: it cannot resume now/,
  );
});

t.test('pause holds the step; resume sets it again; skip takes the next now; one rollout per flag', async (t) => {
  const flag = world.run('flagCreate', {
    projectId: ids.single,
    actor: kConsoleActor,
    body: { name: 'ramp-2', enabled: true, trafficPercentage: 5 },
  });
  const plan = start(flag.id, kSteps);
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(flag.id, kSteps)),
    /already has a running rollout/,
  );
  t.match(act(plan.id, 'pause', t0 + 10), { status: 'paused', nextAt: null, pausedReason: 'paused by console' });
  t.equal(advance(plan.id, t0 + 5 * kHour), null, 'a paused rollout takes no step');
  t.equal(percentage(flag.id), 10);
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(flag.id, kSteps)),
    /already has a paused rollout/,
  );
  t.match(
    act(plan.id, 'resume', t0 + 5 * kHour),
    { status: 'running', current: 0, nextAt: t0 + 6 * kHour, pausedReason: null, appliedAt: [t0 + 5 * kHour] },
    'the step set again: applied anew',
  );
  t.match(act(plan.id, 'skip', t0 + 5 * kHour + 1), {
    current: 1,
    nextAt: t0 + 6 * kHour + 1,
    appliedAt: [t0 + 5 * kHour, t0 + 5 * kHour + 1],
  });
  t.equal(percentage(flag.id), 50);
  t.match(act(plan.id, 'rollback', t0 + 5 * kHour + 2), { status: 'rolled-back' });
  t.equal(percentage(flag.id), 5, 'back to the percentage before the first step');
  t.match(start(flag.id, kSteps, null, t0 + 6 * kHour), { status: 'running' }, 'a new rollout once the last ended');
});

t.test('a change made by hand pauses the rollout at its next step, naming who, and is not overwritten', async (t) => {
  const flag = world.run('flagCreate', { projectId: ids.single, actor: kConsoleActor, body: { name: 'ramp-3', enabled: true } });
  const plan = start(flag.id, kSteps);
  world.run('flagPatch', {
    projectId: ids.single,
    flagId: flag.id,
    env: null,
    actor: tokenActor(read().getToken(world.tokenIds.write!)!),
    patch: { trafficPercentage: 30 },
  });
  const paused = advance(plan.id, t0 + kHour);
  t.match(paused, {
    status: 'paused',
    current: 0,
    pausedReason: /changed by hand to 30 \(step 1 set 10\) by ci-write \(token:/,
  });
  t.equal(percentage(flag.id), 30, "the hand's change stands");
  t.match(audit(ids.single)[0], { action: 'rollout.pause', actor: `plan:${plan.id}` });
  t.match(act(plan.id, 'resume', t0 + kHour + 1), { status: 'running' });
  t.equal(percentage(flag.id), 10, 'resume sets its step again');
});

t.test('per environment on a group flag, and a token limited to staging acts on staging only', async (t) => {
  const principal = { kind: 'token', tokenId: world.tokenIds.stagingWrite! } as const;
  const begin = (env: string) =>
    world.run('rolloutStart', { principal, flagId: ids.groupFlag, env, body: { steps: kSteps }, guardMetrics: null }, t0);
  const staging = begin('staging');
  t.match(staging, { env: 'staging', status: 'running', createdBy: `token:${world.tokenIds.stagingWrite}` });
  t.match(read().getFlag(ids.groupFlag), { environments: { staging: { trafficPercentage: 10 } } });
  refused(t, 'ENVIRONMENT_NOT_PERMITTED', () => begin('production'));
  const production = start(ids.groupFlag, kSteps, 'production');
  refused(t, 'ENVIRONMENT_NOT_PERMITTED', () => world.run('rolloutAct', { rolloutId: production.id, action: 'pause', principal }, t0));
  const otherProject = { kind: 'token', tokenId: world.tokenIds.write! } as const;
  t.match(
    refused(t, 'NOT_FOUND', () => world.run('rolloutAct', { rolloutId: production.id, action: 'pause', principal: otherProject }, t0)),
    /^No rollout with this id exists in this project\.$/,
  );
});

t.test('steps are checked: holds, the order, the bounds; nothing written when refused', async (t) => {
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.flag2, [{ trafficPercentage: 10 }, { trafficPercentage: 50 }])),
    /steps\[0\]\.holdMs is required/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.flag2, [{ trafficPercentage: 50, holdMs: kHour }, { trafficPercentage: 10 }])),
    /steps\[1\]\.trafficPercentage goes down \(50 to 10\)/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.flag2, [{ trafficPercentage: 100, holdMs: kHour }])),
    /the last step is held for good/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.flag2, [{ trafficPercentage: 101 }])),
    /^steps\[0\]\.trafficPercentage must be a whole number between 0 and 100$/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.flag2, [])),
    /steps must be a non-empty array/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.groupFlag, kSteps)),
    /add the "env" query parameter/,
  );
  refused(t, 'NOT_FOUND', () => start('flg_nope', kSteps));
});

// ---- rollouts by variant weights ------------------------------------------------------------------

const engine = new EvalEngine(world.store, () => Date.now());
/** The variant the eval engine serves `query` (the Evaluation API's answer, in process). */
function variantFor(flagId: string, query: string): string | undefined {
  engine.beginBatch();
  const out = new ResultWriter(new ArrayBuffer(16), 1);
  engine.evaluateFlag(flagId, query, out);
  return JSON.parse(new ResultReader(out.finish()).bodyText(0)).variant;
}
const kEmails = Array.from({ length: 400 }, (_, i) => `u${i}%40example.com`);
/** The callers among kEmails served `on`. */
const servedOn = (flagId: string) => kEmails.filter((email) => variantFor(flagId, `email=${email}`) === 'on');
const typed = (flagId: string) => (read().getFlag(flagId) as { state: { typed: TypedVariants } }).state.typed;
const writeToken = () => tokenActor(read().getToken(world.tokenIds.write!)!);
const createTyped = (name: string, extra: Record<string, unknown> = {}) =>
  world.run('flagCreate', {
    projectId: ids.single,
    actor: kConsoleActor,
    body: { name, enabled: true, trafficPercentage: 100, variants: { on: true, off: false }, defaultVariant: 'off', ...extra },
  });

const kBucketBy = { var: 'email' };
const kWeightSteps = [
  { variantWeights: { on: 10, off: 90 }, holdMs: kHour },
  { variantWeights: { on: 50, off: 50 }, holdMs: kHour },
  { variantWeights: { on: 100, off: 0 } },
];

t.test(
  'variant weights: each step sets the split (bucketing kept), served at once, audited; rollback restores the targeting',
  async (t) => {
    const initial = { fractional: [kBucketBy, ['on', 0], ['off', 100]] };
    const flag = createTyped('split', { targeting: initial });
    t.same(servedOn(flag.id), [], 'nobody before');

    const plan = start(flag.id, kWeightSteps);
    t.match(plan, { status: 'running', current: 0, nextAt: t0 + kHour, initialTargeting: initial, initialPercentage: 100 });
    t.same(typed(flag.id).targeting, { fractional: [kBucketBy, ['on', 10], ['off', 90]] }, 'the first step at once');
    t.match(audit(ids.single)[0], {
      action: 'flag.patch',
      actor: `plan:${plan.id}`,
      changes: { targeting: { before: initial, after: { fractional: [kBucketBy, ['on', 10], ['off', 90]] } } },
    });
    const tenth = servedOn(flag.id);
    t.ok(tenth.length > 10 && tenth.length < 80, `about a tenth of 400 served on (${tenth.length})`);

    t.match(advance(plan.id, t0 + kHour), { current: 1, status: 'running' });
    t.same(typed(flag.id).targeting, { fractional: [kBucketBy, ['on', 50], ['off', 50]] });
    const half = servedOn(flag.id);
    t.ok(half.length > 150 && half.length < 250, `about half served on (${half.length})`);
    t.ok(
      tenth.every((email) => half.includes(email)),
      'sticky: every caller on at 10 is still on at 50',
    );
    t.match(advance(plan.id, t0 + 2 * kHour), { current: 2, status: 'completed' });
    t.equal(servedOn(flag.id).length, kEmails.length, 'everyone at 100/0');
    t.equal(percentage(flag.id), 100, 'the percentage is not touched');

    t.match(act(plan.id, 'rollback', t0 + 3 * kHour), { status: 'rolled-back' });
    t.same(typed(flag.id).targeting, initial, 'the targeting before the first step');
    t.same(servedOn(flag.id), []);
    t.match(audit(ids.single)[0], { action: 'flag.patch', actor: `plan:${plan.id}`, changes: { targeting: { after: initial } } });
  },
);

t.test('variant weights from {}: a split without bucketing expression; weights may go down; rolled back to {}', async (t) => {
  const flag = createTyped('split-2');
  const steps = [
    { variantWeights: { off: 70, on: 30 }, holdMs: kHour },
    { variantWeights: { off: 90, on: 10 }, holdMs: kHour },
    { variantWeights: { on: 1 } },
  ];
  const plan = start(flag.id, steps);
  t.same(plan.initialTargeting, {});
  t.same(
    typed(flag.id).targeting,
    {
      fractional: [
        ['off', 70],
        ['on', 30],
      ],
    },
    "the buckets in the step's order",
  );
  t.match(advance(plan.id, t0 + kHour), { current: 1 });
  t.same(
    typed(flag.id).targeting,
    {
      fractional: [
        ['off', 90],
        ['on', 10],
      ],
    },
    'a weight may go down',
  );
  t.ok(['on', 'off'].includes(variantFor(flag.id, 'targetingKey=u1')!), 'bucketed by targetingKey (flagKey + targetingKey)');
  t.match(act(plan.id, 'skip', t0 + kHour + 1), { current: 2, status: 'completed' });
  t.same(typed(flag.id).targeting, { fractional: [['on', 1]] });
  t.equal(variantFor(flag.id, 'targetingKey=u1'), 'on');
  t.match(act(plan.id, 'rollback', t0 + kHour + 2), { status: 'rolled-back' });
  t.same(typed(flag.id).targeting, {});
});

t.test('variant weights: a hand change to the targeting pauses the rollout, naming who changed the targeting', async (t) => {
  const flag = createTyped('split-3');
  const plan = start(flag.id, kWeightSteps);
  world.run('flagPatch', {
    projectId: ids.single,
    flagId: flag.id,
    env: null,
    actor: writeToken(),
    patch: {
      targeting: {
        fractional: [
          ['on', 30],
          ['off', 70],
        ],
      },
    },
  });
  // A later change of something else, by someone else, is not who changed the targeting.
  world.run('flagPatch', { projectId: ids.single, flagId: flag.id, env: null, actor: kConsoleActor, patch: { trafficPercentage: 90 } });
  t.match(advance(plan.id, t0 + kHour), {
    status: 'paused',
    current: 0,
    pausedReason: /^the targeting was changed by hand to on=30\/off=70 \(step 1 set on=10\/off=90\) by ci-write \(token:/,
  });
  t.same(
    typed(flag.id).targeting,
    {
      fractional: [
        ['on', 30],
        ['off', 70],
      ],
    },
    "the hand's change stands",
  );
  t.match(act(plan.id, 'resume', t0 + kHour + 1), { status: 'running', current: 0 });
  t.same(
    typed(flag.id).targeting,
    {
      fractional: [
        ['on', 10],
        ['off', 90],
      ],
    },
    'resume sets its step again',
  );

  world.run('flagPatch', {
    projectId: ids.single,
    flagId: flag.id,
    env: null,
    actor: kConsoleActor,
    patch: { targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'on', 'off'] } },
  });
  t.match(advance(plan.id, t0 + 3 * kHour), {
    status: 'paused',
    pausedReason: 'the targeting was changed by hand to another rule (step 1 set on=10/off=90) by console (console)',
  });
});

t.test('variant weights: a variant the next step sets removed by hand pauses the rollout; skip is refused', async (t) => {
  const flag = world.run('flagCreate', {
    projectId: ids.single,
    actor: kConsoleActor,
    body: { name: 'split-4', enabled: true, variants: { a: 'A', b: 'B', c: 'C' }, defaultVariant: 'a' },
  });
  const plan = start(flag.id, [{ variantWeights: { a: 50, b: 50 }, holdMs: kHour }, { variantWeights: { a: 50, c: 50 } }]);
  world.run('flagPatch', {
    projectId: ids.single,
    flagId: flag.id,
    env: null,
    actor: writeToken(),
    patch: { variants: { a: 'A', b: 'B' } },
  });
  t.match(advance(plan.id, t0 + kHour), {
    status: 'paused',
    pausedReason: /^the flag's variants were changed by hand: step 2 sets "c", no longer a variant by ci-write \(token:/,
  });
  t.match(
    refused(t, 'INVALID_REQUEST', () => act(plan.id, 'skip', t0 + kHour + 1)),
    /^steps\[1\]\.variantWeights: "c" is not a variant of this flag \(its variants: a, b\)$/,
  );
});

t.test('variant weights: refusals, each saying what is needed; nothing written', async (t) => {
  const flag = createTyped('split-5');
  const ruled = createTyped('split-6', { targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'on', 'off'] } });
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.flag2, kWeightSteps)),
    /^this flag has no variants: a rollout by variant weights sets the weights of a flag's typed variants \(give it "variants" first, or roll out its trafficPercentage\)$/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.groupFlag, kWeightSteps, 'staging')),
    /^this flag \(environment staging\) has no variants/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ruled.id, kWeightSteps)),
    /^this flag has a targeting rule that is not a bare split \(its operator is "if"\): a rollout by variant weights drives a targeting of \{\} or \{"fractional": \[\.\.\.\]\}/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () =>
      start(flag.id, [{ variantWeights: { on: 10, blue: 90 }, holdMs: kHour }, { variantWeights: { on: 100 } }]),
    ),
    /^steps\[0\]\.variantWeights: "blue" is not a variant of this flag \(its variants: on, off\)$/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () =>
      start(flag.id, [{ variantWeights: { on: 10, off: 90 }, holdMs: kHour }, { trafficPercentage: 100 }]),
    ),
    /^steps\[1\] sets a traffic percentage but steps\[0\] sets variant weights: every step of a rollout is of one kind$/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(flag.id, [{ variantWeights: { on: 0, off: 0 } }])),
    /^steps\[0\]\.variantWeights: the weights add up to 0; at least one must be above 0$/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(flag.id, [{ variantWeights: {} }])),
    /the weights add up to 0/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(flag.id, [{ variantWeights: { on: 2_000_000_000, off: 2_000_000_000 } }])),
    /^steps\[0\]\.variantWeights: the weights add up to more than 2147483647$/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(flag.id, [{ variantWeights: { on: -1, off: 1.5 } }])),
    /^steps\[0\]\.variantWeights\.on must be a whole number, 0 or more; steps\[0\]\.variantWeights\.off must be a whole number, 0 or more$/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(flag.id, [{ variantWeights: { on: 1 }, trafficPercentage: 10 }])),
    /^steps\[0\] must be \{trafficPercentage, holdMs\} or \{variantWeights, holdMs\}: one of the two$/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(flag.id, [{ trafficPercentage: 10, holdMs: kHour, extra: 1 }, { trafficPercentage: 20 }])),
    /^unknown field "steps\[0\]\.extra"$/,
  );
});

t.test('a rollout stored before weight steps existed (no initialTargeting) reads as null and rolls back', async (t) => {
  const flag = world.run('flagCreate', { projectId: ids.single, actor: kConsoleActor, body: { name: 'old-ramp', enabled: true } });
  const { initialTargeting: _none, ...old } = start(flag.id, kSteps);
  world.store.transact((w) => w.putRollout(old));
  const stored = read().getRollout(old.id)!;
  t.notOk('initialTargeting' in stored);
  t.equal(rolloutView(stored).initialTargeting, null);
  t.match(act(old.id, 'rollback', t0 + 1), { status: 'rolled-back' });
  t.equal(percentage(flag.id), 0);
});

t.test('the console: flag rollout --steps with variant weights; rollout list shows them', async (t) => {
  const flag = createTyped('split-cli');
  const plan = await ok(t, dataDir, ['flag', 'rollout', flag.id, '--steps', 'on=10/off=90:1h,on=50/off=50:30m,on=100/off=0']);
  t.match(plan, { flagId: flag.id, status: 'running', current: 0, initialTargeting: {}, createdBy: 'console' });
  t.same(plan.steps, [
    { variantWeights: { on: 10, off: 90 }, holdMs: kHour },
    { variantWeights: { on: 50, off: 50 }, holdMs: 1_800_000 },
    { variantWeights: { on: 100, off: 0 } },
  ]);
  t.same(typed(flag.id).targeting, {
    fractional: [
      ['on', 10],
      ['off', 90],
    ],
  });
  const human = await cli(dataDir, ['rollout', 'list', ids.single], { json: false });
  t.equal(human.code, 0);
  const row = human.stdout.split('\n').find((line) => line.startsWith(plan.id));
  t.strictSame(row?.split(/\s{2,}/).slice(0, 5), [plan.id, flag.id, '-', '[on=10/off=90] -> on=50/off=50 -> on=100/off=0', 'running']);
  await expectAllRefused(t, dataDir, [
    [
      ['flag', 'rollout', flag.id, '--steps', 'on=ten/off=90'],
      {
        code: 2,
        error: 'Invalid request',
        detail: /^usage: --steps: "on=ten\/off=90" is not PERCENT or VARIANT=WEIGHT\/VARIANT=WEIGHT\/\.\.\./,
      },
    ],
    [['flag', 'rollout', ids.flag2, '--steps', 'on=1'], { error: 'Invalid request', detail: /^this flag has no variants/ }],
  ]);
});

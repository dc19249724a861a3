// Progressive rollouts by variant weights (issue 27, item 2), through the writer's own commands, in
// process: each step the flag's `fractional` split, evaluated by the eval engine; their refusals, a hand
// change to the targeting or the variants, and a rollback to the targeting before; `flagwire flag rollout
// --steps` with weights, and `rollout list` showing them. Rollouts by percentage: rollout-commands.test.ts.
import t from 'tap';
import { kOperator, type Principal } from '../../src/actor/audit-actor.js';
import { EvalEngine } from '../../src/evaluation/engine/engine.js';
import { ResultReader, ResultWriter } from '../../src/evaluation/engine/protocol.js';
import type { TypedVariants } from '../../src/model/flags.js';
import { rolloutView } from '../../src/release-plans/schemas.js';
import { cli, expectAllRefused, ok } from '../helpers/cli.js';
import { kHour, kSteps, rolloutWorld } from '../helpers/rollout-world.js';
import { getRollout, putRollout } from '../../src/release-plans/records.js';
import { getFlag } from '../../src/flags/records/flag-store.js';

const { dataDir, world, ids, t0, read, percentage, audit, start, advance, act, refused } = rolloutWorld(t);

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
const typed = (flagId: string) => (getFlag(read(), flagId) as { state: { typed: TypedVariants } }).state.typed;
const writeToken = (): Principal => ({ kind: 'token', tokenId: world.tokenIds.write! });
const createTyped = (name: string, extra: Record<string, unknown> = {}) =>
  world.run('flagCreate', {
    projectId: ids.single,
    principal: kOperator,
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
    flagId: flag.id,
    env: null,
    principal: writeToken(),
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
  world.run('flagPatch', { flagId: flag.id, env: null, principal: kOperator, patch: { trafficPercentage: 90 } });
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
    flagId: flag.id,
    env: null,
    principal: kOperator,
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
    principal: kOperator,
    body: { name: 'split-4', enabled: true, variants: { a: 'A', b: 'B', c: 'C' }, defaultVariant: 'a' },
  });
  const plan = start(flag.id, [{ variantWeights: { a: 50, b: 50 }, holdMs: kHour }, { variantWeights: { a: 50, c: 50 } }]);
  world.run('flagPatch', {
    flagId: flag.id,
    env: null,
    principal: writeToken(),
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
  const flag = world.run('flagCreate', { projectId: ids.single, principal: kOperator, body: { name: 'old-ramp', enabled: true } });
  const { initialTargeting: _none, ...old } = start(flag.id, kSteps);
  world.store.transact((w) => putRollout(w, old));
  const stored = getRollout(read(), old.id)!;
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

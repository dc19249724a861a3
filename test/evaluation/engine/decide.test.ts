// decideState: the same rules as evaluateState (design §2), reporting which one decided (OFREP's reason).
import t from 'tap';
import { bucket } from '../../../src/evaluation/engine/bucket.js';
import {
  compileState,
  contextFreeDecision,
  decidedBy,
  decideState,
  decisionValue,
  evaluateState,
  kDecidedAudience,
  kDecidedCohort,
  kDecidedDisabled,
  kDecidedRoll,
  kDecidedSplit,
  kDecidedStatic,
  type EvalContext,
} from '../../../src/evaluation/engine/evaluate.js';
import type { EffectiveState } from '../../../src/flags/records/flag-state.js';
import type { Audience } from '../../../src/model/projects.js';

const kFlag = 'flg_reasons';
const audience: Audience = { id: 'aud_1', projectId: 'p', name: 'Beta', updatedAt: 0, rules: [{ attribute: 'plan', values: ['beta'] }] };
const state = (over: Partial<EffectiveState> = {}, aud?: Audience) =>
  compileState(kFlag, { enabled: true, trafficPercentage: 100, cohorts: [], audienceId: null, ...over }, aud, undefined);
const ctx = (o: { cohort?: string; targetingKey?: string; plan?: string } = {}): EvalContext => ({
  cohort: o.cohort ?? null,
  targetingKey: o.targetingKey ?? null,
  attribute: (name) => (name === 'plan' ? o.plan : undefined),
});
const never = () => {
  throw new Error('no roll expected');
};
const decide = (s: ReturnType<typeof state>, c: EvalContext, roll: () => number = never) => {
  const d = decideState(s, c, roll);
  return [decidedBy(d), decisionValue(d)];
};

t.test('DISABLED: not enabled, whatever the request carries', async (t) => {
  t.same(decide(state({ enabled: false, cohorts: ['a'] }), ctx({ cohort: 'a' })), [kDecidedDisabled, false]);
});

t.test('cohort in the list: true, decided by the cohort (even at 0% with an unmatched audience)', async (t) => {
  t.same(decide(state({ trafficPercentage: 0, cohorts: ['a'], audienceId: audience.id }, audience), ctx({ cohort: 'a' })), [
    kDecidedCohort,
    true,
  ]);
});

t.test('audience: not matched is false; matched at 0/100% is the percentage, decided by the audience', async (t) => {
  t.same(decide(state({ audienceId: audience.id }, audience), ctx({ plan: 'alpha' })), [kDecidedAudience, false]);
  t.same(decide(state({ audienceId: 'aud_gone' }), ctx({ plan: 'beta' })), [kDecidedAudience, false], 'missing audience never matches');
  t.same(decide(state({ audienceId: audience.id }, audience), ctx({ plan: 'beta' })), [kDecidedAudience, true]);
  t.same(decide(state({ audienceId: audience.id, trafficPercentage: 0 }, audience), ctx({ plan: 'beta' })), [kDecidedAudience, false]);
});

t.test('static: no audience and 0% or 100%', async (t) => {
  t.same(decide(state({ trafficPercentage: 100 }), ctx()), [kDecidedStatic, true]);
  t.same(decide(state({ trafficPercentage: 0, cohorts: ['vip'] }), ctx({ cohort: 'other' })), [kDecidedStatic, false]);
});

t.test('split: a keyed bucket; a roll when there is no key (reported apart)', async (t) => {
  for (let i = 0; i < 50; i++) {
    t.same(decide(state({ trafficPercentage: 50 }), ctx({ targetingKey: `k${i}` })), [kDecidedSplit, bucket(kFlag, `k${i}`) < 50]);
    t.same(decide(state({ trafficPercentage: 50, audienceId: audience.id }, audience), ctx({ cohort: `c${i}`, plan: 'beta' })), [
      kDecidedSplit,
      bucket(kFlag, `c${i}`) < 50,
    ]);
  }
  t.same(
    decide(state({ trafficPercentage: 30 }), ctx(), () => 29),
    [kDecidedRoll, true],
  );
  t.same(
    decide(state({ trafficPercentage: 30 }), ctx(), () => 30),
    [kDecidedRoll, false],
  );
});

t.test("evaluateState is decideState's value, for every combination", async (t) => {
  const states = [
    state({ enabled: false }),
    state({ cohorts: ['a'], trafficPercentage: 0 }),
    state({ audienceId: audience.id }, audience),
    state({ trafficPercentage: 37 }),
    state({ trafficPercentage: 0 }),
    state({ audienceId: audience.id, trafficPercentage: 60 }, audience),
  ];
  const contexts = [ctx(), ctx({ cohort: 'a' }), ctx({ targetingKey: 'u1', plan: 'beta' }), ctx({ cohort: 'zz', plan: 'beta' })];
  for (const s of states)
    for (const c of contexts)
      t.equal(
        evaluateState(s, c, () => 5),
        decisionValue(decideState(s, c, () => 5)),
      );
});

t.test('contextFreeDecision: the decision of every context where it names one, and it names one where no context matters', async (t) => {
  const contexts = [
    ctx(),
    ctx({ cohort: 'a' }),
    ctx({ cohort: 'zz' }),
    ctx({ targetingKey: 'u1', plan: 'beta' }),
    ctx({ targetingKey: 'u2', plan: 'alpha' }),
    ctx({ cohort: 'a', targetingKey: 'u3', plan: 'beta' }),
  ];
  const rolls = [() => 0, () => 99];
  let named = 0;
  for (const enabled of [true, false])
    for (const trafficPercentage of [0, 1, 37, 99, 100])
      for (const cohorts of [[], ['a']])
        for (const [audienceId, aud] of [
          [null, undefined],
          [audience.id, audience],
          ['aud_gone', undefined],
        ] as const) {
          const s = state({ enabled, trafficPercentage, cohorts, audienceId }, aud);
          const fixed = contextFreeDecision(s);
          const expected =
            !enabled || (cohorts.length === 0 && audienceId === null && (trafficPercentage === 0 || trafficPercentage === 100));
          t.equal(fixed !== null, expected, `${JSON.stringify({ enabled, trafficPercentage, cohorts, audienceId })}`);
          if (fixed === null) continue;
          named++;
          for (const c of contexts) for (const roll of rolls) t.equal(decideState(s, c, roll), fixed);
        }
  t.equal(named, 32, 'every disabled state, and the enabled ones at 0 or 100% with neither cohorts nor audience');
  const unleash = Object.assign(state(), { unleash: {} as never });
  t.equal(contextFreeDecision(unleash), null, "Unleash's model decides by the context");
  t.equal(contextFreeDecision(Object.assign(state({ enabled: false }), { unleash: {} as never })), kDecidedDisabled << 1);
});

// resolveVariant: the table of src/evaluation/engine/variants.ts (docs/design.md §2b), row by row, with and without a
// rule and a default variant, through the same gate (decideState) and EvalQuery the engine uses.
import t from 'tap';
import { bucket } from '../../../src/evaluation/engine/bucket.js';
import { compileState, decideState, decisionValue, type EvalContext } from '../../../src/evaluation/engine/evaluate.js';
import { EvalQuery } from '../../../src/evaluation/engine/query.js';
import { compileVariants, resolveVariant } from '../../../src/evaluation/engine/variants.js';
import type { EffectiveState } from '../../../src/flags/records/flag-state.js';
import type { TypedVariants } from '../../../src/model/flags.js';
import type { Audience } from '../../../src/model/projects.js';

const kFlag = 'flg_variants';
const kNow = 1_700_000_000_500;
const audience: Audience = { id: 'aud_1', projectId: 'p', name: 'Beta', updatedAt: 0, rules: [{ attribute: 'plan', values: ['beta'] }] };
const colours: TypedVariants = {
  variants: { red: '#f00', green: '#0f0', blue: '#00f' },
  defaultVariant: 'red',
  targeting: { if: [{ '==': [{ var: 'country' }, 'se'] }, 'green', 'blue'] },
};
const noRule: TypedVariants = { ...colours, targeting: {} };

function query(raw: string): EvalQuery {
  const q = new EvalQuery();
  if (!q.parse(raw)) throw new Error(q.error!);
  return q;
}

/** [enabled, reason, variant, value] for a state and a query string. */
function answer(typed: TypedVariants, over: Partial<EffectiveState>, raw: string, aud?: Audience) {
  const state = compileState(kFlag, { enabled: true, trafficPercentage: 100, cohorts: [], audienceId: null, ...over }, aud, undefined);
  const q: EvalContext & EvalQuery = query(raw);
  const decision = decideState(state, q, () => 0);
  const r = resolveVariant(compileVariants(typed, 'checkout-colour'), decision, q, kNow);
  return [decisionValue(decision), r.reason, r.variant, r.value];
}

/** A targetingKey whose bucket for kFlag is below (in) or at least (out) `percentage`. */
function keyFor(percentage: number, inside: boolean): string {
  for (let i = 0; ; i++) if (bucket(kFlag, `k${i}`) < percentage === inside) return `k${i}`;
}

t.test('disabled: DISABLED with no value, rule or not', async (t) => {
  t.same(answer(colours, { enabled: false }, 'country=se'), [false, 'DISABLED', undefined, undefined]);
  t.same(answer(noRule, { enabled: false, cohorts: ['a'] }, 'cohort=a'), [false, 'DISABLED', undefined, undefined]);
});

t.test('gated out: the default variant, DEFAULT (audience, 0%) or SPLIT (the percentage)', async (t) => {
  t.same(answer(colours, { audienceId: 'aud_1' }, 'plan=free&country=se', audience), [false, 'DEFAULT', 'red', '#f00']);
  t.same(answer(colours, { trafficPercentage: 0 }, 'country=se'), [false, 'DEFAULT', 'red', '#f00']);
  t.same(answer(colours, { trafficPercentage: 30 }, `targetingKey=${keyFor(30, false)}&country=se`), [false, 'SPLIT', 'red', '#f00']);
});

t.test('gated in with a rule: flagd decides, whatever let the caller in', async (t) => {
  t.same(answer(colours, {}, 'country=se'), [true, 'TARGETING_MATCH', 'green', '#0f0']);
  t.same(answer(colours, {}, 'country=no'), [true, 'TARGETING_MATCH', 'blue', '#00f']);
  t.same(answer(colours, { cohorts: ['vip'], trafficPercentage: 0 }, 'cohort=vip&country=se'), [true, 'TARGETING_MATCH', 'green', '#0f0']);
  t.same(answer(colours, { audienceId: 'aud_1' }, 'plan=beta&country=fi', audience), [true, 'TARGETING_MATCH', 'blue', '#00f']);
  t.same(answer(colours, { trafficPercentage: 30 }, `targetingKey=${keyFor(30, true)}&country=se`), [
    true,
    'TARGETING_MATCH',
    'green',
    '#0f0',
  ]);
});

t.test('gated in without a rule: the default variant, with the reason that let the caller in', async (t) => {
  t.same(answer(noRule, {}, ''), [true, 'STATIC', 'red', '#f00']);
  t.same(answer(noRule, { cohorts: ['vip'], trafficPercentage: 0 }, 'cohort=vip'), [true, 'TARGETING_MATCH', 'red', '#f00']);
  t.same(answer(noRule, { audienceId: 'aud_1' }, 'plan=beta', audience), [true, 'TARGETING_MATCH', 'red', '#f00']);
  t.same(answer(noRule, { trafficPercentage: 30 }, `targetingKey=${keyFor(30, true)}`), [true, 'SPLIT', 'red', '#f00']);
});

t.test('no default variant: every default-variant row is DEFAULT with no value', async (t) => {
  const none = { ...colours, defaultVariant: null };
  const noneNoRule = { ...noRule, defaultVariant: null };
  t.same(answer(none, { trafficPercentage: 0 }, ''), [false, 'DEFAULT', undefined, undefined]);
  t.same(answer(none, { trafficPercentage: 30 }, `targetingKey=${keyFor(30, false)}`), [false, 'DEFAULT', undefined, undefined]);
  t.same(answer(noneNoRule, {}, ''), [true, 'DEFAULT', undefined, undefined]);
  t.same(answer(noneNoRule, { cohorts: ['vip'] }, 'cohort=vip'), [true, 'DEFAULT', undefined, undefined]);
  t.same(answer(none, {}, 'country=se'), [true, 'TARGETING_MATCH', 'green', '#0f0'], 'a rule still names its variant');
});

t.test("a rule's errors: a variant that does not exist, a rule that gives null", async (t) => {
  const byPlan: TypedVariants = { ...colours, targeting: { var: 'plan' } };
  t.same(answer(byPlan, {}, 'plan=green'), [true, 'TARGETING_MATCH', 'green', '#0f0']);
  const [enabled, reason, variant] = answer(byPlan, {}, 'plan=purple');
  t.same([enabled, reason, variant], [true, 'ERROR', undefined]);
  t.same(answer(byPlan, {}, ''), [true, 'DEFAULT', 'red', '#f00'], 'null: the default variant');
});

t.test('what a rule reads: every query parameter, the three named ones too, the first of a repeat', async (t) => {
  const echo: TypedVariants = {
    variants: { a: 'a', b: 'b' },
    defaultVariant: null,
    targeting: {
      if: [
        { and: [{ '==': [{ var: 'targetingKey' }, 'u1'] }, { '==': [{ var: 'env' }, 'prod'] }, { '==': [{ var: 'x' }, '1'] }] },
        'a',
        'b',
      ],
    },
  };
  t.same(answer(echo, {}, 'targetingKey=u1&env=prod&x=1&x=2').slice(1, 3), ['TARGETING_MATCH', 'a']);
  t.same(answer(echo, {}, 'targetingKey=u1&env=prod&x=2&x=1').slice(1, 3), ['TARGETING_MATCH', 'b']);
  const proto: TypedVariants = { ...echo, targeting: { if: [{ '==': [{ var: '__proto__' }, 'p'] }, 'a', 'b'] } };
  t.same(answer(proto, {}, '__proto__=p').slice(1, 3), ['TARGETING_MATCH', 'a'], 'a parameter named __proto__ is data');
  const flagd: TypedVariants = {
    ...echo,
    targeting: {
      if: [
        { and: [{ '==': [{ var: '$flagd.flagKey' }, 'checkout-colour'] }, { '==': [{ var: '$flagd.timestamp' }, 1_700_000_000] }] },
        'a',
        'b',
      ],
    },
  };
  t.same(answer(flagd, {}, '').slice(1, 3), ['TARGETING_MATCH', 'a'], "$flagd.flagKey is the flag's name, $flagd.timestamp whole seconds");
});

t.test('the answers a state can give are built once: the same object for the same outcome', async (t) => {
  const state = compileState(kFlag, { enabled: true, trafficPercentage: 100, cohorts: [], audienceId: null }, undefined, undefined);
  const variants = compileVariants(colours, 'c');
  const q = query('country=se');
  const d = decideState(state, q, () => 0);
  t.equal(resolveVariant(variants, d, q, kNow), resolveVariant(variants, d, query('country=se'), kNow));
});

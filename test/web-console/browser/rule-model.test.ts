// The rule builder's conversion between flagd JsonLogic and its model (src/web-console/browser/rule-model.ts):
// every operator round-trips (rule -> model -> rule gives the same JSON), the rules the builder cannot
// show are named with the reason, the builder's checks name what they refuse, and random builder models
// round-trip and are accepted by the server's own parser (src/targeting/parse.ts, flagVariantProblems).
import t, { type Test } from 'tap';
import { flagVariantProblems } from '../../../src/targeting/parse.js';
import {
  type Bucket,
  kCompareOps,
  kSemVerOps,
  modelProblems,
  modelToRule,
  type Outcome,
  type RuleModel,
  type RuleNode,
  ruleToModel,
  splitPercentages,
} from '../../../src/web-console/browser/rule-model.js';

const kVariants = { red: '#f00', green: '#0f0', blue: '#00f' };
const kNames = Object.keys(kVariants);

/** rule -> model -> rule, checked identical and accepted by the server's parser; returns the model. */
function roundTrip(t: Test, rule: Record<string, unknown>, name: string): RuleModel {
  const result = ruleToModel(rule);
  if (!result.ok) {
    t.fail(`${name}: ${result.why}`);
    throw new Error(result.why);
  }
  t.same(modelToRule(result.model), rule, `${name}: the same JSON back`);
  t.equal(JSON.stringify(modelToRule(result.model)), JSON.stringify(rule), `${name}: the same text back`);
  t.same(flagVariantProblems({ variants: kVariants, defaultVariant: 'red', targeting: rule }), [], `${name}: flagd loads it`);
  t.same(modelProblems(result.model, kNames), [], `${name}: the builder finds nothing wrong`);
  return result.model;
}

const email = { var: 'email' };

t.test('every operator round-trips', async (t) => {
  const conditions: Record<string, unknown>[] = [
    { '==': [{ var: 'plan' }, 'gold'] },
    { '==': [{ var: 'seats' }, 5] },
    { '==': [{ var: 'beta' }, true] },
    { '!=': [{ var: 'plan' }, 'free'] },
    { in: [{ var: 'country' }, ['NL', 'BE', 'LU']] },
    { in: [{ var: 'tier' }, [1, 2]] },
    { starts_with: [email, 'admin'] },
    { ends_with: [email, '@example.com'] },
    ...kSemVerOps.map((op) => ({ sem_ver: [{ var: 'app.version' }, op, '1.2.3'] })),
    { '<': [{ var: 'age' }, 18] },
    { '<=': [{ var: 'age' }, 18.5] },
    { '>': [{ var: '$flagd.timestamp' }, 1700000000] },
    { '>=': [{ var: 'age' }, -1] },
  ];
  const seen = new Set(conditions.map((c) => Object.keys(c)[0]));
  t.same(
    kCompareOps.filter((op) => !seen.has(op)),
    [],
    'the list covers every operator the builder offers',
  );
  for (const c of conditions) roundTrip(t, { if: [c, 'green', 'red'] }, JSON.stringify(c));
});

t.test('groups, negation, else-if chains, splits and the default round-trip', async (t) => {
  const plan = { '==': [{ var: 'plan' }, 'gold'] };
  const model = roundTrip(
    t,
    {
      if: [
        { and: [plan, { or: [{ ends_with: [email, '@a.com'] }, { '!': [{ starts_with: [email, 'x'] }] }] }] },
        'green',
        { '!': plan },
        {
          fractional: [
            ['red', 25],
            ['blue', 75],
          ],
        },
        { '>=': [{ var: 'age' }, 21] },
        null,
        { fractional: [{ var: 'company' }, ['red'], ['green', 2]] },
      ],
    },
    'a chain of three branches and a split',
  );
  t.equal(model.branches.length, 3);
  t.match(model.branches[0]!.when, {
    kind: 'all',
    items: [{ kind: 'compare' }, { kind: 'any', items: [{}, { kind: 'not', bare: false }] }],
  });
  t.match(model.branches[1]!.when, { kind: 'not', bare: true });
  t.same(model.branches[2]!.serve, { kind: 'default' });
  t.same(model.otherwise, {
    kind: 'split',
    by: 'company',
    buckets: [
      { variant: 'red', weight: null },
      { variant: 'green', weight: 2 },
    ],
  });
  roundTrip(t, { if: [plan, 'green'] }, 'no otherwise: left out');
  roundTrip(
    t,
    {
      fractional: [
        ['red', 50],
        ['green', 50],
      ],
    },
    'a bare split, no branch',
  );
  t.same(ruleToModel({}), { ok: true, model: { branches: [], otherwise: null } }, 'no rule: an empty model');
  t.same(modelToRule({ branches: [], otherwise: null }), {}, 'and back');
});

t.test('weights are shown as percentages of their total', async (t) => {
  const b = (weight: number | null): Bucket => ({ variant: 'red', weight });
  t.same(splitPercentages([b(25), b(75)]), [25, 75]);
  t.same(splitPercentages([b(1), b(2)]), [33.3, 66.7]);
  t.same(splitPercentages([b(null), b(3)]), [25, 75], 'no weight counts as 1, as flagd counts it');
  t.same(splitPercentages([b(0), b(0)]), [0, 0]);
});

t.test('a rule the builder cannot show is named with the reason', async (t) => {
  const cases: [unknown, RegExp][] = [
    [{ '===': [{ var: 'plan' }, 'gold'] }, /its top is "==="/],
    [{ if: [{ '===': [{ var: 'plan' }, 'gold'] }, 'red', null] }, /the operator "==="/],
    [{ if: [{ '==': ['gold', { var: 'plan' }] }, 'red'] }, /first operand is not an attribute/],
    [{ if: [{ '==': [{ var: ['plan', 'free'] }, 'gold'] }, 'red'] }, /first operand is not an attribute/],
    [{ if: [{ '<': [1, { var: 'age' }, 9] }, 'red'] }, /a "<" with other than 2 operands/],
    [{ if: [{ '==': [{ var: 'a' }, { var: 'b' }] }, 'red'] }, /compares with text, a number or true\/false/],
    [{ if: [{ in: [{ var: 'email' }, 'example.com'] }, 'red'] }, /an "in" whose values are not a list/],
    [{ if: [{ in: [{ var: 'tier' }, ['1', 1]] }, 'red'] }, /all of one type/],
    [{ if: [{ and: [] }, 'red'] }, /an "and" without conditions/],
    [{ if: [{ '==': [{ var: 'a' }, 1] }, { if: [{ '==': [{ var: 'b' }, 1] }, 'red', 'green'] }] }, /a branch serving "if"/],
    [{ if: [{ '==': [{ var: 'a' }, 1] }, { cat: ['r', 'ed'] }] }, /a branch serving "cat"/],
    [{ fractional: [{ cat: [{ var: '$flagd.flagKey' }, { var: 'email' }] }, ['red', 50], ['green', 50]] }, /bucketing by an expression/],
    [{ fractional: [['red', 1.5]] }, /not a whole number/],
    [{ or: [{ var: 'x' }, 'red'] }, /its top is "or"/],
    [{ if: [{ '==': [{ var: 'a' }, 1], '!=': [{ var: 'b' }, 1] }, 'red'] }, /has 2 keys/],
  ];
  for (const [rule, why] of cases) {
    const result = ruleToModel(rule);
    t.equal(result.ok, false, JSON.stringify(rule));
    if (!result.ok) {
      t.match(result.why, /^The builder cannot show this rule \(.+\); edit it as JSON\.$/);
      t.match(result.why, why, JSON.stringify(rule));
    }
  }
});

t.test("the builder's checks name what the server would refuse or never serve", async (t) => {
  const model: RuleModel = {
    branches: [
      { when: { kind: 'compare', attribute: '', op: '<', value: Number.NaN }, serve: { kind: 'variant', name: 'purple' } },
      {
        when: {
          kind: 'all',
          items: [
            { kind: 'compare', attribute: 'v', op: 'sem_ver', semVer: '>=', value: '' },
            { kind: 'any', items: [] },
          ],
        },
        serve: {
          kind: 'split',
          by: '',
          buckets: [
            { variant: 'red', weight: 0 },
            { variant: 'gray', weight: 1.5 },
          ],
        },
      },
    ],
    otherwise: { kind: 'split', by: null, buckets: [{ variant: 'red', weight: 0 }] },
  };
  t.same(modelProblems(model, kNames), [
    'Branch 1, condition 1: name the attribute to compare.',
    'Branch 1, condition 1: write the value as a number.',
    'Branch 1 serves "purple", which is no variant.',
    'Branch 2, condition 1.1: give a version such as 1.2.0.',
    'Branch 2, condition 1.2: a group needs at least one condition.',
    'Branch 2: name the attribute the split buckets by.',
    'Branch 2, share 2: "gray" is no variant.',
    'Branch 2, share 2: a weight is a whole number, 0 or more.',
    'Otherwise: the weights add up to 0; give at least one share some weight.',
  ]);
  t.same(modelProblems({ branches: [], otherwise: { kind: 'variant', name: 'red' } }, kNames), [
    'With no branch, make "red" the default variant instead: a rule serving one variant to everyone is no rule.',
  ]);
});

/** A small seeded generator (mulberry32), so a failure names a seed that repeats it. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function randomModel(rnd: () => number): RuleModel {
  const int = (n: number) => Math.floor(rnd() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  const word = () => pick(['plan', 'email', 'country', 'app.version', 'age', 'ü-ñ', 'a b', '$flagd.timestamp']);
  const text = () => pick(['', 'gold', 'München', '"quoted"', '🚀', 'a,b']);
  const node = (depth: number): RuleNode => {
    const roll = int(depth > 2 ? 6 : 9);
    if (roll === 6 || roll === 7)
      return { kind: roll === 6 ? 'all' : 'any', items: Array.from({ length: 1 + int(3) }, () => node(depth + 1)) };
    if (roll === 8) return { kind: 'not', item: node(depth + 1), bare: rnd() < 0.5 };
    const attribute = word();
    const op = pick(kCompareOps);
    switch (op) {
      case '==':
      case '!=':
        return { kind: 'compare', attribute, op, value: pick([text(), int(100) - 50, rnd() < 0.5]) };
      case 'in':
        return rnd() < 0.5
          ? { kind: 'compare', attribute, op, value: Array.from({ length: 1 + int(3) }, text) }
          : { kind: 'compare', attribute, op, value: Array.from({ length: 1 + int(3) }, () => int(1000) / 10) };
      case 'starts_with':
      case 'ends_with':
        return { kind: 'compare', attribute, op, value: text() };
      case 'sem_ver':
        return {
          kind: 'compare',
          attribute,
          op,
          semVer: pick(kSemVerOps),
          value: `${int(5)}.${int(20)}.${int(9)}${rnd() < 0.3 ? '-beta.1' : ''}`,
        };
      default:
        return { kind: 'compare', attribute, op, value: int(2000) - 1000 };
    }
  };
  const outcome = (): Outcome => {
    const roll = int(4);
    if (roll === 0) return { kind: 'default' };
    if (roll === 1) return { kind: 'variant', name: pick(kNames) };
    const buckets = Array.from(
      { length: 1 + int(3) },
      (): Bucket => ({ variant: pick(kNames), weight: rnd() < 0.2 ? null : 1 + int(100) }),
    );
    return { kind: 'split', by: rnd() < 0.5 ? null : word(), buckets };
  };
  const branches = Array.from({ length: int(4) }, () => ({ when: node(0), serve: outcome() }));
  // No branch: a bare split or no rule; one variant for everyone is no rule (modelProblems says so).
  const otherwise =
    branches.length === 0
      ? rnd() < 0.5
        ? null
        : { kind: 'split' as const, by: null, buckets: [{ variant: 'red', weight: 1 }] }
      : rnd() < 0.3
        ? null
        : outcome();
  return { branches, otherwise };
}

t.test('random builder models round-trip and the server parses what they write', async (t) => {
  // Each seed's problems, so one failing model is named (and repeated by its seed) without 4,000 lines of passes.
  const failures: string[] = [];
  let branches = 0;
  for (let seed = 1; seed <= 1000; seed++) {
    const model = randomModel(random(seed));
    branches += model.branches.length;
    const rule = modelToRule(model);
    const text = JSON.stringify(rule);
    const checks = modelProblems(model, kNames);
    if (checks.length > 0) failures.push(`seed ${seed}: the builder's checks refuse it: ${checks.join(' ')}`);
    const back = ruleToModel(JSON.parse(text));
    if (!back.ok) failures.push(`seed ${seed}: ${back.why} (${text})`);
    else if (JSON.stringify(modelToRule(back.model)) !== text || JSON.stringify(back.model) !== JSON.stringify(model))
      failures.push(`seed ${seed}: another rule back (${text})`);
    const parsed = flagVariantProblems({ variants: kVariants, defaultVariant: 'red', targeting: rule });
    if (parsed.length > 0) failures.push(`seed ${seed}: the server refuses ${text}: ${JSON.stringify(parsed)}`);
  }
  t.same(failures, []);
  t.ok(branches > 1000, `the models hold ${branches} branches in all`);
});

t.test('a shared fragment as a condition: {"$ref": NAME} round-trips, and one the project lacks is named', async (t) => {
  const rule = { if: [{ and: [{ $ref: 'paying' }, { '!': { $ref: 'staff' } }] }, 'green', 'red'] };
  const result = ruleToModel(rule);
  if (!result.ok) throw new Error(result.why);
  t.same(result.model.branches[0]!.when, {
    kind: 'all',
    items: [
      { kind: 'fragment', name: 'paying' },
      { kind: 'not', item: { kind: 'fragment', name: 'staff' }, bare: true },
    ],
  });
  t.equal(JSON.stringify(modelToRule(result.model)), JSON.stringify(rule), 'the same text back');
  t.same(modelProblems(result.model, kNames, ['paying', 'staff']), [], 'both are fragments of the project');
  t.same(modelProblems(result.model, kNames, ['paying']), [
    'Branch 1, condition 1.2: "staff" is no shared fragment of this project (its Shared fragments page lists them).',
  ]);
  const none = {
    branches: [{ when: { kind: 'fragment' as const, name: '' }, serve: { kind: 'variant' as const, name: 'green' } }],
    otherwise: null,
  };
  t.same(modelProblems(none, kNames, []), ['Branch 1, condition 1: pick a shared fragment.']);
  t.match(ruleToModel({ if: [{ $ref: 7 }, 'green'] }), { ok: false, why: /a "\$ref" that names no fragment/ });
});

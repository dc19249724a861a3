// Each operator on flagd's documented examples (flagd.dev, reference/custom-operations and
// flag-definitions): our answer pinned, and flagd-core's checked to be the same.
import t from 'tap';
import type { TestContext } from '../helpers/cli.js';
import type { FlagValueType } from '../../src/targeting/definition.js';
import { bothAnswers } from './flagd-core-oracle.js';

const kColors = { red: '#FF0000', blue: '#0000FF', green: '#00FF00' };

function flag(targeting: unknown, variants: Record<string, unknown> = kColors, defaultVariant: string | null = 'blue') {
  return { flags: { headerColor: { state: 'ENABLED', variants, defaultVariant, targeting } } };
}

/** Asserts our variant and reason, and that flagd-core answers the same. */
function expectVariant(
  t: TestContext,
  document: unknown,
  context: Record<string, unknown>,
  variant: string | undefined,
  reason: string,
  type: FlagValueType = 'string',
) {
  const { ours, theirs } = bothAnswers(document, 'headerColor', type, context);
  t.equal(ours.variant, variant, `variant for ${JSON.stringify(context)}`);
  t.equal(ours.reason, reason, `reason for ${JSON.stringify(context)}`);
  t.same(ours, theirs, `flagd-core agrees for ${JSON.stringify(context)}`);
}

t.test('sem_ver: the documented >= example, v prefixes, partial versions, ^ and ~', async (t) => {
  const ge = flag({ if: [{ sem_ver: [{ var: 'version' }, '>=', '1.0.0'] }, 'red', 'green'] });
  expectVariant(t, ge, { version: '1.0.1' }, 'red', 'TARGETING_MATCH');
  expectVariant(t, ge, { version: '0.1.0' }, 'green', 'TARGETING_MATCH');
  expectVariant(t, ge, { version: 'v1.0.0' }, 'red', 'TARGETING_MATCH');
  expectVariant(t, ge, { version: 'V2' }, 'red', 'TARGETING_MATCH');
  expectVariant(t, ge, { version: 1 }, 'red', 'TARGETING_MATCH');
  expectVariant(t, ge, { version: '1.0.0-rc.1' }, 'green', 'TARGETING_MATCH');
  expectVariant(t, ge, { version: 'not-a-version' }, 'green', 'TARGETING_MATCH');
  const caret = flag({ if: [{ sem_ver: [{ var: 'version' }, '^', '1.2.0'] }, 'red', 'green'] });
  expectVariant(t, caret, { version: '1.9.9' }, 'red', 'TARGETING_MATCH');
  expectVariant(t, caret, { version: '2.0.0' }, 'green', 'TARGETING_MATCH');
  const tilde = flag({ if: [{ sem_ver: [{ var: 'version' }, '~', '1.2.0'] }, 'red', 'green'] });
  expectVariant(t, tilde, { version: '1.2.7+build.3' }, 'red', 'TARGETING_MATCH');
  expectVariant(t, tilde, { version: '1.3.0' }, 'green', 'TARGETING_MATCH');
  // Not an if: sem_ver alone gives a boolean, which names the variant "true" or "false".
  const bare = flag({ sem_ver: [{ var: 'version' }, '=', '1.0.0'] }, { true: 'yes', false: 'no' }, 'false');
  expectVariant(t, bare, { version: '1.0.0+x' }, 'true', 'TARGETING_MATCH');
  expectVariant(t, bare, { version: 'junk' }, 'false', 'DEFAULT');
});

t.test('starts_with / ends_with: the documented email examples; non-strings give null', async (t) => {
  const starts = flag({ if: [{ starts_with: [{ var: 'email' }, 'user@faas'] }, 'red', 'green'] });
  expectVariant(t, starts, { email: 'user@faas.com' }, 'red', 'TARGETING_MATCH');
  expectVariant(t, starts, { email: 'someone@faas.com' }, 'green', 'TARGETING_MATCH');
  expectVariant(t, starts, { email: 42 }, 'green', 'TARGETING_MATCH');
  const ends = flag({ if: [{ ends_with: [{ var: 'email' }, 'faas.com'] }, 'red', 'green'] });
  expectVariant(t, ends, { email: 'user@faas.com' }, 'red', 'TARGETING_MATCH');
  expectVariant(t, ends, {}, 'green', 'TARGETING_MATCH');
});

t.test('fractional: the documented weighted split by flagKey + email, sticky, and by targetingKey', async (t) => {
  const weighted = flag({
    fractional: [{ cat: [{ var: '$flagd.flagKey' }, { var: 'email' }] }, ['red', 50], ['blue', 20], ['green', 30]],
  });
  const seen = new Map<string, number>();
  for (let i = 0; i < 300; i++) {
    const { ours, theirs } = bothAnswers(weighted, 'headerColor', 'string', { email: `user${i}@example.com` });
    t.same(ours, theirs);
    seen.set(ours.variant!, (seen.get(ours.variant!) ?? 0) + 1);
  }
  // 300 users split about 50/20/30.
  t.ok(seen.get('red')! > 120 && seen.get('blue')! > 35 && seen.get('green')! > 60, JSON.stringify([...seen]));
  const again = bothAnswers(weighted, 'headerColor', 'string', { email: 'user7@example.com' });
  t.same(again.ours, bothAnswers(weighted, 'headerColor', 'string', { email: 'user7@example.com' }).ours, 'sticky');
  const even = flag({ fractional: [['red'], ['blue'], ['green']] });
  expectVariant(t, even, {}, 'blue', 'DEFAULT');
  for (const key of ['alice', 'bob', 'carol', 'dave']) {
    const { ours, theirs } = bothAnswers(even, 'headerColor', 'string', { targetingKey: key });
    t.equal(ours.reason, 'TARGETING_MATCH');
    t.same(ours, theirs, key);
  }
  // Weights computed by a rule (a time-based rollout), negative clamped to 0.
  const rollout = flag({
    fractional: [
      ['red', { '-': [{ var: 'n' }, 10] }],
      ['green', 1],
    ],
  });
  expectVariant(t, rollout, { targetingKey: 'k', n: 5 }, 'green', 'TARGETING_MATCH');
});

t.test('$flagd.flagKey and $flagd.timestamp are in the context, over any $flagd attribute', async (t) => {
  const byKey = flag({ if: [{ '==': [{ var: '$flagd.flagKey' }, 'headerColor'] }, 'red', 'green'] });
  expectVariant(t, byKey, { $flagd: { flagKey: 'other' } }, 'red', 'TARGETING_MATCH');
  const nowMs = Date.UTC(2026, 0, 1);
  const byTime = flag({ if: [{ '>=': [{ var: '$flagd.timestamp' }, nowMs / 1000] }, 'red', 'green'] });
  for (const [at, variant] of [
    [nowMs, 'red'],
    [nowMs - 1000, 'green'],
  ] as const) {
    const { ours, theirs } = bothAnswers(byTime, 'headerColor', 'string', {}, at);
    t.equal(ours.variant, variant);
    t.same(ours, theirs);
  }
});

t.test('comparisons, in, and/or/!, var paths and defaults, cat, substr, arithmetic', async (t) => {
  const cases: [unknown, Record<string, unknown>, string | undefined][] = [
    [{ if: [{ in: [{ var: 'country' }, ['NL', 'DE']] }, 'red', 'green'] }, { country: 'NL' }, 'red'],
    [{ if: [{ in: ['@faas', { var: 'email' }] }, 'red', 'green'] }, { email: 'a@faas.com' }, 'red'],
    [{ if: [{ and: [{ '>=': [{ var: 'age' }, 18] }, { '<': [{ var: 'age' }, 65] }] }, 'red', 'green'] }, { age: '30' }, 'red'],
    [{ if: [{ or: [{ '==': [{ var: 'tier' }, 'gold'] }, { '!': [{ var: 'tier' }] }] }, 'red', 'green'] }, {}, 'red'],
    [{ if: [{ '<': [1, { var: 'n' }, 10] }, 'red', 'green'] }, { n: 5 }, 'red'],
    [{ if: [{ '===': [{ var: 'n' }, '5'] }, 'red', 'green'] }, { n: 5 }, 'green'],
    [{ var: 'user.favourite.color' }, { user: { favourite: { color: 'red' } } }, 'red'],
    [{ var: ['user.plan', 'green'] }, { user: {} }, 'green'],
    [{ var: 'user.tags.1' }, { user: { tags: ['x', 'blue'] } }, 'blue'],
    [{ cat: ['re', { var: 'suffix' }] }, { suffix: 'd' }, 'red'],
    [{ substr: [{ var: 'name' }, 0, 3] }, { name: 'redwood' }, 'red'],
    [{ substr: [{ var: 'name' }, -4] }, { name: 'sky-blue' }, 'blue'],
    [{ if: [{ '==': [{ '%': [{ var: 'n' }, 2] }, 0] }, 'red', 'green'] }, { n: 4 }, 'red'],
    [{ if: [{ '>': [{ '*': [{ var: 'n' }, 1.5] }, { '+': [1, 2] }] }, 'red', 'green'] }, { n: 4 }, 'red'],
    [{ if: [{ missing: ['email'] }, 'red', 'green'] }, {}, 'red'],
    [{ if: [{ missing_some: [1, ['email', 'phone']] }, 'red', 'green'] }, { phone: '1' }, 'green'],
    [{ if: [{ '==': [{ max: [1, { var: 'n' }] }, 3] }, 'red', 'green'] }, { n: 3 }, 'red'],
    [{ if: [{ in: ['b', { merge: [['a'], { var: 'more' }] }] }, 'red', 'green'] }, { more: ['b'] }, 'red'],
  ];
  for (const [rule, context, variant] of cases) {
    const { ours, theirs } = bothAnswers(flag(rule), 'headerColor', 'string', context);
    t.equal(ours.variant, variant, JSON.stringify(rule));
    t.same(ours, theirs, `flagd-core agrees on ${JSON.stringify(rule)}`);
  }
});

t.test('$evaluators: a shared fragment used by two flags', async (t) => {
  const document = {
    $evaluators: { emailWithFaas: { ends_with: [{ var: 'email' }, '@faas.com'] } },
    flags: {
      headerColor: { state: 'ENABLED', variants: kColors, defaultVariant: 'blue', targeting: { if: [{ $ref: 'emailWithFaas' }, 'red'] } },
      fibAlgo: {
        state: 'ENABLED',
        variants: { recursive: 'recursive', binet: 'binet' },
        defaultVariant: 'recursive',
        targeting: { if: [{ $ref: 'emailWithFaas' }, 'binet', null] },
      },
    },
  };
  for (const [key, email, variant] of [
    ['headerColor', 'a@faas.com', 'red'],
    ['headerColor', 'a@example.com', 'blue'],
    ['fibAlgo', 'a@faas.com', 'binet'],
    ['fibAlgo', 'a@example.com', 'recursive'],
  ] as const) {
    const { ours, theirs } = bothAnswers(document, key, 'string', { email });
    t.equal(ours.variant, variant, `${key} ${email}`);
    t.same(ours, theirs);
  }
});

// design §2, one test per rule, on the pure evaluation function.
import t from 'tap';
import { bucket, fractionalBucket } from '../../../src/evaluation/engine/bucket.js';
import { FlagdCoreOracle } from '../../targeting/flagd-core-oracle.js';
import { compileState, evaluateState, matchesAudience, randomRoll, type EvalContext } from '../../../src/evaluation/engine/evaluate.js';
import type { EffectiveState } from '../../../src/flags/records/flag-state.js';
import type { Audience } from '../../../src/model/projects.js';

const kFlag = 'flg_rules';
const audience: Audience = {
  id: 'aud_1',
  projectId: 'p',
  name: 'Beta NL',
  updatedAt: 0,
  rules: [
    { attribute: 'plan', values: ['beta', 'alpha'] },
    { attribute: 'country', values: ['NL'] },
  ],
};

const state = (over: Partial<EffectiveState> = {}, aud: Audience | undefined = undefined) =>
  compileState(kFlag, { enabled: true, trafficPercentage: 100, cohorts: [], audienceId: null, ...over }, aud, undefined);

function ctx(opts: { cohort?: string; targetingKey?: string; attrs?: Record<string, string> } = {}): EvalContext {
  const attrs = opts.attrs ?? {};
  return {
    cohort: opts.cohort ?? null,
    targetingKey: opts.targetingKey ?? null,
    attribute: (name) => (Object.hasOwn(attrs, name) ? attrs[name] : undefined),
  };
}

const never = () => {
  throw new Error('no random roll expected');
};

t.test('rule: not enabled -> false, whatever else the request carries', async (t) => {
  const s = state({ enabled: false, cohorts: ['alice'] });
  t.equal(evaluateState(s, ctx({ cohort: 'alice' }), never), false);
  t.equal(evaluateState(s, ctx({ targetingKey: 'k' }), never), false);
  t.equal(evaluateState(s, ctx(), never), false);
});

t.test('rule: a cohort in the effective list -> true, regardless of percentage and audience', async (t) => {
  const s = state({ trafficPercentage: 0, cohorts: ['alice', 'bob'], audienceId: audience.id }, audience);
  t.equal(evaluateState(s, ctx({ cohort: 'alice' }), never), true, '0% and audience not matched');
  t.equal(evaluateState(s, ctx({ cohort: 'bob', targetingKey: 'x' }), never), true);
  t.equal(evaluateState(s, ctx({ cohort: 'Alice' }), never), false, 'exact, case-sensitive');
  t.equal(evaluateState(s, ctx({ cohort: 'carol' }), never), false, 'not in list: the other rules decide');
});

t.test('rule: audience set and not matched -> false (even at 100%)', async (t) => {
  const s = state({ audienceId: audience.id }, audience);
  t.equal(evaluateState(s, ctx({ attrs: { plan: 'beta', country: 'NL' } }), never), true, 'every rule matches');
  t.equal(evaluateState(s, ctx({ attrs: { plan: 'alpha', country: 'NL' } }), never), true, 'any value of a rule');
  t.equal(evaluateState(s, ctx({ attrs: { plan: 'beta', country: 'DE' } }), never), false, 'one rule fails');
  t.equal(evaluateState(s, ctx({ attrs: { plan: 'beta' } }), never), false, 'missing attribute');
  t.equal(evaluateState(s, ctx({ attrs: { plan: 'Beta', country: 'NL' } }), never), false, 'case-sensitive');
  t.equal(evaluateState(s, ctx({ attrs: { plan: '', country: 'NL' } }), never), false, 'empty value');
  t.equal(evaluateState(s, ctx({ cohort: 'beta', targetingKey: 'NL' }), never), false, 'cohort/targetingKey are not attributes');
});

t.test('rule: an audience id whose audience no longer exists never matches (fail closed)', async (t) => {
  const s = state({ audienceId: 'aud_gone' }, undefined);
  t.equal(s.audience, null);
  t.equal(evaluateState(s, ctx({ attrs: { plan: 'beta', country: 'NL' } }), never), false);
  t.equal(evaluateState(state({ audienceId: 'aud_gone', cohorts: ['c'] }), ctx({ cohort: 'c' }), never), true, 'cohort still wins');
});

t.test('matchesAudience: every rule present and equal to one of its values', async (t) => {
  const compiled = state({ audienceId: audience.id }, audience).audience!;
  t.equal(matchesAudience(compiled, ctx({ attrs: { plan: 'alpha', country: 'NL', extra: 'x' } })), true);
  t.equal(matchesAudience(compiled, ctx({ attrs: {} })), false);
});

t.test('rule: with targetingKey, bucket(flagId, targetingKey) < percentage (sticky)', async (t) => {
  for (const pct of [1, 10, 33, 50, 99]) {
    const s = state({ trafficPercentage: pct });
    for (let i = 0; i < 200; i++) {
      const key = `user-${i}`;
      t.equal(evaluateState(s, ctx({ targetingKey: key }), never), bucket(kFlag, key) < pct);
    }
  }
});

t.test('rule: targetingKey is the key even when a cohort (not in the list) is sent', async (t) => {
  const s = state({ trafficPercentage: 50, cohorts: ['other'] });
  for (let i = 0; i < 100; i++) {
    const got = evaluateState(s, ctx({ targetingKey: `k${i}`, cohort: `c${i}` }), never);
    t.equal(got, bucket(kFlag, `k${i}`) < 50);
  }
});

t.test('rule: with only cohort, the cohort is the bucketing key (sticky)', async (t) => {
  const s = state({ trafficPercentage: 50, cohorts: ['listed'] });
  for (let i = 0; i < 100; i++) t.equal(evaluateState(s, ctx({ cohort: `c${i}` }), never), bucket(kFlag, `c${i}`) < 50);
});

t.test('rule: neither key -> a fresh roll each request, compared with the percentage', async (t) => {
  const s = state({ trafficPercentage: 30 });
  t.equal(
    evaluateState(s, ctx(), () => 29),
    true,
  );
  t.equal(
    evaluateState(s, ctx(), () => 30),
    false,
  );
  let rolls = 0;
  evaluateState(s, ctx(), () => {
    rolls++;
    return 0;
  });
  t.equal(rolls, 1, 'one roll per evaluation');
  const seen = new Set<boolean>();
  for (let i = 0; i < 200; i++) seen.add(evaluateState(state({ trafficPercentage: 50 }), ctx()));
  t.same([...seen].sort(), [false, true], 'the default roll gives both answers at 50%');
});

t.test('randomRoll is an integer 0..99 and covers the range', async (t) => {
  const seen = new Set<number>();
  for (let i = 0; i < 5000; i++) {
    const r = randomRoll();
    if (!(Number.isInteger(r) && r >= 0 && r < 100)) t.fail(`roll ${r}`);
    seen.add(r);
  }
  t.equal(seen.size, 100);
});

t.test('0% is false and 100% is true for everyone in the audience, keyed or not', async (t) => {
  for (let i = 0; i < 100; i++) {
    t.equal(evaluateState(state({ trafficPercentage: 0 }), ctx({ targetingKey: `k${i}` }), never), false);
    t.equal(evaluateState(state({ trafficPercentage: 100 }), ctx({ targetingKey: `k${i}` }), never), true);
  }
  t.equal(evaluateState(state({ trafficPercentage: 0 }), ctx(), never), false);
  t.equal(evaluateState(state({ trafficPercentage: 100 }), ctx(), never), true);
});

t.test('a flag made with fractional bucketing splits as flagd-core does with fractional over "id:key"', async (t) => {
  const oracle = new FlagdCoreOracle();
  for (const pct of [1, 10, 33, 50, 99]) {
    oracle.load({
      flags: {
        f: {
          state: 'ENABLED',
          variants: { on: true, off: false },
          defaultVariant: 'off',
          targeting: { fractional: [{ cat: [kFlag, ':', { var: 'targetingKey' }] }, ['on', pct], ['off', 100 - pct]] },
        },
      },
    });
    const s = compileState(kFlag, { enabled: true, trafficPercentage: pct, cohorts: [], audienceId: null }, undefined, 'fractional');
    let differsFromModulo = 0;
    for (let i = 0; i < 500; i++) {
      const key = `user-${i}`;
      const ours = evaluateState(s, ctx({ targetingKey: key }), never);
      t.equal(ours, oracle.resolve('f', 'boolean', { targetingKey: key }, 0).value, `${key} at ${pct}%`);
      t.equal(ours, fractionalBucket(kFlag, key) < pct);
      if (ours !== bucket(kFlag, key) < pct) differsFromModulo++;
    }
    // The two functions are different splits: only a flag made with fractional bucketing uses this one.
    if (pct !== 1 && pct !== 99) t.ok(differsFromModulo > 0, `fractional and modulo differ at ${pct}%`);
  }
});

t.test('raising the percentage only ever adds keys', async (t) => {
  let before = new Set<string>();
  for (let pct = 0; pct <= 100; pct += 5) {
    const on = new Set<string>();
    for (let i = 0; i < 300; i++)
      if (evaluateState(state({ trafficPercentage: pct }), ctx({ targetingKey: `u${i}` }), never)) on.add(`u${i}`);
    for (const k of before) if (!on.has(k)) t.fail(`${k} dropped at ${pct}%`);
    before = on;
  }
  t.equal(before.size, 300);
});

t.test('the same key gets the same bucket in every environment (the flag id is the only salt)', async (t) => {
  const prod = state({ trafficPercentage: 40 });
  const staging = state({ trafficPercentage: 40, cohorts: ['x'] });
  for (let i = 0; i < 100; i++) {
    t.equal(evaluateState(prod, ctx({ targetingKey: `k${i}` }), never), evaluateState(staging, ctx({ targetingKey: `k${i}` }), never));
  }
});

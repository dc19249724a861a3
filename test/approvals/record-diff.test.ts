// `same` (src/model/json-same.ts) is JSON's equality with key order aside: the rule by which the gate decides
// whether a write moved a field. Checked against the canonical JSON it replaced, over generated values.
import fc from 'fast-check';
import t from 'tap';
import { changedPaths } from '../../src/approvals/record-diff.js';
import { same } from '../../src/model/json-same.js';

/** The definition `same` keeps: both values written as JSON with their keys sorted. */
function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v,
  );
}

// Values of few distinct leaves and keys, so that pairs are often equal or nearly so.
const leaf = fc.constantFrom<unknown>(undefined, null, 0, -0, 1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '', 'a', 'b', true, false);
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('value'), { maxKeys: 3 }),
  ),
}));

t.test('same answers as canonical JSON does, for any two values', async (t) => {
  fc.assert(
    fc.property(value, value, (a, b) => same(a, b) === (canonical(a) === canonical(b))),
    { numRuns: 20_000 },
  );
  // A value and a copy of it with its keys in another order, or an undefined key added.
  fc.assert(
    fc.property(value, (a) => {
      const copy = JSON.parse(JSON.stringify({ v: a ?? null })).v;
      return same(a, copy) && same(copy, a);
    }),
  );
  t.pass('checked');
});

t.test('the cases the gate meets', async (t) => {
  t.ok(same({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }), 'key order aside');
  t.ok(same({ a: 1, b: undefined }, { a: 1 }), 'an undefined key is absent');
  t.ok(same(undefined, null), 'an absent record is null');
  t.notOk(same({ a: 1 }, { a: 1, b: null }), 'a null key is present');
  t.notOk(same([1, 2], [2, 1]), 'arrays in order');
  t.notOk(same({ a: [] }, { a: {} }), 'an array is not an object');
  t.notOk(same('1', 1), 'a string is not a number');
  t.same(changedPaths({ e: { p: { on: true, pct: 5 } } }, { e: { p: { pct: 5, on: false } } }), [['e', 'p', 'on']]);
});

// A rule's resolved size (refs.ts; docs/operations.md, "Rules: resolved size"): counted without writing
// the rule out, exactly (the bytes of its compact JSON, UTF-8), on DAG-shaped references; a rule or an
// evaluator over 1 MiB resolved, and a document whose references add over 1 MiB to its flags' rules, are
// refused naming the flag; a rule sent without references (a PATCH) is held to the same limit. The
// property: whatever the parser accepts is within the limits, and whatever is over them is refused.
import fc from 'fast-check';
import t from 'tap';
import { flagVariantProblems, parseFlagDefinition } from '../../src/targeting/parse.js';
import { problemText } from '../../src/targeting/problems.js';
import { kMaxAddedRuleBytes, kMaxRuleBytes, kMaxRuleDepth } from '../../src/targeting/refs.js';
import { doublingEvaluators, probeFlagdDocument, topRule } from '../helpers/ref-expansion.js';

const kBool = { on: true, off: false };
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

function problems(document: unknown): string[] {
  const r = parseFlagDefinition(document);
  return r.ok ? [] : r.problems.map(problemText);
}

/** The resolved size of `node`, by an independent oracle: each reference written as 0, then its target's size added for it. */
function oracleBytes(node: unknown, evaluators: Record<string, unknown>, memo = new Map<string, number>()): number {
  let added = 0;
  const refsAsZero = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(refsAsZero);
    if (value === null || typeof value !== 'object') return value;
    const object = value as Record<string, unknown>;
    if (Object.keys(object).length === 1 && typeof object.$ref === 'string') {
      const name = object.$ref;
      if (!memo.has(name)) memo.set(name, oracleBytes(evaluators[name], evaluators, memo));
      added += memo.get(name)! - 1;
      return 0;
    }
    return Object.fromEntries(Object.entries(object).map(([k, v]) => [k, refsAsZero(v)]));
  };
  return bytes(refsAsZero(node)) + added;
}

/** The figure a problem gives: `resolves to N bytes`. */
const figure = (problem: string) => Number(/resolves to (\d+) bytes/.exec(problem)?.[1]);

t.test("the probe's doubling chain is counted, not expanded: exact figures far past what could be written out", async (t) => {
  const depth = 64;
  const document = probeFlagdDocument(depth);
  const evaluators = doublingEvaluators(depth);
  const found = problems(document);
  const level = (n: number) => found.find((p) => p.startsWith(`$evaluators.l${n}:`));
  // l0 to l13 add about 640 KB to the document's rules; l14 as much again: past 1 MiB in all, refused.
  t.equal(level(13), undefined);
  t.match(level(14), /^\$evaluators\.l14: its \$refs add \d+ bytes .* they may add at most 1048576 bytes \(1 MiB\)$/);
  // l15 resolves to about 1.2 MiB: refused on its own.
  t.equal(figure(level(15)!), oracleBytes(evaluators.l15, evaluators));
  t.equal(figure(level(15)!), 10 + 2 * oracleBytes(evaluators.l14, evaluators), 'twice the level below, and {"or":[,]}');
  t.equal(figure(level(40)!), oracleBytes(evaluators.l40, evaluators), 'l40: about 43 TB, counted');
  t.match(level(50), 'resolves to more than 8 PiB of JSON', 'past 2^53 the count is not exact, and not given');
  const flag = found.find((p) => p.startsWith('flags.expanded.targeting:'));
  t.match(flag, 'resolves to more than 8 PiB of JSON with its $refs replaced; a rule may be at most 1048576 bytes (1 MiB) resolved');
});

t.test('a DAG: shared evaluators counted once each, the sum exact to the byte at the limit (UTF-8, escapes)', async (t) => {
  // top uses left and right, which both use pad: pad's text appears three times in top's resolved rule.
  const document = (padLength: number, fillLength: number) => {
    const $evaluators = {
      pad: { in: [{ var: 'email' }, `é"\n${'é'.repeat(padLength)}`] },
      left: { or: [{ $ref: 'pad' }, { $ref: 'pad' }] },
      right: { '!': [{ $ref: 'pad' }] },
      top: { and: [{ $ref: 'left' }, { $ref: 'right' }] },
    };
    const targeting = { if: [{ and: [{ $ref: 'top' }, { '!=': [{ var: 'id' }, 'x'.repeat(fillLength)] }] }, 'on', 'off'] };
    return { document: { $evaluators, flags: { diamond: { state: 'ENABLED', variants: kBool, targeting } } }, targeting, $evaluators };
  };
  const base = (() => {
    const { targeting, $evaluators } = document(0, 0);
    return oracleBytes(targeting, $evaluators);
  })();
  // Three copies of pad, each é 2 bytes in each; the fill, written in the flag's rule, 1 byte a
  // character (the references add 9 pads in all: left 2, right 1, top 3, the flag's rule 3).
  const padLength = 1000;
  const fillLength = kMaxRuleBytes - base - 6 * padLength;
  const atLimit = document(padLength, fillLength);
  t.equal(oracleBytes(atLimit.targeting, atLimit.$evaluators), kMaxRuleBytes, 'the oracle: exactly 1 MiB');
  const accepted = parseFlagDefinition(atLimit.document);
  t.ok(accepted.ok, 'exactly 1 MiB resolved is accepted');
  if (accepted.ok) t.equal(bytes(accepted.definition.flags.diamond!.targeting), kMaxRuleBytes, 'and resolves to exactly that');
  const over = document(padLength, fillLength + 1);
  t.strictSame(problems(over.document), [
    'flags.diamond.targeting: resolves to 1048577 bytes (1.0 MiB) of JSON with its $refs replaced; a rule may be at most 1048576 bytes (1 MiB) resolved',
  ]);
});

t.test("a document's references add at most 1 MiB to its rules: the flag that passes it is named", async (t) => {
  // {"in":[{"var":"email"},""]} is 27 bytes; each flag's {"$ref":"big"} (14 bytes) resolves to 65536 more.
  const big = { in: [{ var: 'email' }, 'x'.repeat(65536 + 14 - 27)] };
  t.equal(bytes(big), 65536 + 14);
  const withFlags = (count: number) => ({
    $evaluators: { big },
    flags: Object.fromEntries(
      Array.from({ length: count }, (_, i) => [
        `f${String(i).padStart(2, '0')}`,
        { state: 'ENABLED', variants: kBool, targeting: { $ref: 'big' } },
      ]),
    ),
  });
  t.equal((kMaxAddedRuleBytes / 65536) | 0, 16);
  t.ok(parseFlagDefinition(withFlags(16)).ok, '16 flags: references add exactly 1 MiB');
  t.strictSame(problems(withFlags(18)), [
    "flags.f16.targeting: its $refs add 65536 bytes to it, and the document's references 1114112 bytes (1.1 MiB) to its rules in all; they may add at most 1048576 bytes (1 MiB)",
    "flags.f17.targeting: its $refs add 65536 bytes to it, and the document's references 1179648 bytes (1.1 MiB) to its rules in all; they may add at most 1048576 bytes (1 MiB)",
  ]);
});

t.test('cycles are still refused, and a cycle beside a doubling chain costs no more', async (t) => {
  const $evaluators = { ...doublingEvaluators(30), a: { and: [{ $ref: 'b' }, { $ref: 'l30' }] }, b: { or: [{ $ref: 'a' }] } };
  const found = problems({ $evaluators, flags: { f: { state: 'ENABLED', variants: kBool, targeting: topRule(3) } } });
  t.ok(found.includes('$evaluators.b.or[0]: $ref cycle: a -> b -> a'));
  t.ok(found.some((p) => p.startsWith('$evaluators.a: resolves to ')));
});

t.test(
  'a rule nested deeper than 64 levels, written or through a chain of evaluators, is refused without overflowing the stack',
  async (t) => {
    // {"!": [{"!": [ ... {"var": "x"} ... ]}]}: two levels a "!" (the object and its array).
    const nested = (levels: number) => {
      let rule: unknown = { var: 'x' };
      for (let i = 0; i < levels; i++) rule = { '!': [rule] };
      return rule;
    };
    const flag = (targeting: unknown, $evaluators: Record<string, unknown> = {}) => ({
      $evaluators,
      flags: { deep: { state: 'ENABLED', variants: kBool, defaultVariant: 'off', targeting: { if: [targeting, 'on', 'off'] } } },
    });
    t.strictSame(problems(flag(nested(30))), [], '60 levels and the if around them: accepted');
    for (const levels of [40, 3000, 50_000])
      t.strictSame(
        problems(flag(nested(levels))),
        [`flags.deep.targeting: nests deeper than ${kMaxRuleDepth} levels with its $refs replaced`],
        `${levels * 2} levels written`,
      );
    // Evaluators e0 <- e1 <- ... each one level around the one before: shallow written, deep resolved.
    const chain = (length: number) => {
      const $evaluators: Record<string, unknown> = { e0: { var: 'x' } };
      for (let i = 1; i < length; i++) $evaluators[`e${i}`] = { '!': { $ref: `e${i - 1}` } };
      return $evaluators;
    };
    t.strictSame(problems(flag({ $ref: 'e20' }, chain(21))), [], 'a chain of 21: accepted');
    const long = problems(flag({ $ref: 'e4999' }, chain(5000)));
    t.ok(long.length > 0, `a chain of 5,000 refused: ${long.slice(0, 2).join(' | ')}`);
    t.ok(
      long.some((p) => p.startsWith('flags.deep.targeting: ')),
      'naming the flag',
    );
    t.ok(
      long.every((p) => /nests deeper than 64 levels|refers through more than 64 evaluators in a row|they may add at most/.test(p)),
      'and why (a chain this long also passes what references may add)',
    );
  },
);

t.test('a rule sent without references (a typed create or PATCH) is held to the same limit', async (t) => {
  const rule = (length: number) => ({ if: [{ in: [{ var: 'email' }, 'x'.repeat(length)] }, 'on', 'off'] });
  const fits = kMaxRuleBytes - bytes(rule(0));
  t.strictSame(flagVariantProblems({ variants: kBool, defaultVariant: 'off', targeting: rule(fits) }), []);
  t.strictSame(flagVariantProblems({ variants: kBool, defaultVariant: 'off', targeting: rule(fits + 1) }), [
    {
      path: 'targeting',
      message: 'resolves to 1048577 bytes (1.0 MiB) of JSON with its $refs replaced; a rule may be at most 1048576 bytes (1 MiB) resolved',
    },
  ]);
});

// Evaluators e0..eN, each an `or` of comparisons with strings of any length (non-ASCII included) and of
// references to evaluators before it: DAGs whose resolved sizes run from bytes to far past the limits.
const kDocument = fc
  .record({
    evaluators: fc.array(
      fc.record({
        strings: fc.array(
          fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.repeat(1 + (s.length % 7) * 300)),
          { maxLength: 3 },
        ),
        refs: fc.array(fc.nat(), { maxLength: 4 }),
      }),
      { minLength: 1, maxLength: 8 },
    ),
    flags: fc.array(fc.record({ ref: fc.nat(), inline: fc.string({ maxLength: 20 }) }), { minLength: 1, maxLength: 4 }),
  })
  .map(({ evaluators, flags }) => {
    const $evaluators: Record<string, unknown> = {};
    evaluators.forEach(({ strings, refs }, i) => {
      const operands: unknown[] = strings.map((s) => ({ '==': [{ var: 'k' }, s] }));
      if (i > 0) for (const r of refs) operands.push({ $ref: `e${r % i}` });
      if (operands.length === 0) operands.push(true);
      $evaluators[`e${i}`] = { or: operands };
    });
    const count = evaluators.length;
    const targeting = (f: { ref: number; inline: string }) => ({
      if: [{ and: [{ $ref: `e${f.ref % count}` }, { '==': [{ var: 'x' }, f.inline] }] }, 'on', 'off'],
    });
    return {
      $evaluators,
      flags: Object.fromEntries(flags.map((f, i) => [`f${i}`, { state: 'ENABLED', variants: kBool, targeting: targeting(f) }])),
    };
  });

t.test('property: what the parser accepts is within the limits, and what is over them is refused', async (t) => {
  let accepted = 0;
  let refused = 0;
  fc.assert(
    fc.property(kDocument, (document) => {
      const memo = new Map<string, number>();
      // Every rule in the order the parser meets them (evaluators, then flags), resolved and as written.
      const rules = [...Object.values(document.$evaluators), ...Object.values(document.flags).map((f) => f.targeting)];
      const sizes = rules.map((rule) => oracleBytes(rule, document.$evaluators, memo));
      let added = 0;
      let peak = 0;
      rules.forEach((rule, i) => {
        added += sizes[i]! - bytes(rule);
        peak = Math.max(peak, added);
      });
      const within = peak <= kMaxAddedRuleBytes && sizes.every((s) => s <= kMaxRuleBytes);
      const flagSizes = sizes.slice(Object.keys(document.$evaluators).length);
      const result = parseFlagDefinition(document);
      if (result.ok) {
        accepted++;
        const resolved = Object.values(result.definition.flags).map((flag) => bytes(flag.targeting));
        return within && resolved.every((size, i) => size <= kMaxRuleBytes && size === flagSizes[i]);
      }
      refused++;
      if (within) return false;
      // Each flag over the rule limit is named, with its exact size where it is below 2^53.
      return Object.keys(document.flags).every((key, i) => {
        const size = flagSizes[i]!;
        if (size <= kMaxRuleBytes) return true;
        const named = result.problems.find((p) => p.flag === key);
        return named !== undefined && (size > Number.MAX_SAFE_INTEGER || figure(named.message) === size);
      });
    }),
    { numRuns: 150 },
  );
  t.ok(accepted > 10 && refused > 10, `both sides reached: ${accepted} accepted, ${refused} refused`);
});

// Property (issue 55): a shared fragment compiled once for every flag that names it (SharedRules, through
// src/flags/records/fragment-resolve.ts's ResolvedFragments, as the engine compiles a project) answers exactly as each
// flag's rule compiled on its own with the fragment written in (as before): for generated fragments, used
// once, twice in one rule (the second use compiled anew: a `{}` or list it makes is its own) and under a
// constant-folded operation, in several flags compiled one after another, on generated contexts.
import fc from 'fast-check';
import t from 'tap';
import { ResolvedFragments, resolvedTyped } from '../../src/flags/records/fragment-resolve.js';
import { flagVariantProblems } from '../../src/targeting/parse.js';
import { compileFlag, type CompiledFlag } from '../../src/targeting/compiled-flag.js';
import type { SharedRules } from '../../src/targeting/compile-rule.js';
import { evaluateFlag } from '../../src/targeting/evaluate.js';
import { contextArb, kVariantSets, ruleArb } from './definition-arbitraries.js';

const kRuns = 300;
const kVariants = kVariantSets.string[0]! as Record<string, string>;
const kNames = Object.keys(kVariants);

/** The flag rules that name fragment "f": once, twice in one rule, and inside what folds when "f" is constant. */
const kUses: readonly Record<string, unknown>[] = [
  { if: [{ $ref: 'f' }, kNames[0], kNames[1]] },
  { if: [{ '==': [{ $ref: 'f' }, { $ref: 'f' }] }, kNames[0], kNames[1]] },
  { if: [{ '===': [{ $ref: 'f' }, { $ref: 'f' }] }, kNames[0], kNames[1]] },
  { cat: [{ $ref: 'f' }, '-', { $ref: 'f' }] },
  { if: [{ '!': [{ $ref: 'f' }] }, kNames[1], { $ref: 'f' }] },
];

function compiled(key: string, targeting: Record<string, unknown>, shared: SharedRules | null): CompiledFlag {
  return compileFlag(key, { state: 'ENABLED', variants: kVariants, defaultVariant: kNames[0]!, targeting, metadata: {} }, {}, [], shared);
}

/** Fragments that make a `{}` or a list when compiled: two uses in one rule are two objects, which `===` tells apart. */
const kMakesObjects: readonly Record<string, unknown>[] = [
  { if: [true, {}, 1] },
  { if: [true, ['x'], 1] },
  { if: [{ var: 'q' }, ['x'], {}] },
  { if: [{ var: 'q' }, {}, {}] },
];

const fragmentArb = ruleArb(kNames).filter((r) => r !== null && typeof r === 'object' && !Array.isArray(r) && Object.keys(r).length === 1);

t.test('a fragment compiled once for all its flags answers as each flag compiled on its own', async (t) => {
  let checked = 0;
  fc.assert(
    fc.property(
      fc.oneof(fc.constantFrom(...kMakesObjects), fragmentArb),
      fc.array(
        contextArb.map((c): Record<string, unknown> => ({ ...c, q: true })),
        { minLength: 1, maxLength: 6 },
      ),
      (fragment, contexts) => {
        const fragments = { f: fragment as Record<string, unknown> };
        const typed = kUses.map((targeting) => ({ variants: kVariants, defaultVariant: kNames[0]!, targeting }));
        // Only rules that load: a stored rule was checked with the fragment written in.
        if (typed.some((ty) => flagVariantProblems({ ...ty, targeting: resolvedTyped(ty, fragments).targeting }).length > 0)) return;
        const resolved = new ResolvedFragments(fragments);
        const shared = typed.map((ty, i) => compiled(`flag-${i}`, resolved.typed(ty).targeting, resolved.shared));
        const alone = typed.map((ty, i) => compiled(`flag-${i}`, resolvedTyped(ty, fragments).targeting, null));
        for (const context of contexts)
          for (let i = 0; i < typed.length; i++) {
            const a = evaluateFlag(shared[i]!, context, 1_700_000_000);
            const b = evaluateFlag(alone[i]!, context, 1_700_000_000);
            if (JSON.stringify(a) !== JSON.stringify(b))
              throw new Error(
                `flag ${i} with fragment ${JSON.stringify(fragment)} on ${JSON.stringify(context)}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`,
              );
          }
        checked++;
      },
    ),
    { numRuns: kRuns, examples: kMakesObjects.map((f): [unknown, Record<string, unknown>[]] => [f, [{ q: true }]]) },
  );
  t.ok(checked > kRuns / 4, `${checked} of ${kRuns} generated fragments loaded and were compared`);
});

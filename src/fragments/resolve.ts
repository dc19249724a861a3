// A stored rule's `{"$ref": NAME}`s replaced by its project's fragments: the one home of that step for
// every reader of a rule, the flag checks (src/flags/variant-rules.ts), evaluation's compile
// (src/eval/engine.ts), the flag sets and snapshots the providers read. The replacing, its limits (the
// rule's size and depth resolved) and its problems are flagd's `$evaluators` rules (src/targeting/refs.ts).
import type { TypedVariants } from '../flags/records.js';
import { kProblems, type DefinitionProblem } from '../targeting/problems.js';
import { RefResolver } from '../targeting/refs.js';
import { type FragmentRules, kNoFragments } from './records.js';

/**
 * `rule` with every reference replaced; a reference to no fragment, or a rule over the limits resolved,
 * is reported in `problems` (paths from the state: `targeting.if[0]`) and resolves to null.
 */
export function resolveRule(
  rule: Record<string, unknown>,
  fragments: FragmentRules,
  problems: DefinitionProblem[],
): Record<string, unknown> {
  const resolver = new RefResolver(fragments, problems, kProblems.unknownFragment);
  return (resolver.resolve(rule, null, ['targeting']) ?? {}) as Record<string, unknown>;
}

/**
 * A stored state's typed variants with their rule's references replaced, for a reader that evaluates it
 * or hands it to one (a provider). The same object when the project has no fragments: the rule then has
 * no reference (the flag checks refuse one), and nothing is walked. A stored rule was checked with the
 * fragments it uses, and a fragment in use is never deleted, so no problem is expected here; one would
 * leave that reference null (a condition never met).
 */
export function resolvedTyped(typed: TypedVariants, fragments: FragmentRules): TypedVariants {
  if (fragments === kNoFragments || Object.keys(typed.targeting).length === 0) return typed;
  return { ...typed, targeting: resolveRule(typed.targeting, fragments, []) };
}

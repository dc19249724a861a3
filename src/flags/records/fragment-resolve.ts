// A stored rule's `{"$ref": NAME}`s replaced by its project's fragments: the one home of that step for
// every reader of a rule, the flag checks (src/flags/variant-rules.ts), evaluation's compile
// (src/evaluation/engine/engine.ts), the flag sets and snapshots the providers read. The replacing, its limits (the
// rule's size and depth resolved) and its problems are flagd's `$evaluators` rules (src/targeting/refs.ts).
//
// A reader of many rules (a worker compiling a project, a flag set, a snapshot) resolves each fragment
// once and shares it (ResolvedFragments): every rule that names it holds the same object, never a copy,
// and a compile compiles it once for all of them (SharedRules). Before (issue 55), each flag's rule was
// resolved with a copy of the fragment and compiled with it: a 0.96 MB fragment named by 20 flags was
// walked, copied and compiled 20 times per store revision in each worker.
import type { TypedVariants } from '../../model/flags.js';
import { SharedRules } from '../../targeting/compile-rule.js';
import { kProblems, type DefinitionProblem } from '../../targeting/problems.js';
import { RefResolver, ruleRefs } from '../../targeting/refs.js';
import { type FragmentRules, kNoFragments } from './fragment-records.js';

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
 * A project's fragments as the readers of one store revision share them: each resolved once, by the
 * first rule that names it, and the same object in every rule resolved here; `shared` compiles each once.
 */
export class ResolvedFragments {
  /** The fragments resolved so far, for the compiler: each compiled once, whichever flags hold it. */
  readonly shared = new SharedRules();
  private readonly resolver: RefResolver;

  constructor(readonly rules: FragmentRules) {
    // Stored rules were counted when written (project-refs.ts): no bound here on what they add in all.
    this.resolver = new RefResolver(rules, [], kProblems.unknownFragment, Number.POSITIVE_INFINITY);
  }

  /**
   * A stored state's typed variants with their rule's references replaced, for a reader that evaluates
   * it or hands it to one (a provider). The same object when the project has no fragments: the rule then
   * has no reference (the flag checks refuse one), and nothing is walked. A stored rule was checked with
   * the fragments it uses, and a fragment in use is never deleted, so no problem is expected here; one
   * would leave that reference null (a condition never met).
   */
  typed(typed: TypedVariants): TypedVariants {
    if (this.rules === kNoFragments || Object.keys(typed.targeting).length === 0) return typed;
    for (const name of ruleRefs(typed.targeting))
      if (Object.hasOwn(this.rules, name)) this.shared.share(this.resolver.resolvedEvaluator(name));
    const targeting = (this.resolver.resolve(typed.targeting, null, ['targeting']) ?? {}) as Record<string, unknown>;
    return { ...typed, targeting };
  }
}

/** One state's typed variants resolved (ResolvedFragments.typed), for a reader of one rule. */
export function resolvedTyped(typed: TypedVariants, fragments: FragmentRules): TypedVariants {
  return new ResolvedFragments(fragments).typed(typed);
}

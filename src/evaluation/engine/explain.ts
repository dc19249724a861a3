// Why a flag state gives what it gives for one context: the web console's playground
// (docs/web-console.md). It runs the engine's own functions again (decideState, unmatchedRule, bucket,
// resolveVariant) and keeps what they found along the way, so there is no second implementation of the
// rules to drift from the first. Nothing on the Evaluation API's or OFREP's path calls it: they keep
// deciding with bare numbers and prebuilt answers, while this path allocates freely.
import type { Resolution } from '../../targeting/compiled-flag.js';
import { type IfBranch, ifBranch } from '../../targeting/if-branch.js';
import { bucketAt } from './bucket.js';
import type { EvalState } from './engine.js';
import {
  blockedByPlan,
  type DecidedBy,
  type Decision,
  decidedBy,
  decideState,
  decisionValue,
  type EvalContext,
  kDecidedAudience,
  kDecidedCohort,
  kDecidedDisabled,
  kDecidedRoll,
  kDecidedSplit,
  randomRoll,
  unmatchedRule,
} from './evaluate.js';
import { resolveVariant, type RuleContext } from './variants.js';
import type { Why } from './why.js';

export interface Explanation {
  /** The Evaluation API's `enabled`; null where its flag route refuses the state (403: `by: 'plan'`). */
  readonly enabled: boolean | null;
  /** decideState's decision (OFREP's reason comes from it); null where the plan refuses the state. */
  readonly decision: Decision | null;
  readonly why: Why;
  /** A state with typed variants: its answer (the Evaluation API's `variant` and `value`); null otherwise. */
  readonly resolution: Resolution | null;
  /** The branch of the targeting rule that ran, when its top is an `if` (src/targeting/if-branch.ts); else null. */
  readonly ruleBranch: IfBranch | null;
}

/**
 * The answer of `state` (flag `flagId`) for `ctx`, and why: what EvalEngine.evaluateFlag answers for the
 * same state and context (`audiencesAllowed` and `nowMs` as the engine's for its batch).
 */
export function explainState(
  state: EvalState,
  ctx: EvalContext & RuleContext,
  audiencesAllowed: boolean,
  nowMs: number,
  roll: () => number = randomRoll,
): Explanation {
  if (blockedByPlan(state, audiencesAllowed))
    return { enabled: null, decision: null, why: { by: 'plan', audienceId: state.audienceId! }, resolution: null, ruleBranch: null };
  let rolled = -1;
  const decision = decideState(state, ctx, () => (rolled = roll()));
  const enabled = decisionValue(decision);
  const variants = state.variants;
  const resolution = variants === null ? null : resolveVariant(variants, decision, ctx, nowMs);
  // The rule runs only for a caller the gate let in (variants.ts).
  const ruleBranch =
    variants === null || !enabled || variants.flag.rule === null
      ? null
      : ifBranch(variants.targeting, variants.flag.key, ctx.ruleData(), Math.floor(nowMs / 1000));
  // A state in Unleash's model: its strategies decided, not §2's rules (its percentage and audience are not read).
  const why: Why =
    state.unleash !== null && decidedBy(decision) !== kDecidedDisabled
      ? { by: 'unleash', variant: resolution?.variant ?? 'disabled' }
      : whyOf(state, ctx, decidedBy(decision), enabled, rolled);
  return { enabled, decision, why, resolution, ruleBranch };
}

function whyOf(state: EvalState, ctx: EvalContext, by: DecidedBy, enabled: boolean, rolled: number): Why {
  const percentage = state.trafficPercentage;
  if (by === kDecidedDisabled) return { by: 'disabled' };
  if (by === kDecidedCohort) return { by: 'cohort', cohort: ctx.cohort! };
  if (by === kDecidedAudience) {
    const rule = enabled || state.audience === null ? null : unmatchedRule(state.audience, ctx);
    const unmatched = rule === null ? null : { attribute: rule.attribute, values: [...rule.values] };
    // An existing audience that let the caller in, or kept them out at 0%, has no unmatched rule.
    const matched = state.audience !== null && (enabled || rule === null);
    return { by: 'audience', audienceId: state.audienceId!, matched, unmatched, percentage };
  }
  if (by === kDecidedSplit) {
    const keyFrom = ctx.targetingKey !== null ? 'targetingKey' : 'cohort';
    const key = (ctx.targetingKey ?? ctx.cohort)!;
    return { by: 'split', key, keyFrom, bucket: bucketAt(state.fractional, state.prefix, key), percentage };
  }
  if (by === kDecidedRoll) return { by: 'roll', roll: rolled, percentage };
  return { by: 'static', percentage };
}

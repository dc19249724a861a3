// What OFREP answers for one flag state and one context, before it is written as bytes: the one home of
// OFREP's rules, read by the eval workers' OFREP route set (evaluate.ts, which keeps a body per answer)
// and by the Flagwire OpenFeature provider (src/provider), which answers in-process from a snapshot and
// so answers exactly as the server does.
//
//   plan has no audiences and the state applies one    -> kSlotAudiencePlan (GENERAL)
//   the percentage would need a random roll            -> kSlotKeyMissing (TARGETING_KEY_MISSING)
//   boolean state                                      -> the decision (reason << 1 | value)
//   state with typed variants                          -> the variant's Resolution (src/evaluation/engine/variants.ts)
//
// A split that would need a roll (no targetingKey and no cohort) is TARGETING_KEY_MISSING: OFREP clients
// cache answers (the bulk route is built for it), and a roll cached as if it were sticky would be wrong.
import {
  blockedByPlan,
  type CompiledState,
  decideState,
  decidedBy,
  type EvalContext,
  kDecidedAudience,
  kDecidedCohort,
  kDecidedDisabled,
  kDecidedRoll,
  kDecidedSplit,
  kDecidedStatic,
} from '../evaluation/engine/evaluate.js';
import { type CompiledVariants, kPlanRefused, resolveVariant, type RuleContext, settledAnswer } from '../evaluation/engine/variants.js';
import type { OfrepReason } from '../model/ofrep-schemas.js';
import type { Resolution } from '../targeting/compiled-flag.js';

/** OFREP's reason for each rule that can decide a boolean state (decideState's DecidedBy); a roll has none. */
export const kReasons: Record<number, OfrepReason> = {
  [kDecidedDisabled]: 'DISABLED',
  [kDecidedCohort]: 'TARGETING_MATCH',
  [kDecidedAudience]: 'TARGETING_MATCH',
  [kDecidedStatic]: 'STATIC',
  [kDecidedSplit]: 'SPLIT',
};

// Answers that are not decisions: decisions are 0..11 (reason << 1 | value), then the two failures.
export const kSlotAudiencePlan = 12;
export const kSlotKeyMissing = 13;
/** How many slots (decisions and failures) a state's boolean answers have. */
export const kSlots = 14;

export const kKeyMissingDetails =
  'This flag turns on for a percentage of callers, which needs a sticky key: add "targetingKey" ' + '(or "cohort") to the context.';

/** A state as OFREP evaluates it: the spec's rules, and its typed variants if it has them (null: a boolean state). */
export interface OfrepState extends CompiledState {
  readonly variants: CompiledVariants | null;
}

/**
 * OFREP's answer for a flag's `state` and `ctx`: a slot (a boolean decision, or one of the
 * two failures above) or, for a state with typed variants, the variant's Resolution. `nowMs` gives
 * `$flagd.timestamp`. Allocates nothing but what a rule builds.
 */
export function ofrepAnswer(
  state: OfrepState,
  ctx: EvalContext & RuleContext,
  audiencesAllowed: boolean,
  nowMs: number,
): number | Resolution {
  if (blockedByPlan(state, audiencesAllowed)) return kSlotAudiencePlan;
  const decision = decideState(state, ctx, noRoll);
  if (decidedBy(decision) === kDecidedRoll) return kSlotKeyMissing;
  if (state.variants === null) return decision;
  return resolveVariant(state.variants, decision, ctx, nowMs);
}

/** ofrepAnswer's answer for `state` whatever the context, or null where the context can change it (settledAnswer). */
export function contextFreeAnswer(state: OfrepState, audiencesAllowed: boolean): number | Resolution | null {
  const settled = settledAnswer(state, audiencesAllowed);
  if (settled === null) return null;
  if (settled === kPlanRefused) return kSlotAudiencePlan;
  return settled.resolution ?? settled.decision;
}

/** The roll is never used: a decision that would roll is answered TARGETING_KEY_MISSING. */
function noRoll(): number {
  return 0;
}

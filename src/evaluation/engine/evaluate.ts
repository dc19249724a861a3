// The evaluation rules of design §2, as pure functions over a state compiled once per flag version.
//
//   if not enabled                                   -> false
//   if cohort given and cohort in effective cohorts  -> true      (regardless of percentage and audience)
//   if audienceId set and audience does not match    -> false
//   key = targetingKey ?? cohort
//   if key given  -> bucket(flagId, key) < trafficPercentage     (sticky; the flag's bucketing, bucket.ts)
//   else          -> random integer 0..99 < trafficPercentage    (fresh roll each request)
import type { Audience } from '../../model/projects.js';
import type { EffectiveState } from '../../flags/records/flag-state.js';
import { bucketAt } from './bucket.js';
import { bucketPrefix, type BucketPrefix } from '../../bytes/bucket-hash.js';
import type { Flag } from '../../model/flags.js';
import type { UnleashFields } from '../../unleash/rules/constraints.js';
import { type CompiledUnleash, decideUnleash } from '../../unleash/rules/state.js';

/** An audience rule with its values in a Set: exact, case-sensitive lookups in O(1). */
export interface CompiledRule {
  readonly attribute: string;
  readonly values: ReadonlySet<string>;
}

export interface CompiledAudience {
  readonly id: string;
  readonly rules: readonly CompiledRule[];
}

/** One flag state (a single flag, or one environment of a group flag), ready to evaluate. */
export interface CompiledState {
  readonly enabled: boolean;
  readonly trafficPercentage: number;
  /** The effective cohort list (environment override, else flag-wide) as a Set: lists can hold 10,000 ids. */
  readonly cohorts: ReadonlySet<string>;
  readonly audienceId: string | null;
  /** The audience `audienceId` names; null when there is none, or when it no longer exists (never matches). */
  readonly audience: CompiledAudience | null;
  /** The flag's bucketing is flagd's fractional point (bucket.ts); false: design §2's modulo. */
  readonly fractional: boolean;
  /** The flag's id as bucketing hashes it, mixed once (bucket.ts). */
  readonly prefix: BucketPrefix;
  /** The experiment its answers belong to (issue 58); null: none, and its answers are as they were before experiments. */
  readonly experiment: string | null;
  /** The state's Unleash model (issue 60; src/unleash/rules/state.ts), which decides past `enabled`; null: none. */
  readonly unleash: CompiledUnleash | null;
}

/** Attribute lookup: the request's query parameters other than cohort, env and targetingKey. */
export interface Attributes {
  /** The attribute's value, or undefined when the request does not carry it. */
  attribute(name: string): string | undefined;
}

/** What a request brings to an evaluation. Empty `cohort` / `targetingKey` are passed as null. */
export interface EvalContext extends Attributes {
  readonly cohort: string | null;
  readonly targetingKey: string | null;
  /** The context as Unleash's model reads it (src/unleash/rules/fields.ts); absent: an empty one. */
  readonly unleash?: UnleashFields;
}

const kNoFields: UnleashFields = { unleashField: () => undefined, unleashValue: () => undefined };

export function compileAudience(audience: Audience): CompiledAudience {
  return {
    id: audience.id,
    rules: audience.rules.map((rule) => ({ attribute: rule.attribute, values: new Set(rule.values) })),
  };
}

const kNoCohorts: ReadonlySet<string> = new Set();

/**
 * A state of the flag `flagId`. `audience` is the record `state.audienceId` names (undefined if it does not
 * exist); `bucketing` is the flag's own (src/model/flags.ts).
 */
export function compileState(
  flagId: string,
  state: EffectiveState,
  audience: Audience | undefined,
  bucketing: Flag['bucketing'],
): CompiledState {
  return {
    enabled: state.enabled,
    trafficPercentage: state.trafficPercentage,
    cohorts: state.cohorts.length === 0 ? kNoCohorts : new Set(state.cohorts),
    audienceId: state.audienceId,
    audience: state.audienceId !== null && audience !== undefined ? compileAudience(audience) : null,
    fractional: bucketing === 'fractional',
    prefix: bucketPrefix(flagId),
    experiment: state.experiment ?? null,
    unleash: null,
  };
}

/**
 * compileState's object with a route set's own fields added after its own (typed variants, an
 * experiment's bodies), always in one order, so that every state shares one hidden class. An object
 * spread (`{...compileState(…), variants}`) gave each state a class of its own (336 classes for 350
 * flags): every read of a state in a bulk answer's loop was then megamorphic, most of the eval worker's
 * CPU for a large project's OFREP bulk answer (issue 57).
 */
export function compileStateWith<T extends object>(
  flagId: string,
  state: EffectiveState,
  audience: Audience | undefined,
  bucketing: Flag['bucketing'],
  more: T,
): CompiledState & T {
  return Object.assign(compileState(flagId, state, audience, bucketing), more);
}

/** Every rule's attribute is present and equals one of the rule's values (exact, case-sensitive). */
export function matchesAudience(audience: CompiledAudience, attributes: Attributes): boolean {
  return unmatchedRule(audience, attributes) === null;
}

/**
 * The first rule of `audience` the attributes do not meet (absent, or none of its values), or null when
 * every rule is met. The one implementation of audience matching: matchesAudience asks it, and so does
 * the console's playground (explain.ts) to say which rule failed.
 */
export function unmatchedRule(audience: CompiledAudience, attributes: Attributes): CompiledRule | null {
  for (const rule of audience.rules) {
    const value = attributes.attribute(rule.attribute);
    if (value === undefined || !rule.values.has(value)) return rule;
  }
  return null;
}

/** Why a flag that applies an audience while its plan has no audiences is refused: the Evaluation API's and OFREP's detail. */
export const kAudiencePlanDetail =
  "This flag applies an audience, and audiences need the Teams or Enterprise plan, which the flag's " +
  'organisation is not on. It is refused rather than evaluated without its audience: detach the audience from the flag ' +
  '(audienceId: null) or restore the plan.';

/**
 * Decision 1 of docs/decisions.md (Evaluation API): a state that applies an audience is not evaluated while its organisation's plan has
 * no audiences (`audiencesAllowed`: EvalEngine.audiencesAllowed). Each route answers it its own way (the
 * docs/decisions.md): the flag route 403, the project route `enabled: false`, OFREP `GENERAL`.
 */
export function blockedByPlan(state: CompiledState, audiencesAllowed: boolean): boolean {
  return state.audienceId !== null && !audiencesAllowed;
}

/** A fresh integer 0..99 for a request with neither targetingKey nor cohort. */
export function randomRoll(): number {
  return Math.floor(Math.random() * 100);
}

// Which rule decided, for evaluation route sets that report it (OFREP's `reason`). A decision is one small
// integer, `reason << 1 | value`, so the hot path returns a number instead of allocating a result.
//
//   reason             when                                                         OFREP reason
//   kDecidedDisabled   the state is not enabled                                     DISABLED
//   kDecidedCohort     the caller's cohort is in the effective list (true)          TARGETING_MATCH
//   kDecidedAudience   an audience applies: not matched (false), or matched and     TARGETING_MATCH
//                      the percentage is 0 or 100 (the same for its whole audience)
//   kDecidedStatic     no audience, percentage 0 or 100: everyone not in a listed   STATIC
//                      cohort gets this value
//   kDecidedSplit      0 < percentage < 100, bucket of targetingKey ?? cohort       SPLIT
//   kDecidedRoll       0 < percentage < 100 and neither key: a fresh random roll    (TARGETING_KEY_MISSING)
export const kDecidedDisabled = 0;
export const kDecidedCohort = 1;
export const kDecidedAudience = 2;
export const kDecidedStatic = 3;
export const kDecidedSplit = 4;
export const kDecidedRoll = 5;
export type DecidedBy = 0 | 1 | 2 | 3 | 4 | 5;
/** `reason << 1 | (value ? 1 : 0)`. */
export type Decision = number;

export function decisionValue(decision: Decision): boolean {
  return (decision & 1) === 1;
}

export function decidedBy(decision: Decision): DecidedBy {
  return (decision >> 1) as DecidedBy;
}

/**
 * Whether a boolean state's decision counts as an exposure of its experiment (issue 58): only the
 * percentage split allocates, in or out; a disabled state, a listed cohort, an audience and a static
 * 0 or 100% do not (nor does a roll: OFREP refuses it, and the Evaluation API's is not sticky).
 */
export function decisionInExperiment(decision: Decision): boolean {
  return decision >> 1 === kDecidedSplit;
}

/** The rules of design §2, reporting which one decided (see the table above). */
export function decideState(state: CompiledState, ctx: EvalContext, roll: () => number = randomRoll): Decision {
  if (!state.enabled) return kDecidedDisabled << 1;
  // Unleash's model decides in place of the rules below (docs/design.md §2d): one field read for other states.
  if (state.unleash !== null) return decideUnleash(state.unleash, ctx.unleash ?? kNoFields);
  const { cohort } = ctx;
  if (cohort !== null && state.cohorts.has(cohort)) return (kDecidedCohort << 1) | 1;
  let fixed = kDecidedStatic;
  if (state.audienceId !== null) {
    if (state.audience === null || !matchesAudience(state.audience, ctx)) return kDecidedAudience << 1;
    fixed = kDecidedAudience;
  }
  const percentage = state.trafficPercentage;
  // Both ends are what the formula gives (a bucket or roll is 0..99), answered without hashing or rolling.
  if (percentage >= 100) return (fixed << 1) | 1;
  if (percentage <= 0) return fixed << 1;
  const key = ctx.targetingKey ?? cohort;
  if (key !== null) {
    return (kDecidedSplit << 1) | (bucketAt(state.fractional, state.prefix, key) < percentage ? 1 : 0);
  }
  return (kDecidedRoll << 1) | (roll() < percentage ? 1 : 0);
}

/**
 * The decision decideState gives `state` whatever the context, or null where the context decides (a
 * cohort list, an audience, a percentage split, Unleash's model). Its cases are decideState's, read in
 * its order: a list of a project's flags writes such a state's entry once per flag version, not once per
 * request (list-plan.ts). test/evaluation/engine/decide.test.ts holds the two to each other for every kind of state.
 */
export function contextFreeDecision(state: CompiledState): Decision | null {
  if (!state.enabled) return kDecidedDisabled << 1;
  if (state.unleash !== null || state.cohorts.size > 0 || state.audienceId !== null) return null;
  if (state.trafficPercentage >= 100) return (kDecidedStatic << 1) | 1;
  if (state.trafficPercentage <= 0) return kDecidedStatic << 1;
  return null;
}

/** The Evaluation API's answer: the value alone. */
export function evaluateState(state: CompiledState, ctx: EvalContext, roll: () => number = randomRoll): boolean {
  return (decideState(state, ctx, roll) & 1) === 1;
}

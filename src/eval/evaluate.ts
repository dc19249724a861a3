// The evaluation rules of design §2, as pure functions over a state compiled once per flag version.
//
//   if not enabled                                   -> false
//   if cohort given and cohort in effective cohorts  -> true      (regardless of percentage and audience)
//   if audienceId set and audience does not match    -> false
//   key = targetingKey ?? cohort
//   if key given  -> bucket(flagId, key) < trafficPercentage     (sticky)
//   else          -> random integer 0..99 < trafficPercentage    (fresh roll each request)
import type { Audience } from '../store/records.js';
import type { EffectiveState } from '../model/flag-state.js';
import { bucket } from './bucket.js';

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
}

export function compileAudience(audience: Audience): CompiledAudience {
  return {
    id: audience.id,
    rules: audience.rules.map((rule) => ({ attribute: rule.attribute, values: new Set(rule.values) })),
  };
}

const kNoCohorts: ReadonlySet<string> = new Set();

/** `audience` is the record `state.audienceId` names (undefined if it does not exist). */
export function compileState(state: EffectiveState, audience: Audience | undefined): CompiledState {
  return {
    enabled: state.enabled,
    trafficPercentage: state.trafficPercentage,
    cohorts: state.cohorts.length === 0 ? kNoCohorts : new Set(state.cohorts),
    audienceId: state.audienceId,
    audience: state.audienceId !== null && audience !== undefined ? compileAudience(audience) : null,
  };
}

/** Every rule's attribute is present and equals one of the rule's values (exact, case-sensitive). */
export function matchesAudience(audience: CompiledAudience, attributes: Attributes): boolean {
  for (const rule of audience.rules) {
    const value = attributes.attribute(rule.attribute);
    if (value === undefined || !rule.values.has(value)) return false;
  }
  return true;
}

/** A fresh integer 0..99 for a request with neither targetingKey nor cohort. */
export function randomRoll(): number {
  return Math.floor(Math.random() * 100);
}

export function evaluateState(
  flagId: string, state: CompiledState, ctx: EvalContext, roll: () => number = randomRoll,
): boolean {
  if (!state.enabled) return false;
  const { cohort } = ctx;
  if (cohort !== null && state.cohorts.has(cohort)) return true;
  if (state.audienceId !== null && (state.audience === null || !matchesAudience(state.audience, ctx))) return false;
  const percentage = state.trafficPercentage;
  // Both ends are what the formula gives (a bucket or roll is 0..99), answered without hashing or rolling.
  if (percentage >= 100) return true;
  if (percentage <= 0) return false;
  const key = ctx.targetingKey ?? cohort;
  return (key !== null ? bucket(flagId, key) : roll()) < percentage;
}

// A flag's state as callers see it: the one place that resolves defaults and cohort inheritance.
import type { EnvState, Flag, FlagState, GroupFlag } from '../../model/flags.js';

/** State an environment has until something sets it (spec: "starts disabled at 0% with no cohorts"). */
export const kDefaultEnvState: Readonly<EnvState> = Object.freeze({
  enabled: false,
  trafficPercentage: 0,
  audienceId: null,
  cohorts: null,
});

export interface EffectiveState extends FlagState {
  cohorts: string[];
}

/**
 * The stored entry of `env`, own properties only: environment names such as "constructor" or
 * "toString" are valid, and a plain lookup would return the inherited Object.prototype member.
 */
export function envEntry(flag: GroupFlag, env: string): EnvState {
  return Object.hasOwn(flag.environments, env) ? flag.environments[env]! : kDefaultEnvState;
}

/** The state that applies: a single flag's own, or one environment of a group flag with its effective cohorts. */
export function effectiveState(flag: Flag, env: string | null): EffectiveState {
  if (flag.kind === 'flag') {
    return { ...flag.state, cohorts: flag.cohorts };
  }
  const entry = envEntry(flag, env ?? '');
  const state: EffectiveState = {
    enabled: entry.enabled,
    trafficPercentage: entry.trafficPercentage,
    audienceId: entry.audienceId,
    cohorts: entry.cohorts ?? flag.cohorts,
  };
  // Only when present: a boolean flag's state has no `typed` key at all.
  if (entry.typed !== undefined) state.typed = entry.typed;
  if (entry.experiment !== undefined) state.experiment = entry.experiment;
  if (entry.unleash !== undefined) state.unleash = entry.unleash;
  return state;
}

// The flagd flag set of one project environment (issue 44, contract 2 of the brief): a flagd
// flag-definition document keyed by flag name, and the flags left out of it because a stock flagd
// provider would answer them differently from the server.
//
// MINIMAL VERSION (branch "sync"): helper "flagset" writes the full module; the coordinator keeps that
// one at merge. This one serves only what flagd says exactly without translation: boolean flags at 0% or
// 100% and typed flags disabled or at 100%, without an audience or cohorts; every other flag is omitted.
import type { Flag } from '../flags/records.js';
import { effectiveState } from '../flags/flag-state.js';
import type { Audience } from '../model/projects.js';
import { flagSetIdOf } from './selector.js';

export interface FlagSetInput {
  projectId: string;
  environment: string | null;
  flags: readonly Flag[];
  audiences: readonly Audience[];
  audiencesAllowed: boolean;
  revision: number;
}
export interface OmittedFlag {
  flagId: string;
  name: string;
  reason: string;
}
export interface FlagSet {
  json: string;
  omitted: OmittedFlag[];
}

const kSchema = 'https://flagd.dev/schema/v0/flags.json';

export function buildFlagSet(input: FlagSetInput): FlagSet {
  const flags: Record<string, unknown> = {};
  const omitted: OmittedFlag[] = [];
  for (const flag of input.flags) {
    const reason = flagdInexpressible(flag, input.environment, input.audiences, input.audiencesAllowed);
    if (reason !== null) {
      omitted.push({ flagId: flag.id, name: flag.name, reason });
      continue;
    }
    flags[flag.name] = flagdFlag(flag, input.environment);
  }
  const flagSetId = flagSetIdOf(input.projectId, input.environment);
  const metadata: Record<string, string | number> = {
    flagSetId,
    // flagd providers copy their selector into every answer's flag metadata as `scope` unless the set
    // names one (a set's metadata is every flag's): the selector may hold a token, the set's id does not.
    scope: flagSetId,
    flagwireProject: input.projectId,
  };
  if (input.environment !== null) metadata.flagwireEnvironment = input.environment;
  metadata.flagwireRevision = input.revision;
  if (omitted.length > 0) metadata.flagwireOmitted = omitted.map((o) => o.name).join(',');
  return { json: JSON.stringify({ $schema: kSchema, flags, metadata }), omitted };
}

/** Why `flag` cannot be served to flagd in `environment`; null when it can. */
export function flagdInexpressible(
  flag: Flag,
  environment: string | null,
  _audiences: readonly Audience[],
  _audiencesAllowed: boolean,
): string | null {
  const state = effectiveState(flag, environment);
  if (state.audienceId !== null) return 'it applies an audience';
  if (state.cohorts.length > 0) return 'it lists cohorts';
  if (state.typed === undefined) {
    return state.trafficPercentage === 0 || state.trafficPercentage === 100 ? null : 'it is on for a percentage of callers';
  }
  return !state.enabled || state.trafficPercentage === 100 ? null : 'its rule applies to a percentage of callers';
}

function flagdFlag(flag: Flag, environment: string | null): Record<string, unknown> {
  const state = effectiveState(flag, environment);
  const { typed } = state;
  if (typed === undefined) {
    return {
      state: 'ENABLED',
      variants: { on: true, off: false },
      defaultVariant: state.enabled && state.trafficPercentage === 100 ? 'on' : 'off',
    };
  }
  const out: Record<string, unknown> = {
    state: state.enabled ? 'ENABLED' : 'DISABLED',
    variants: typed.variants,
    defaultVariant: typed.defaultVariant,
  };
  if (Object.keys(typed.targeting).length > 0) out.targeting = typed.targeting;
  if (typed.metadata !== undefined && Object.keys(typed.metadata).length > 0) out.metadata = typed.metadata;
  return out;
}

// The spec's response shapes of flags, made (their schemas: representation-shapes.ts; a token's
// description is the tokens capability's: src/tokens/representation.ts): flag (flat and environments
// form), flag list, patch result.
import { type EffectiveState, effectiveState } from './records/flag-state.js';
import { bucketingField } from './bucketing.js';
import type { TypedFields } from '../model/schemas.js';
import type { Flag, FlagUsage } from '../model/flags.js';
import type { Project } from '../model/projects.js';
import type { UnleashModel } from '../model/unleash-model.js';
import { modelWarnings } from '../unleash/rules/model-problems.js';
import type { EnvironmentEntry, EnvironmentsFlag, FlagList, FlagRepresentation, FlatFlag, PatchResult } from './representation-shapes.js';

/**
 * Adds the typed-variant fields of `state` to a representation, when it has them (a boolean flag's has
 * none), its experiment when it has one, and its Unleash model when it has one (with the parts of it
 * never met, when there are any).
 */
function addTyped(
  out: TypedFields & { experiment?: string; unleash?: UnleashModel; unleashWarnings?: string[] },
  state: EffectiveState,
): void {
  if (state.experiment !== undefined) out.experiment = state.experiment;
  if (state.unleash !== undefined) {
    out.unleash = state.unleash;
    const warnings = modelWarnings(state.unleash);
    if (warnings.length > 0) out.unleashWarnings = warnings.map((w) => `unleash.${w}`);
  }
  if (state.typed === undefined) return;
  out.variants = state.typed.variants;
  out.defaultVariant = state.typed.defaultVariant;
  out.targeting = state.typed.targeting;
  if (state.typed.metadata !== undefined) out.metadata = state.typed.metadata;
}

/** A flag's usage as read from the store (undefined: none written yet). */
export type UsageOf = (flagId: string) => FlagUsage | undefined;

/** Flat form: a single flag, or one environment of a group flag (with `environment` set). */
export function flatFlag(flag: Flag, env: string | null, usage: FlagUsage | undefined): FlatFlag {
  const state = effectiveState(flag, env);
  const out: FlatFlag = {
    ...flagFacts(flag, usage),
    enabled: state.enabled,
    trafficPercentage: state.trafficPercentage,
    cohorts: state.cohorts,
    audienceId: state.audienceId,
  };
  if (flag.kind === 'groupflag' && env !== null) out.environment = env;
  addTyped(out, state);
  return out;
}

/** Environments form of a group flag: one entry per environment of the project, effective cohorts. */
export function environmentsFlag(flag: Flag & { kind: 'groupflag' }, project: Project, usage: FlagUsage | undefined): EnvironmentsFlag {
  const environments: Record<string, EnvironmentEntry> = {};
  for (const env of project.environments) {
    const state = effectiveState(flag, env);
    const entry: EnvironmentEntry = {
      enabled: state.enabled,
      trafficPercentage: state.trafficPercentage,
      cohorts: state.cohorts,
      audienceId: state.audienceId,
      updatedAt: flag.updatedAt,
    };
    addTyped(entry, state);
    environments[env] = entry;
  }
  return { ...flagFacts(flag, usage), kind: 'groupflag', environments };
}

/** What both forms say first, in this order (the keys' order is the answer's): the flag itself and its usage. */
function flagFacts(flag: Flag, usage: FlagUsage | undefined) {
  return {
    id: flag.id,
    name: flag.name,
    kind: flag.kind,
    ...bucketingField(flag.bucketing),
    ...(flag.type === undefined ? {} : { type: flag.type }),
    ...(flag.owner === undefined ? {} : { owner: flag.owner }),
    ...(flag.lifetimeDays === undefined ? {} : { lifetimeDays: flag.lifetimeDays }),
    ...(flag.archivedAt === undefined ? {} : { archivedAt: flag.archivedAt }),
    description: flag.description,
    tags: flag.tags,
    updatedAt: flag.updatedAt,
    lastEvaluatedAt: usage?.lastEvaluatedAt ?? null,
    evaluations: usage?.evaluations ?? 0,
  };
}

/** GET /api/v1/flags: every flag of the project, each as `representFlag` shows it. */
export function flagList(flags: readonly Flag[], project: Project, env: string | null, usageOf: UsageOf): FlagList {
  return { flags: flags.map((f) => representFlag(f, project, env, usageOf(f.id))) };
}

/** PATCH /api/v1/flags/{id}: whether anything changed, and the flag in flat form. */
export function patchResult(changed: boolean, flag: Flag, env: string | null, usage: FlagUsage | undefined): PatchResult {
  return { changed, flag: flatFlag(flag, env, usage) };
}

/** A group flag without `env` is in environments form; everything else is flat. */
export function representFlag(flag: Flag, project: Project, env: string | null, usage: FlagUsage | undefined): FlagRepresentation {
  return flag.kind === 'groupflag' && env === null ? environmentsFlag(flag, project, usage) : flatFlag(flag, env, usage);
}

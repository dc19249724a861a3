// The merge-patch rules of PATCH /api/v1/flags/{id} (spec rules 1-7 and 11), as a pure function.
import { envEntry, effectiveState, type EffectiveState } from './records/flag-state.js';
import type { EnvState, Flag, FlagState, TypedVariants } from '../model/flags.js';
import type { UnleashModel } from '../model/unleash-model.js';
import type { FlagPatch } from '../model/schemas.js';
import { appliedTyped, sameTyped, typedChanges } from './variant-rules.js';

export type FieldChanges = Record<string, { before: unknown; after: unknown }>;

export interface PatchOutcome {
  changed: boolean;
  /** The flag to store (the same object when nothing changed). */
  flag: Flag;
  /** Effective before/after of each field that changed, for the audit log. */
  changes: FieldChanges;
}

/** Cohorts are a set: order and repeats carry no meaning, so they are dropped on write and ignored on compare. */
export function normaliseCohorts(list: readonly string[]): string[] {
  return [...new Set(list)];
}

export function sameCohorts(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((c) => set.has(c));
}

/**
 * `typed` on a state made without it: the key only when there are variants, so a boolean flag's record
 * keeps exactly the keys it had before typed variants existed (the store writes `undefined` too).
 */
export function withTyped<S extends FlagState>(state: S, typed: TypedVariants | undefined): S {
  return typed === undefined ? state : { ...state, typed };
}

/**
 * `experiment` on a state made without it: the key only while there is one (as `typed`), so a state
 * without an experiment keeps exactly the keys it had before experiments existed.
 */
export function withExperiment<S extends FlagState>(state: S, experiment: string | null | undefined): S {
  return experiment === null || experiment === undefined ? state : { ...state, experiment };
}

/** `unleash` on a state made without it: the key only while there is a model (as `experiment`). */
export function withUnleash<S extends FlagState>(state: S, unleash: UnleashModel | null | undefined): S {
  return unleash === null || unleash === undefined ? state : { ...state, unleash };
}

/** A patch's Unleash model over the state's: absent keeps it, null removes it, a model replaces it whole. */
export function patchedUnleash(current: UnleashModel | undefined, patch: FlagPatch): UnleashModel | undefined {
  if (patch.unleash === undefined) return current;
  return patch.unleash ?? undefined;
}

/** Whether two states' Unleash models are the same (stored as given, so compared as JSON). */
function sameUnleash(a: UnleashModel | undefined, b: UnleashModel | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b));
}

/** A patch's experiment over the state's: absent keeps it, null ends it. */
function patchedExperiment(current: string | undefined, patch: FlagPatch): string | undefined {
  if (patch.experiment === undefined) return current;
  return patch.experiment ?? undefined;
}

/**
 * Applies `patch` to `flag` (to environment `env` of a group flag). A patch whose result equals the
 * stored state reports `changed: false` and returns the flag untouched: nothing is to be written.
 */
export function applyFlagPatch(flag: Flag, env: string | null, patch: FlagPatch, now: number): PatchOutcome {
  const before = effectiveState(flag, env);
  let next: Flag;
  if (flag.kind === 'flag') {
    const cohorts =
      patch.cohorts === undefined || sameCohorts(patch.cohorts, flag.cohorts) ? flag.cohorts : normaliseCohorts(patch.cohorts);
    next = {
      ...flag,
      cohorts,
      state: withUnleash(
        withExperiment(
          withTyped(
            {
              enabled: patch.enabled ?? flag.state.enabled,
              trafficPercentage: patch.trafficPercentage ?? flag.state.trafficPercentage,
              audienceId: patch.audienceId === undefined ? flag.state.audienceId : patch.audienceId,
            },
            appliedTyped(flag.state.typed, patch),
          ),
          patchedExperiment(flag.state.experiment, patch),
        ),
        patchedUnleash(flag.state.unleash, patch),
      ),
    };
  } else {
    if (env === null) throw new Error('a group flag is patched one environment at a time');
    const entry = envEntry(flag, env);
    const nextEntry: EnvState = withUnleash(
      withExperiment(
        withTyped(
          {
            enabled: patch.enabled ?? entry.enabled,
            trafficPercentage: patch.trafficPercentage ?? entry.trafficPercentage,
            audienceId: patch.audienceId === undefined ? entry.audienceId : patch.audienceId,
            cohorts: patch.cohorts === undefined ? entry.cohorts : overrideFor(entry.cohorts, flag.cohorts, patch.cohorts),
          },
          appliedTyped(entry.typed, patch),
        ),
        patchedExperiment(entry.experiment, patch),
      ),
      patchedUnleash(entry.unleash, patch),
    );
    if (sameEntry(entry, nextEntry)) return { changed: false, flag, changes: {} };
    next = { ...flag, environments: { ...flag.environments, [env]: nextEntry } };
  }
  const changes = diff(before, effectiveState(next, env));
  if (Object.keys(changes).length === 0) {
    if (flag.kind === 'flag') return { changed: false, flag, changes };
    // An override equal to the flag-wide list was removed: same effective list, different stored state.
    changes.cohortsOverride = { before: envEntry(flag, env ?? '').cohorts, after: null };
  }
  next.updatedAt = Math.max(now, flag.updatedAt + 1);
  return { changed: true, flag: next, changes };
}

/**
 * Rule 6/7: `[]` removes the override (the environment inherits the flag-wide list); a list equal to
 * what the environment already has keeps it as it is, so no override is created for the inherited list.
 */
function overrideFor(current: string[] | null, flagWide: readonly string[], wanted: readonly string[]): string[] | null {
  if (wanted.length === 0) return null;
  if (current === null) return sameCohorts(wanted, flagWide) ? null : normaliseCohorts(wanted);
  return sameCohorts(wanted, current) ? current : normaliseCohorts(wanted);
}

function sameEntry(a: EnvState, b: EnvState): boolean {
  return (
    a.enabled === b.enabled &&
    a.trafficPercentage === b.trafficPercentage &&
    a.audienceId === b.audienceId &&
    (a.cohorts === null ? b.cohorts === null : b.cohorts !== null && sameCohorts(a.cohorts, b.cohorts)) &&
    sameTyped(a.typed, b.typed) &&
    a.experiment === b.experiment &&
    sameUnleash(a.unleash, b.unleash)
  );
}

function diff(before: EffectiveState, after: EffectiveState): FieldChanges {
  const changes: FieldChanges = {};
  for (const key of ['enabled', 'trafficPercentage', 'audienceId'] as const) {
    if (before[key] !== after[key]) changes[key] = { before: before[key], after: after[key] };
  }
  if (before.experiment !== after.experiment) changes.experiment = { before: before.experiment ?? null, after: after.experiment ?? null };
  if (!sameCohorts(before.cohorts, after.cohorts)) changes.cohorts = { before: before.cohorts, after: after.cohorts };
  Object.assign(changes, typedChanges(before.typed, after.typed));
  if (!sameUnleash(before.unleash, after.unleash)) changes.unleash = { before: before.unleash ?? null, after: after.unleash ?? null };
  return changes;
}

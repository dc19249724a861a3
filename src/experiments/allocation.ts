// Who gets which variant of a flag in an environment (its allocation), and the rule that a running
// experiment's allocation does not change (docs/decisions.md: Experiments): its arms are compared as
// they were split when it started, so a change that moves who gets which variant while it runs is
// refused, whatever makes it (a flag patch, a shared fragment or audience changed, a flag file applied,
// an approved change request). Checked after every writer command (Capability.writeChecks), on what it
// wrote: the allocation the experiment started with is kept on its record, so the check reads only the
// store as the command left it.
import { FlagwireError } from '../errors.js';
import { fragmentRule, kFragmentRecords } from '../flags/records/fragment-records.js';
import { effectiveState } from '../flags/records/flag-state.js';
import { getFlag, kFlagRecords, listFlags } from '../flags/records/flag-store.js';
import type { Flag } from '../model/flags.js';
import { same } from '../model/json-same.js';
import type { WrittenChange } from '../capability/capability.js';
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { kAudienceRecords } from '../model/records/project-records.js';
import { ruleRefs } from '../targeting/refs.js';
import { type Experiment, experimentStatus, getExperiment, putExperiment } from './records.js';
import { envsOf, where } from './running-keys.js';
import { getAudience } from '../model/records/project-records.js';

/**
 * What decides who gets which variant of `flag` in `env`: its name (what clients ask for) and bucketing,
 * its state there but for the experiment key and the typed variants' metadata (served, not allocated),
 * and the rules of the audience and the shared fragments it reads. Its description and tags are not part of it.
 */
export function allocationOf(r: StoreReader, flag: Flag, env: string | null): Record<string, unknown> {
  const state = effectiveState(flag, env);
  const typed = state.typed;
  const fragments = typed === undefined ? [] : [...ruleRefs(typed.targeting)].sort();
  const shared = r.getKeyed(kFragmentRecords, flag.projectId)?.fragments ?? [];
  return {
    name: flag.name,
    bucketing: flag.bucketing ?? null,
    enabled: state.enabled,
    trafficPercentage: state.trafficPercentage,
    cohorts: state.cohorts,
    audience: state.audienceId === null ? null : { id: state.audienceId, rules: getAudience(r, state.audienceId)?.rules ?? null },
    typed: typed === undefined ? null : { variants: typed.variants, defaultVariant: typed.defaultVariant, targeting: typed.targeting },
    fragments: fragments.map((name) => {
      const fragment = shared.find((f) => f.name === name);
      return { name, rule: fragment === undefined ? null : fragmentRule(fragment) };
    }),
    unleash: state.unleash ?? null,
  };
}

/** The experiment running on `flag` in `env` (its state carries its key and it is running), if any. */
function runningOn(r: StoreReader, flag: Flag, env: string | null): Experiment | undefined {
  const key = effectiveState(flag, env).experiment;
  if (key === undefined) return undefined;
  const experiment = getExperiment(r, flag.projectId, env, key);
  return experiment !== undefined && experiment.flagId === flag.id && experimentStatus(experiment) === 'running' ? experiment : undefined;
}

/** Refuses where a running experiment on `flag` finds the flag's allocation other than it started with. */
function checkFlag(r: StoreReader, flag: Flag): void {
  for (const env of envsOf(flag)) {
    const experiment = runningOn(r, flag, env);
    // A record started before allocations were kept has none to hold the flag to: unchecked until it
    // starts again, rather than every change of its flag refused after an upgrade.
    if (experiment === undefined || experiment.allocation === null || same(experiment.allocation, allocationOf(r, flag, env))) continue;
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Flag ${flag.name} runs experiment "${experiment.key}"${where(env)}, and this change would alter who gets which variant there (its name, bucketing, on or off, percentage, cohorts, audience, variants, default variant, rule or the fragments it names) from what the experiment started with: nothing was changed. Stop the experiment first (its statistics are kept).`,
    );
  }
}

/**
 * The write check (Capability.writeChecks): each flag written, and each flag of a project whose
 * audience or shared fragments were written, keeps the allocation of the experiment it runs; a flag
 * deleted runs none.
 */
export function checkRunningAllocations(r: StoreReader, changes: readonly WrittenChange[]): void {
  const flags = new Set<string>();
  const projects = new Set<string>();
  for (const change of changes) {
    if (change.kind === kFlagRecords.name) flags.add((change.value as Flag).id);
    else if (change.kind === kFlagRecords.removal?.name) checkDeleted(r, change.value as Flag);
    else if (change.kind === kAudienceRecords.name || change.kind === kFragmentRecords.name)
      projects.add((change.value as { projectId: string }).projectId);
  }
  for (const projectId of projects) for (const flag of listFlags(r, projectId)) checkFlag(r, flag);
  for (const id of flags) {
    const flag = getFlag(r, id);
    if (flag !== undefined && !projects.has(flag.projectId)) checkFlag(r, flag);
  }
}

/** A flag is not deleted while an experiment runs on it. */
function checkDeleted(r: StoreReader, flag: Flag): void {
  if (getFlag(r, flag.id) !== undefined) return;
  for (const env of envsOf(flag)) {
    const experiment = runningOn(r, flag, env);
    if (experiment === undefined) continue;
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Flag ${flag.name} runs experiment "${experiment.key}"${where(env)}: it cannot be deleted while the experiment runs. Stop the experiment first (its statistics are kept).`,
    );
  }
}

/**
 * Re-records the allocation of experiment `key` from its flag as it stands, where it runs on `flagId`:
 * for the one writer that drives a running experiment's split, a rollout whose guard reads it (each step
 * and the rollback, in the same transaction). Every other change is held to the allocation by the check.
 */
export function followAllocation(w: StoreWriter, projectId: string, env: string | null, key: string, flagId: string, now: number): void {
  const experiment = getExperiment(w, projectId, env, key);
  const flag = getFlag(w, flagId);
  if (experiment === undefined || flag === undefined || experiment.flagId !== flagId || experimentStatus(experiment) !== 'running') return;
  putExperiment(w, { ...experiment, allocation: allocationOf(w, flag, env), updatedAt: now });
}

// The rule that a running experiment's key is on its own flag there, and only on it (docs/decisions.md:
// Experiments): the key is what exposures are counted under, so another flag carrying it would count its
// answers in the experiment's results, and its own flag dropping or changing it would leave the
// experiment saying running while it counts nothing (and its allocation free to move). Checked after
// every writer command (Capability.writeChecks) on the flags it wrote, so no surface goes around it; a
// start and a stop write the key in the same command as the record, and pass.
import type { WrittenChange } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import { effectiveState } from '../flags/records/flag-state.js';
import { getFlag, kFlagRecords, listFlags } from '../flags/records/flag-store.js';
import type { Flag } from '../model/flags.js';
import type { StoreReader } from '../store/interfaces.js';
import { type Experiment, experimentStatus, getExperiment, listExperiments } from './records.js';

/** The environments a flag has a state in: a single flag's one (null), a group flag's each. */
export function envsOf(flag: Flag): (string | null)[] {
  return flag.kind === 'flag' ? [null] : Object.keys(flag.environments);
}

export function where(env: string | null): string {
  return env === null ? '' : ` in ${env}`;
}

/** The write check: each flag written carries the key of every experiment running on it, and no other running experiment's key. */
export function checkRunningKeys(r: StoreReader, changes: readonly WrittenChange[]): void {
  for (const change of changes) {
    if (change.kind !== kFlagRecords.name) continue;
    const flag = getFlag(r, (change.value as Flag).id);
    // A flag deleted: the allocation check refuses that while an experiment runs on it.
    if (flag === undefined) continue;
    for (const env of envsOf(flag)) checkState(r, flag, env);
  }
}

function checkState(r: StoreReader, flag: Flag, env: string | null): void {
  const key = effectiveState(flag, env).experiment;
  for (const experiment of listExperiments(r, flag.projectId, env)) {
    if (experiment.flagId !== flag.id || experiment.key === key || experimentStatus(experiment) !== 'running') continue;
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Flag ${flag.name} runs experiment "${experiment.key}"${where(env)}: its experiment key cannot be changed or dropped while the experiment runs, which would count nothing from then on. Nothing was changed. Stop the experiment first (POST /api/v1/experiments/${experiment.key}/stop, or \`flagwire experiment stop PROJECT_ID ${experiment.key}\`; its statistics are kept).`,
    );
  }
  if (key === undefined) return;
  const running = getExperiment(r, flag.projectId, env, key);
  if (running !== undefined && running.flagId !== flag.id && experimentStatus(running) === 'running')
    throw keyOnSecondFlag(r, running, flag, env);
}

/** The refusal of `flag` carrying the key of `experiment`, which runs (or is starting) on another flag. */
export function keyOnSecondFlag(r: StoreReader, experiment: Experiment, flag: Flag, env: string | null): FlagwireError {
  const own = getFlag(r, experiment.flagId)?.name ?? experiment.flagId;
  return new FlagwireError(
    'INVALID_REQUEST',
    `Experiment "${experiment.key}" runs on flag ${own}${where(env)}, so flag ${flag.name} cannot carry its key too: its exposures would count in the experiment's results. Nothing was changed. Give flag ${flag.name} a key of its own, or none.`,
  );
}

/** A flag of the project other than the experiment's own that carries its key in its environment, if any. */
export function otherFlagWithKey(r: StoreReader, experiment: Experiment): Flag | undefined {
  return listFlags(r, experiment.projectId).find(
    (f) =>
      f.id !== experiment.flagId &&
      envsOf(f).includes(experiment.environment) &&
      effectiveState(f, experiment.environment).experiment === experiment.key,
  );
}

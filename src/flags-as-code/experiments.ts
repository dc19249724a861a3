// A project's experiments (src/experiments) as a flag file declares them (docs/flags-as-code.md:
// Experiments): under `experiments`, by key (a multi-environment project's by environment, then key),
// each with its plan and the flag it runs on by name. Whether one runs is never written beside it: its
// flag state's `experiment` key says it (fileRunning, the one home of that rule; docs/decisions.md).
// A file without `experiments` leaves the project's experiments as they are, as one without
// `$evaluators` leaves its fragments.
import { kDefaultAlpha, planProblems } from '../experiments/experiment-commands.js';
import type { ExperimentInFile } from '../experiments/schemas.js';
import { planOf } from '../experiments/records.js';
import { kExperimentKeyPattern } from '../model/schemas.js';
import type { ProjectKind } from '../model/projects.js';
import { formatPath } from '../targeting/problems.js';
import { byCodePoint, type ModelExperiment, type ModelFlag, type ModelState } from './project-model.js';

/** A file's `experiments`: by key, or, in a multi-environment project's file, by environment, then key. */
export type FileExperiments = Record<string, ExperimentInFile> | Record<string, Record<string, ExperimentInFile>>;

const kKey = new RegExp(kExperimentKeyPattern);

/**
 * Whether a file runs an experiment: its flag's state in its environment names it. The state's key wins
 * over the record's status (docs/decisions.md: Experiments in flag files), so a file has one place that
 * says it, and what evaluation reads (the key) is what the file says runs.
 */
function fileRunning(flag: ModelFlag | undefined, environment: string | null, key: string): boolean {
  return stateIn(flag, environment)?.experiment === key;
}

function stateIn(flag: ModelFlag | undefined, environment: string | null): ModelState | undefined {
  if (flag === undefined) return undefined;
  if (flag.kind === 'flag') return flag.state;
  return environment === null || !Object.hasOwn(flag.environments, environment) ? undefined : flag.environments[environment];
}

/** An experiment's place in a file: `experiments.KEY`, or `experiments.ENV.KEY`. */
export function experimentPath(environment: string | null, key: string): string {
  return formatPath(environment === null ? ['experiments', key] : ['experiments', environment, key]);
}

/**
 * A file's experiments read against its flags and environments, each problem named at its place: a key
 * that is no experiment key, an environment or flag the file does not have, a plan the API would refuse,
 * and a state whose `experiment` the file does not declare there on that flag (a file that declares
 * experiments declares every one its states run).
 */
export function readFileExperiments(
  kind: ProjectKind,
  given: FileExperiments,
  environments: readonly string[],
  flags: Readonly<Record<string, ModelFlag>>,
  problems: string[],
): ModelExperiment[] {
  const byEnv: [string | null, Record<string, ExperimentInFile>][] =
    kind === 'single'
      ? [[null, given as Record<string, ExperimentInFile>]]
      : Object.entries(given as Record<string, Record<string, ExperimentInFile>>);
  const out: ModelExperiment[] = [];
  for (const [env, entries] of byEnv) {
    if (env !== null && !environments.includes(env)) {
      problems.push(`${formatPath(['experiments', env])}: "${env}" is not in the file's environments (${environments.join(', ')})`);
      continue;
    }
    for (const key of Object.keys(entries).sort(byCodePoint)) {
      const entry = entries[key]!;
      const path = experimentPath(env, key);
      if (!kKey.test(key))
        problems.push(
          `${path}: an experiment key is a slug of 1 to 64 lowercase letters, digits, - and _, starting with a letter or digit`,
        );
      const flag = Object.hasOwn(flags, entry.flag) ? flags[entry.flag] : undefined;
      if (flag === undefined) problems.push(`${path}.flag: "${entry.flag}" is not one of the file's flags`);
      for (const problem of planProblems(entry)) problems.push(`${path}.${problem}`);
      out.push({
        environment: env,
        key,
        flag: entry.flag,
        ...planOf({ ...entry, alpha: entry.alpha ?? kDefaultAlpha }),
        running: fileRunning(flag, env, key),
      });
    }
  }
  for (const [name, flag] of Object.entries(flags)) {
    const states: [string | null, ModelState][] =
      flag.kind === 'flag' ? [[null, flag.state]] : Object.entries(flag.environments).map(([env, state]) => [env, state]);
    for (const [env, state] of states) {
      const key = state.experiment;
      if (key === undefined || out.some((e) => e.environment === env && e.key === key && e.flag === name)) continue;
      const at = formatPath(env === null ? ['flags', name, 'experiment'] : ['flags', name, 'environments', env, 'experiment']);
      problems.push(
        `${at}: "${key}" is not among the file's experiments on this flag${env === null ? '' : ` in ${env}`}; a file that declares experiments declares each one its flags run (add it under ${experimentPath(env, key)}, or drop the key)`,
      );
    }
  }
  return out;
}

/** The model's experiments as a file's `experiments`, every key in one order: the same experiments give the same bytes. */
export function fileExperiments(kind: ProjectKind, experiments: readonly ModelExperiment[]): FileExperiments {
  // fromEntries, not assignment: a key or environment named "__proto__" is a key like any other.
  if (kind === 'single') return Object.fromEntries(experiments.map((e) => [e.key, filePlan(e)]));
  const environments = [...new Set(experiments.map((e) => e.environment!))];
  return Object.fromEntries(
    environments.map((env) => [env, Object.fromEntries(experiments.filter((e) => e.environment === env).map((e) => [e.key, filePlan(e)]))]),
  );
}

/** An experiment's entry in a file: its plan, its flag by name. */
function filePlan(e: ModelExperiment): ExperimentInFile {
  return { flag: e.flag, ...planOf(e) };
}

/** What plan compares of an experiment (and shows, field by field): its plan, and whether it runs. */
export function comparableExperiment(e: ModelExperiment): Record<string, unknown> {
  return { ...filePlan(e), running: e.running };
}

export function sameExperiment(a: ModelExperiment, b: ModelExperiment): boolean {
  return a.environment === b.environment && a.key === b.key;
}

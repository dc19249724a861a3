// A project as flags as code sees it: what a flag file says, and what the store holds, in one shape,
// keyed by names (flags, audiences, environments), never by ids, so that a file exported from one
// project applies to another. Export writes it (file-text.ts); plan compares two of them (plan.ts).
//
// A cohort list is the effective one (an environment's own override, or else the flag-wide list), as
// the API reads it; the flag-wide list of a group flag and the audiences' definitions are null when the
// model does not carry them: the Management API's view, which cannot read them (spec: the flag-wide
// list "cannot be set or read as such through the API"; no route lists audiences), and a file that
// leaves them out. Null means "not managed here": plan leaves the stored ones as they are.
import type { UnleashModel } from '../model/unleash-model.js';
import { effectiveState } from '../flags/records/flag-state.js';
import type { Flag, FlagType, Lifetime, TypedVariants } from '../model/flags.js';
import { lifecycleFields } from '../flags/lifecycle.js';
import { bucketingField } from '../flags/bucketing.js';
import type { AudienceRule, Project, ProjectKind } from '../model/projects.js';
import type { StoreReader } from '../store/interfaces.js';
import { fragmentRule, listFragments } from '../flags/records/fragment-records.js';
import { listFlags } from '../flags/records/flag-store.js';
import { type ExperimentPlan, experimentStatus, listExperiments, planOf } from '../experiments/records.js';
import { listAudiences } from '../model/records/project-records.js';

export interface ModelState {
  enabled: boolean;
  trafficPercentage: number;
  /** The audience's name; null: everyone. */
  audience: string | null;
  /** The effective cohort list. */
  cohorts: string[];
  /** Absent: a boolean flag (state). */
  typed?: TypedVariants;
  /** The experiment its answers belong to (issue 58); absent: none. */
  experiment?: string;
  /** Unleash's model of the state (issue 60); absent: none. */
  unleash?: UnleashModel;
}

interface ModelFlagBase {
  description: string;
  tags: string[];
  /** As the record keeps it (src/model/flags.ts): absent for a modulo flag. */
  bucketing?: 'fractional';
  /** Its type, owner and lifetime (issue 99), each as the record keeps it: absent at its default. */
  type?: FlagType;
  owner?: string;
  lifetimeDays?: Lifetime;
}

export interface ModelSingleFlag extends ModelFlagBase {
  kind: 'flag';
  state: ModelState;
}

export interface ModelGroupFlag extends ModelFlagBase {
  kind: 'groupflag';
  /** The flag-wide cohort list; null: not carried (see the header). */
  cohorts: string[] | null;
  /** Every environment of the model, in its order. */
  environments: Record<string, ModelState>;
}

export type ModelFlag = ModelSingleFlag | ModelGroupFlag;

export interface ProjectModel {
  kind: ProjectKind;
  /** In the project's order (creation order); [] for a single-environment project. */
  environments: string[];
  /** Audience name -> rules; null: not carried (see the header). */
  audiences: Record<string, AudienceRule[]> | null;
  /** Flag name -> flag, sorted by name. */
  flags: Record<string, ModelFlag>;
  /**
   * The project's shared fragments (src/fragments), name -> rule, sorted by name: a file's `$evaluators`.
   * Null: not carried (a file without `$evaluators`), so plan leaves the stored ones as they are.
   */
  fragments: Record<string, Record<string, unknown>> | null;
  /**
   * The project's experiments (src/experiments; experiments.ts), by environment in the project's order,
   * then key. Absent: not carried (a file without `experiments`, a model built elsewhere, as the Unleash
   * importer's), so plan leaves the stored ones as they are.
   */
  experiments?: ModelExperiment[];
}

/** An experiment of a project model (experiments.ts): its environment (null in a single-environment project), key and plan. */
export type ModelExperiment = ExperimentPlan & {
  environment: string | null;
  key: string;
  /** The flag it runs on, by name. */
  flag: string;
  /** Stored: its record runs. In a file: its flag state there names it (fileRunning). */
  running: boolean;
};

/** Whose view: the console's (everything) or the Management API's (see the header and apiView). */
export type ModelView = 'console' | 'api';

/** The state a group flag's environment has until something sets it (spec: disabled at 0% with no cohorts). */
export function defaultModelState(): ModelState {
  return { enabled: false, trafficPercentage: 0, audience: null, cohorts: [] };
}

/** The stored project as a model, flags sorted by name (code-point order: the same bytes on every machine). */
export function projectModel(r: StoreReader, project: Project): ProjectModel {
  const audiences = listAudiences(r, project.id);
  const audienceName = new Map(audiences.map((a) => [a.id, a.name]));
  // fromEntries, not assignment: a flag named "__proto__" is a key like any other (assigned, it would set the prototype).
  const stored = sortedByName(listFlags(r, project.id));
  const flags: Record<string, ModelFlag> = Object.fromEntries(stored.map((flag) => [flag.name, modelFlag(flag, project, audienceName)]));
  return {
    kind: project.kind,
    environments: [...project.environments],
    audiences: Object.fromEntries(
      sortedByName(audiences).map((a) => [a.name, a.rules.map((rule) => ({ attribute: rule.attribute, values: [...rule.values] }))]),
    ),
    flags,
    fragments: Object.fromEntries(listFragments(r, project.id).map((f) => [f.name, fragmentRule(f)])),
    experiments: storedExperiments(r, project, new Map(stored.map((f) => [f.id, f.name]))),
  };
}

/**
 * The project's experiments on flags it still has (one whose flag was deleted has no name to be written
 * under, and is left as it is), by environment in the project's order, then key.
 */
function storedExperiments(r: StoreReader, project: Project, flagNames: ReadonlyMap<string, string>): ModelExperiment[] {
  const environments = project.kind === 'single' ? [null] : project.environments;
  return environments.flatMap((env) =>
    listExperiments(r, project.id, env)
      .filter((e) => flagNames.has(e.flagId))
      .sort((a, b) => byCodePoint(a.key, b.key))
      .map((e) => ({
        environment: env,
        key: e.key,
        flag: flagNames.get(e.flagId)!,
        ...planOf(e),
        running: experimentStatus(e) === 'running',
      })),
  );
}

function modelFlag(flag: Flag, project: Project, audienceName: ReadonlyMap<string, string>): ModelFlag {
  const state = (env: string | null): ModelState => {
    const s = effectiveState(flag, env);
    const out: ModelState = {
      enabled: s.enabled,
      trafficPercentage: s.trafficPercentage,
      audience: s.audienceId === null ? null : (audienceName.get(s.audienceId) ?? s.audienceId),
      cohorts: [...s.cohorts],
    };
    if (s.typed !== undefined) out.typed = s.typed;
    if (s.experiment !== undefined) out.experiment = s.experiment;
    if (s.unleash !== undefined) out.unleash = s.unleash;
    return out;
  };
  const base = { description: flag.description, tags: [...flag.tags], ...bucketingField(flag.bucketing), ...lifecycleFields(flag) };
  if (flag.kind === 'flag') return { ...base, kind: 'flag', state: state(null) };
  return {
    ...base,
    kind: 'groupflag',
    cohorts: [...flag.cohorts],
    environments: Object.fromEntries(project.environments.map((env) => [env, state(env)])),
  };
}

export function sortedByName<T extends { name: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => byCodePoint(a.name, b.name));
}

/** Code-point order: the same order on every machine, whatever its locale. */
export function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The model as the Management API may read and write it: without what the API neither reads nor writes
 * (spec: no route lists audiences; a group flag's flag-wide cohort list "cannot be set or read as such
 * through the API"). Those parts become null, unmanaged: plan and apply leave them as they are. Returns
 * the parts it took out, for the plan to name.
 */
export function apiView(model: ProjectModel): string[] {
  const ignored: string[] = [];
  if (model.audiences !== null) {
    ignored.push('audiences (defined in the console; flags may name them)');
    model.audiences = null;
  }
  for (const [name, flag] of Object.entries(model.flags)) {
    if (flag.kind === 'groupflag' && flag.cohorts !== null) {
      ignored.push(`flags.${name}.cohorts (a flag-wide cohort list is set in the console)`);
      flag.cohorts = null;
    }
  }
  return ignored;
}

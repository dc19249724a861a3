// Plan and apply a flag file (docs/flags-as-code.md). Plan reads; apply is one writer command, so one
// transaction (one revision of PostgreSQL): every change of the file is written, or, when anything is
// refused, nothing is. Each change goes through the command that makes it by hand (flag create and
// patch, the console's edits, environments, audiences, experiments), with the same checks and the same audit entries
// under the same actor; a change to nothing writes nothing, so applying a file twice writes once.
import { FlagwireError } from '../errors.js';
import { type Actor, actorFor, type Principal, tokenProject } from '../actor/audit-actor.js';
import type { Project } from '../model/projects.js';
import { requireProject } from '../model/records/lookups.js';
import { jsonBody, parseJsonObject, type ReceivedBody } from '../model/request-body.js';
import { audienceCreate, audienceUpdate, envAdd } from '../projects/project-commands.js';
import { createFlagAs, flagCohorts, flagDelete, flagDescribe, flagTags, patchFlagAs } from '../flags/flag-commands.js';
import { sameCohorts } from '../flags/patch-rules.js';
import { bucketingField } from '../flags/bucketing.js';
import { lifecycleFields } from '../flags/lifecycle.js';
import { flagLifecycle } from '../flags/lifecycle-commands.js';
import { sameJson, sameTyped } from '../flags/variant-rules.js';
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { fileRefusal, parseFlagFile } from './flag-file.js';
import { formatPath } from '../targeting/problems.js';
import { fragmentRules, projectFragments } from '../flags/records/fragment-records.js';
import { deleteFragmentAs, putFragmentAs } from '../fragments/fragment-commands.js';
import { sideJob } from '../side-work/side-thread.js';
import { isConsoleOnlyField, planChanges, planDigest, type ProjectRevision, projectRevision } from './plan.js';
import type { PlannedChange, PlanResult } from './schemas.js';
import {
  apiView,
  defaultModelState,
  type ModelExperiment,
  type ModelFlag,
  type ModelGroupFlag,
  type ModelState,
  type ModelView,
  type ProjectModel,
  projectModel,
} from './project-model.js';
import { findFlagByName } from '../flags/records/flag-store.js';
import {
  experimentCreate,
  experimentDelete,
  experimentStart,
  experimentStop,
  experimentUpdate,
} from '../experiments/experiment-commands.js';
import { experimentStatus, getExperiment } from '../experiments/records.js';
import { experimentPath } from './experiments.js';
import { listAudiences } from '../model/records/project-records.js';

export interface PlanInput {
  projectId: string;
  /** The file: JSON text, or the value JSON.parse gave. */
  document: unknown;
  prune: boolean;
}

/** `flagwire plan`: the changes applying the file would make. */
export function flagsPlan(r: StoreReader, input: PlanInput): PlanResult {
  return plan(r, requireProject(r, input.projectId), input.document, input.prune, 'console').result;
}

/** The Management API's plan: as flagsPlan, in the token's project, in the API's view. */
export function apiFlagsPlan(r: StoreReader, project: Project, received: ReceivedBody, prune: boolean): PlanResult {
  return plan(r, project, receivedDocument(received), prune, 'api').result;
}

export interface PlanJobInput {
  projectId: string;
  /** The file as the request's body. */
  received: ReceivedBody;
  prune: boolean;
}

/** The Management API's plan as a job of the front end's side thread (src/side-work). */
export function planJob(r: StoreReader, input: PlanJobInput): PlanResult {
  return apiFlagsPlan(r, requireProject(r, input.projectId), input.received, input.prune);
}

/** planJob, as the side thread runs it. */
export const kPlanJob = sideJob<PlanJobInput, PlanResult>(import.meta.url, 'planJob');

/** What an apply insists on: the plan someone saw (docs/flags-as-code.md, "A saved plan"). */
export interface ApplyConditions {
  /** Refuse when the project revision is no longer this one (a lost update otherwise): apply's `ifRevision`. */
  ifProjectRevision: ProjectRevision | null;
  /** Refuse when the changes to make are not the ones of the plan with this digest (another file, or prune). */
  ifPlan: string | null;
}

export interface ApplyInput extends ApplyConditions {
  principal: Principal;
  /** The project, for a person or the operator (a token applies to its own project). */
  projectId: string;
  /**
   * The file: the Management API's body as received (read by the rules of every request body), or the
   * text of the command line's file, or of the file a node follows, as a body (jsonBody).
   */
  received: ReceivedBody;
  prune: boolean;
}

/**
 * POST /api/v1/apply, `flagwire apply` and a node following a file (serve --flags-file): audited as the
 * token, the `--as` user or `console`. A token sees the file in the API's view, a person or the operator
 * in the console's.
 */
export function flagsApply(w: StoreWriter, input: ApplyInput, now: number): PlanResult {
  const { principal } = input;
  if (principal.kind === 'token') {
    const project = tokenProject(w, principal, now);
    const actor = actorFor(w, principal, project, 'editFlags', now);
    return apply(w, project, receivedDocument(input.received), input, { view: 'api', actor, principal }, now);
  }
  const project = requireProject(w, input.projectId);
  const actor = actorFor(w, principal, project, 'editFlags', now);
  const text = Buffer.from(input.received.bytes).toString('utf8');
  return apply(w, project, text, input, { view: 'console', actor, principal }, now);
}

interface Applier {
  view: ModelView;
  actor: Actor;
  /** Who asked: the environment, audience and console-only flag edits a file makes are given it too. */
  principal: Principal;
}

function plan(r: StoreReader, project: Project, document: unknown, prune: boolean, view: ModelView) {
  const parsed = parseFlagFile(document, fragmentRules(projectFragments(r, project.id)));
  if (!parsed.ok) throw fileRefusal(parsed.problems);
  const ignored = view === 'api' ? apiView(parsed.model) : [];
  const current = projectModel(r, project);
  const planned = planChanges(current, parsed.model, { prune });
  if (!planned.ok) throw fileRefusal(planned.problems);
  const result: PlanResult = {
    projectId: project.id,
    revision: projectRevision(r, project.id),
    changed: planned.changes.length > 0,
    changes: planned.changes,
    digest: planDigest(project.id, planned.changes),
    notInFile: planned.notInFile,
    ignored,
  };
  return { result, current, desired: parsed.model };
}

function apply(
  w: StoreWriter,
  project: Project,
  document: unknown,
  options: { prune: boolean } & ApplyConditions,
  applier: Applier,
  now: number,
): PlanResult {
  const { result, current, desired } = plan(w, project, document, options.prune, applier.view);
  refuseUnplanned(result, options, applier.view);
  if (applier.view === 'api') refuseConsoleOnly(result.changes, desired);
  const run = new ChangeRunner(w, project, applier, now);
  for (const change of result.changes) {
    if (change.kind === 'environment') run.environment(change.name);
    else if (change.kind === 'audience') run.audience(change, desired);
    // Made or changed before the flags that may name them.
    else if (change.kind === 'fragment' && change.op !== 'delete') run.fragment(change.name, desired.fragments![change.name]!);
  }
  for (const change of result.changes) {
    if (change.kind !== 'flag') continue;
    run.inFlag(change.name, () => {
      if (change.op === 'delete') run.deleteFlag(change.name);
      else if (change.op === 'create') run.createFlag(change.name, desired.flags[change.name]!);
      else run.updateFlag(change.name, current.flags[change.name]!, desired.flags[change.name]!);
    });
  }
  // Deleted once the file's flags name them no more.
  for (const change of result.changes) if (change.kind === 'fragment' && change.op === 'delete') run.deleteFragment(change.name);
  // After the flags: an experiment runs on a flag the file may make, and starts on its state as the file leaves it.
  for (const change of result.changes) if (change.kind === 'experiment') run.experiment(change, desired.experiments ?? []);
  return result.changed ? { ...result, revision: projectRevision(w, project.id) } : result;
}

/** The conditions of a saved plan, checked in the transaction that applies it: a change made since stops it. */
function refuseUnplanned(result: PlanResult, conditions: ApplyConditions, view: ModelView): void {
  // result.revision: the project revision (PlanResult), not the store's.
  if (conditions.ifProjectRevision !== null && conditions.ifProjectRevision !== result.revision) {
    // The fix names the caller's own way to give the revision: an API client has no command-line flag.
    const retry = view === 'api' ? `ifRevision=${result.revision}` : `--if-revision ${result.revision}`;
    throw new FlagwireError(
      'REVISION_CONFLICT',
      `The project changed since revision ${conditions.ifProjectRevision} (it is at revision ${result.revision}); nothing was applied. Plan again, review the changes, and apply with ${retry}.`,
    );
  }
  if (conditions.ifPlan !== null && conditions.ifPlan !== result.digest) {
    throw new FlagwireError(
      'PLAN_CONFLICT',
      `The changes this file makes now are not those of the plan ${conditions.ifPlan} (they are the plan ${result.digest}: ${result.changes.length} change${result.changes.length === 1 ? '' : 's'}); nothing was applied. Apply the file the plan was made of, with the same prune, or plan again and review.`,
    );
  }
}

function refuseConsoleOnly(changes: readonly PlannedChange[], desired: ProjectModel): void {
  const refused = changes.filter((c) => c.consoleOnly).map((c) => describeConsoleOnly(c, desired));
  if (refused.length === 0) return;
  throw new FlagwireError(
    'FORBIDDEN',
    `Only the console may make these changes (the Management API cannot delete flags, edit descriptions, tags or flag-wide cohort lists, or define environments and audiences): ${refused.join('; ')}. Nothing was applied: apply the file with \`flagwire apply\`, or change the file.`,
  );
}

function describeConsoleOnly(change: PlannedChange, desired: ProjectModel): string {
  if (change.kind !== 'flag') return `${change.op} ${change.kind} "${change.name}"`;
  if (change.op === 'delete') return `delete flag "${change.name}" (--prune)`;
  if (change.op === 'create') return `create flag "${change.name}" with a flag-wide cohort list`;
  const flag = desired.flags[change.name]!;
  const fields = change.fields.filter((f) => isConsoleOnlyField(f, flag)).map((f) => (f.path === 'cohorts' ? 'flag-wide cohorts' : f.path));
  return `change ${fields.join(', ')} of flag "${change.name}"`;
}

/** Runs the changes, each through the command a person would use. */
class ChangeRunner {
  constructor(
    private readonly w: StoreWriter,
    private readonly project: Project,
    private readonly applier: Applier,
    private readonly now: number,
  ) {}

  environment(name: string): void {
    envAdd(this.w, { projectId: this.project.id, name, principal: this.applier.principal }, this.now);
  }

  audience(change: PlannedChange, desired: ProjectModel): void {
    const rules = desired.audiences![change.name]!;
    const input = { principal: this.applier.principal, rules };
    if (change.op === 'create') audienceCreate(this.w, { ...input, projectId: this.project.id, name: change.name }, this.now);
    else audienceUpdate(this.w, { ...input, audienceId: this.audienceId(change.name)! }, this.now);
  }

  /** A shared fragment made or changed as the applier (the command's checks: every flag using it). */
  fragment(name: string, rule: Record<string, unknown>): void {
    this.inPath(formatPath(['$evaluators', name]), () => putFragmentAs(this.w, this.project, this.applier.actor, name, rule, this.now));
  }

  deleteFragment(name: string): void {
    this.inPath(formatPath(['$evaluators', name]), () => deleteFragmentAs(this.w, this.project, this.applier.actor, name, this.now));
  }

  /**
   * An experiment made, changed or deleted through its own commands (their checks and audit entries),
   * stopped or started as its flag's state in the file says (experiments.ts): stopped before its plan
   * changes, started after. A change to a running experiment's plan is refused as the API refuses it.
   */
  experiment(change: PlannedChange, desired: readonly ModelExperiment[]): void {
    const env = change.environment ?? null;
    const target = { principal: this.applier.principal, projectId: this.project.id, env, key: change.name };
    this.inPath(experimentPath(env, change.name), () => {
      const stored = getExperiment(this.w, this.project.id, env, change.name);
      const running = stored !== undefined && experimentStatus(stored) === 'running';
      const wanted = desired.find((e) => e.environment === env && e.key === change.name);
      if (running && wanted?.running !== true) experimentStop(this.w, target, this.now);
      if (wanted === undefined) {
        experimentDelete(this.w, target, this.now);
        return;
      }
      const { flag, variants, control, metrics, primaryMetric, plannedSubjects, alpha } = wanted;
      const plan = { flagId: this.flagId(flag), variants, control, metrics, primaryMetric, plannedSubjects, alpha };
      if (stored === undefined)
        experimentCreate(this.w, { ...target, received: jsonBody(JSON.stringify({ key: change.name, ...plan })) }, this.now);
      else experimentUpdate(this.w, { ...target, received: jsonBody(JSON.stringify(plan)) }, this.now);
      if (wanted.running && !running) experimentStart(this.w, target, this.now);
    });
  }

  /** A refusal of a change, named by its place in the file: the transaction is abandoned whole. */
  private inPath(path: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      if (err instanceof FlagwireError && err.code === 'INVALID_REQUEST') throw fileRefusal([`${path}: ${err.detail}`]);
      throw err;
    }
  }

  /** A refusal of a change to one flag, named by the flag (the file's path): the transaction is abandoned whole. */
  inFlag(name: string, fn: () => void): void {
    this.inPath(`flags.${name}`, fn);
  }

  deleteFlag(name: string): void {
    flagDelete(this.w, { flagId: this.flagId(name), principal: this.applier.principal }, this.now);
  }

  createFlag(name: string, flag: ModelFlag): void {
    const base = { name, description: flag.description, tags: flag.tags, ...bucketingField(flag.bucketing), ...lifecycleFields(flag) };
    const body =
      flag.kind === 'flag'
        ? { ...base, ...this.stateBody(flag.state, null) }
        : {
            ...base,
            // Environments at their defaults are left out: a token limited to some environments may create the flag.
            environments: Object.fromEntries(
              Object.entries(flag.environments)
                .filter(([, state]) => !isDefaultState(state))
                .map(([env, state]) => [env, this.stateBody(state, flag.cohorts ?? [])]),
            ),
          };
    const made = createFlagAs(this.w, { projectId: this.project.id, actor: this.applier.actor, body }, this.now);
    if (flag.kind === 'groupflag' && (flag.cohorts?.length ?? 0) > 0)
      flagCohorts(this.w, { flagId: made.id, cohorts: flag.cohorts!, principal: this.applier.principal }, this.now);
  }

  updateFlag(name: string, stored: ModelFlag, flag: ModelFlag): void {
    const flagId = this.flagId(name);
    const edit = { flagId, principal: this.applier.principal };
    if (flag.description !== stored.description) flagDescribe(this.w, { ...edit, text: flag.description }, this.now);
    if (!sameJson(flag.tags, stored.tags)) flagTags(this.w, { ...edit, tags: flag.tags }, this.now);
    // Each field the file leaves out is its default: null returns the stored one to it.
    const lifecycle = { type: flag.type ?? null, owner: flag.owner ?? null, lifetimeDays: flag.lifetimeDays ?? null };
    if (!sameJson(lifecycleFields(flag), lifecycleFields(stored))) flagLifecycle(this.w, { ...edit, patch: lifecycle }, this.now);
    if (flag.kind === 'flag' && stored.kind === 'flag') {
      this.patch(flagId, null, stored.state, flag.state, null);
      return;
    }
    const group = flag as ModelGroupFlag;
    const storedGroup = stored as ModelGroupFlag;
    const wideChanged = group.cohorts !== null && !sameJson(group.cohorts, storedGroup.cohorts);
    if (wideChanged) flagCohorts(this.w, { ...edit, cohorts: group.cohorts! }, this.now);
    const wide = group.cohorts ?? storedGroup.cohorts ?? [];
    for (const [env, state] of Object.entries(group.environments)) {
      // An environment the file adds starts as every new one does: disabled, 0%, inheriting.
      const was = Object.hasOwn(storedGroup.environments, env)
        ? storedGroup.environments[env]!
        : { ...defaultModelState(), cohorts: [...(storedGroup.cohorts ?? [])] };
      // Only the environments that change: a token limited to some environments may apply the others'.
      // A new flag-wide list changes what every inheriting environment has, so each is set again.
      if (wideChanged || !sameState(was, state)) this.patch(flagId, env, was, state, wide);
    }
  }

  /** PATCH of the fields of one state that differ. */
  private patch(flagId: string, env: string | null, was: ModelState, state: ModelState, wide: string[] | null): void {
    const body = this.stateBody(state, wide);
    const patch: Record<string, unknown> = {};
    if (was.enabled !== state.enabled) patch.enabled = body.enabled;
    if (was.trafficPercentage !== state.trafficPercentage) patch.trafficPercentage = body.trafficPercentage;
    // A group flag's environment inherits the flag-wide list by `cohorts: []`; the flag-wide list may
    // have changed above, so its cohorts are always sent (an equal list changes nothing).
    if (wide !== null || !sameCohorts(was.cohorts, state.cohorts)) patch.cohorts = body.cohorts;
    if (was.audience !== state.audience) patch.audienceId = body.audienceId;
    if (!sameTyped(was.typed, state.typed)) Object.assign(patch, typedBody(state, true));
    if (was.experiment !== state.experiment) patch.experiment = state.experiment ?? null;
    if (!sameModel(was.unleash, state.unleash)) patch.unleash = state.unleash ?? null;
    patchFlagAs(this.w, { projectId: this.project.id, flagId, env, actor: this.applier.actor, patch }, this.now);
  }

  /** A state as a create or patch body; `wide`: a group flag's flag-wide list (an environment equal to it inherits). */
  private stateBody(state: ModelState, wide: string[] | null): Record<string, unknown> {
    const inherits = wide !== null && wide.length > 0 && sameCohorts(state.cohorts, wide);
    return {
      enabled: state.enabled,
      trafficPercentage: state.trafficPercentage,
      cohorts: inherits ? [] : state.cohorts,
      audienceId: state.audience === null ? null : this.audienceId(state.audience),
      ...typedBody(state, false),
      ...(state.experiment === undefined ? {} : { experiment: state.experiment }),
      ...(state.unleash === undefined ? {} : { unleash: state.unleash }),
    };
  }

  private audienceId(name: string): string | undefined {
    return listAudiences(this.w, this.project.id).find((a) => a.name === name)?.id;
  }

  /** By the store's index of names: a file of thousands of flags is applied without reading every flag per change. */
  private flagId(name: string): string {
    return findFlagByName(this.w, this.project.id, name)!.id;
  }
}

/** The typed-variant keys of a body; `clear`: a boolean state in a patch is `variants: {}`. */
function typedBody(state: ModelState, clear: boolean): Record<string, unknown> {
  const { typed } = state;
  if (typed === undefined) return clear ? { variants: {} } : {};
  return { variants: typed.variants, defaultVariant: typed.defaultVariant, targeting: typed.targeting, metadata: typed.metadata ?? {} };
}

function sameState(a: ModelState, b: ModelState): boolean {
  return (
    a.enabled === b.enabled &&
    a.trafficPercentage === b.trafficPercentage &&
    a.audience === b.audience &&
    sameCohorts(a.cohorts, b.cohorts) &&
    sameTyped(a.typed, b.typed) &&
    a.experiment === b.experiment &&
    sameModel(a.unleash, b.unleash)
  );
}

/** Two states' Unleash models (issue 60) are the same when their JSON is: they are stored as written. */
function sameModel(a: ModelState['unleash'], b: ModelState['unleash']): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function isDefaultState(state: ModelState): boolean {
  return (
    !state.enabled &&
    state.trafficPercentage === 0 &&
    state.audience === null &&
    state.cohorts.length === 0 &&
    state.typed === undefined &&
    state.experiment === undefined &&
    state.unleash === undefined
  );
}

/** The file the API was sent as its body: a JSON object, by the rules of every request body. */
function receivedDocument(received: ReceivedBody): Record<string, unknown> {
  const parsed = parseJsonObject(received, 'create');
  if (!parsed.ok) throw new FlagwireError('INVALID_REQUEST', parsed.problem);
  return parsed.value;
}

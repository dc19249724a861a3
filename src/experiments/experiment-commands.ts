// Experiments as writer commands (issue 59): made, changed, started, stopped and deleted by a token, a
// person or the operator, each audited; and the sample-ratio history a look at the results lowers.
// Starting sets the flag state's `experiment` key and stopping clears it, through the flags capability's
// own patch in the same transaction: the exposures are counted exactly while the experiment runs, the
// change is audited as the flag's too, and where the environment is guarded the approvals gate judges
// it as any change to what evaluation reads there: applied for a bypass token, else refused (a change
// request cannot hold an experiment record; docs/decisions.md: Experiments).
import { type Actor, actorInProject, type Principal, writeAudit } from '../actor/audit-actor.js';
import { FlagwireError } from '../errors.js';
import { patchFlagAs } from '../flags/flag-commands.js';
import { allocationOf } from './allocation.js';
import { keyOnSecondFlag, otherFlagWithKey } from './running-keys.js';
import { getFlag } from '../flags/records/flag-store.js';
import { effectiveState } from '../flags/records/flag-state.js';
import type { AuditEntry } from '../model/audit.js';
import { requireEnvironmentAllowed, resolveEnvParam } from '../model/environments.js';
import type { Flag } from '../model/flags.js';
import type { Project } from '../model/projects.js';
import { checkedBody, type ReceivedBody } from '../model/request-body.js';
import { compileValidator } from '../model/validation.js';
import type { StoreWriter } from '../store/interfaces.js';
import type { ExperimentAuditAction } from './audit-actions.js';
import {
  deleteExperiment,
  type Experiment,
  experimentStatus,
  getExperiment,
  type IntervalPoint,
  listExperiments,
  planOf,
  putExperiment,
} from './records.js';
import { ExperimentCreate, type ExperimentBody, ExperimentUpdate, kMaxIntervalPoints } from './schemas.js';

const kCreateValidator = compileValidator(ExperimentCreate, { quoteKeys: false });
const kUpdateValidator = compileValidator(ExperimentUpdate, { quoteKeys: false });
/** Experiments a project environment may keep (running, stopped or not yet started). */
export const kMaxExperiments = 200;
export const kDefaultAlpha = 0.05;

/** What every experiment command names: who asks, the project (a token acts in its own), the environment as sent. */
interface Target {
  principal: Principal;
  projectId: string;
  /** The `env` query parameter (`--env`) as sent. */
  env: string | null;
}

export type ExperimentKeyInput = Target & { key: string };

/** The project and environment an experiment command acts in, and who acts: its problems thrown as the API's. */
function actingIn(w: StoreWriter, target: Target, now: number): { project: Project; actor: Actor; env: string | null } {
  const { project, actor } = actorInProject(w, target.principal, () => target.projectId, 'editFlags', now);
  const env = resolveEnvParam(project, target.env, true, 'list');
  requireEnvironmentAllowed(actor.environments, env);
  return { project, actor, env };
}

export function experimentNotFound(key: string): FlagwireError {
  // Said in full: events under a key are counted whether or not its plan exists, so a key on a flag
  // with events flowing looks like an experiment until its results are asked for.
  return new FlagwireError(
    'NOT_FOUND',
    `No experiment "${key}" exists in this project's environment. Events sent under a key are counted, but an experiment is its plan (variants, metrics, planned size): make it with \`flagwire experiment create\` or POST /api/v1/experiments, then start it.`,
  );
}

function requireExperiment(w: StoreWriter, projectId: string, env: string | null, key: string): Experiment {
  const experiment = getExperiment(w, projectId, env, key);
  if (experiment === undefined) throw experimentNotFound(key);
  return experiment;
}

/** The experiment as the API shows it. */
export function experimentView(e: Experiment): ExperimentBody {
  return {
    key: e.key,
    environment: e.environment,
    flagId: e.flagId,
    ...planOf(e),
    status: experimentStatus(e),
    startedAt: e.startedAt,
    stoppedAt: e.stoppedAt,
    lowestSrmPValue: e.lowestSrmPValue,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}

/** The plan's own problems: one arm per variant, the control and the primary metric among them, one entry per metric. */
export function planProblems(plan: Pick<Experiment, 'variants' | 'control' | 'metrics' | 'primaryMetric'>): string[] {
  const problems: string[] = [];
  const variants = plan.variants.map((v) => v.variant);
  if (new Set(variants).size !== variants.length) problems.push('variants: each variant may be named once');
  if (!variants.includes(plan.control)) problems.push(`control: "${plan.control}" must be one of variants (${variants.join(', ')})`);
  const metrics = plan.metrics.map((m) => m.metric);
  if (new Set(metrics).size !== metrics.length) problems.push('metrics: each metric may be named once');
  if (!metrics.includes(plan.primaryMetric))
    problems.push(`primaryMetric: "${plan.primaryMetric}" must be one of metrics (${metrics.join(', ')})`);
  return problems;
}

/** The flag the experiment runs on, in the project, or the problem naming it. */
function flagProblem(w: StoreWriter, projectId: string, flagId: string): string | null {
  const flag = getFlag(w, flagId);
  return flag === undefined || flag.projectId !== projectId ? `flagId: no flag with id "${flagId}" exists in this project` : null;
}

export type ExperimentCreateInput = Target & { received: ReceivedBody };

export function experimentCreate(w: StoreWriter, input: ExperimentCreateInput, now: number): ExperimentBody {
  const { project, actor, env } = actingIn(w, input, now);
  const body = checkedBody(input.received, kCreateValidator);
  const problems = planProblems(body);
  const flag = flagProblem(w, project.id, body.flagId);
  if (flag !== null) problems.push(flag);
  if (getExperiment(w, project.id, env, body.key) !== undefined)
    problems.push(`key: experiment "${body.key}" already exists in this environment`);
  if (listExperiments(w, project.id, env).length >= kMaxExperiments)
    problems.push(`an environment keeps at most ${kMaxExperiments} experiments: delete one first`);
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  const experiment: Experiment = {
    projectId: project.id,
    environment: env,
    key: body.key,
    flagId: body.flagId,
    variants: body.variants.map(({ variant, weight }) => ({ variant, weight })),
    control: body.control,
    metrics: body.metrics.map(({ metric, kind }) => ({ metric, kind })),
    primaryMetric: body.primaryMetric,
    plannedSubjects: body.plannedSubjects,
    alpha: body.alpha ?? kDefaultAlpha,
    startedAt: null,
    stoppedAt: null,
    lowestSrmPValue: 1,
    allocation: null,
    createdAt: now,
    updatedAt: now,
    createdBy: actor.id,
  };
  putExperiment(w, experiment);
  audit(w, actor, experiment, 'experiment.create', { experiment: { before: null, after: experimentView(experiment) } }, now);
  return experimentView(experiment);
}

export type ExperimentUpdateInput = ExperimentKeyInput & { received: ReceivedBody };

/**
 * A change to an experiment's plan. Refused while it runs, whatever it names (docs/decisions.md:
 * Experiments): the arms, weights, control and metrics are what its statistics are counted and judged
 * against, and the planned size and alpha tune its always-valid sequences; changed mid-run, the
 * sequences' guarantee would be of a test nobody ran. Stop it first.
 */
export function experimentUpdate(w: StoreWriter, input: ExperimentUpdateInput, now: number): ExperimentBody {
  const { project, actor, env } = actingIn(w, input, now);
  const before = requireExperiment(w, project.id, env, input.key);
  const body = checkedBody(input.received, kUpdateValidator);
  if (experimentStatus(before) === 'running')
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Experiment "${before.key}" is running: its plan (flag, variants, weights, control, metrics, planned size, alpha) cannot change while it runs. Stop it first (its statistics are kept).`,
    );
  const after: Experiment = {
    ...before,
    flagId: body.flagId ?? before.flagId,
    variants: body.variants?.map(({ variant, weight }) => ({ variant, weight })) ?? before.variants,
    control: body.control ?? before.control,
    metrics: body.metrics?.map(({ metric, kind }) => ({ metric, kind })) ?? before.metrics,
    primaryMetric: body.primaryMetric ?? before.primaryMetric,
    plannedSubjects: body.plannedSubjects ?? before.plannedSubjects,
    alpha: body.alpha ?? before.alpha,
  };
  const problems = planProblems(after);
  if (body.flagId !== undefined) {
    const flag = flagProblem(w, project.id, body.flagId);
    if (flag !== null) problems.push(flag);
  }
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  const beforeView = experimentView(before);
  if (JSON.stringify(experimentView(after)) === JSON.stringify(beforeView)) return beforeView;
  after.updatedAt = Math.max(now, before.updatedAt + 1);
  putExperiment(w, after);
  audit(w, actor, after, 'experiment.update', { experiment: { before: beforeView, after: experimentView(after) } }, now);
  return experimentView(after);
}

/** The variants a flag's answers name in `env`: a typed flag's own, a boolean flag's `on` and `off`. */
export function flagVariants(flag: Flag, env: string | null): string[] {
  const typed = effectiveState(flag, env).typed;
  return typed === undefined ? ['on', 'off'] : Object.keys(typed.variants);
}

/**
 * Starts an experiment (again, after a stop: its statistics, counted under its key, go on): its flag's
 * state in the environment takes the experiment's key, so its answers say inExperiment and its
 * exposures are counted. Refused where the flag cannot answer with every arm, already runs another
 * experiment there, or another flag carries the key there (its answers would count as this one's).
 */
export function experimentStart(w: StoreWriter, input: ExperimentKeyInput, now: number): ExperimentBody {
  const { project, actor, env } = actingIn(w, input, now);
  const experiment = requireExperiment(w, project.id, env, input.key);
  if (experimentStatus(experiment) === 'running')
    throw new FlagwireError('INVALID_REQUEST', `Experiment "${experiment.key}" is already running.`);
  const flag = getFlag(w, experiment.flagId);
  if (flag === undefined || flag.projectId !== project.id)
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Experiment "${experiment.key}" runs on flag ${experiment.flagId}, which no longer exists: change its flagId.`,
    );
  const answers = flagVariants(flag, env);
  const missing = experiment.variants.map((v) => v.variant).filter((v) => !answers.includes(v));
  if (missing.length > 0)
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Experiment "${experiment.key}" compares ${missing.map((v) => `"${v}"`).join(', ')}, which flag ${flag.name} never answers here (its variants: ${answers.join(', ')}).`,
    );
  const running = effectiveState(flag, env).experiment;
  if (running !== undefined && running !== experiment.key)
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Flag ${flag.name} already runs experiment "${running}" here: stop it (or end it on the flag) before starting "${experiment.key}".`,
    );
  const other = otherFlagWithKey(w, experiment);
  if (other !== undefined) throw keyOnSecondFlag(w, experiment, other, env);
  patchFlagAs(w, { projectId: project.id, flagId: flag.id, env, actor, patch: { experiment: experiment.key } }, now);
  const started: Experiment = {
    ...experiment,
    startedAt: now,
    stoppedAt: null,
    allocation: allocationOf(w, getFlag(w, flag.id)!, env),
    updatedAt: Math.max(now, experiment.updatedAt + 1),
  };
  putExperiment(w, started);
  audit(w, actor, started, 'experiment.start', { status: { before: experimentStatus(experiment), after: 'running' } }, now);
  return experimentView(started);
}

/** Stops a running experiment: its flag's state there drops the key (if it still carries it); its statistics are kept. */
export function experimentStop(w: StoreWriter, input: ExperimentKeyInput, now: number): ExperimentBody {
  const { project, actor, env } = actingIn(w, input, now);
  const experiment = requireExperiment(w, project.id, env, input.key);
  if (experimentStatus(experiment) !== 'running')
    throw new FlagwireError('INVALID_REQUEST', `Experiment "${experiment.key}" is not running.`);
  const flag = getFlag(w, experiment.flagId);
  if (flag !== undefined && flag.projectId === project.id && effectiveState(flag, env).experiment === experiment.key)
    patchFlagAs(w, { projectId: project.id, flagId: flag.id, env, actor, patch: { experiment: null } }, now);
  const stopped: Experiment = { ...experiment, stoppedAt: now, updatedAt: Math.max(now, experiment.updatedAt + 1) };
  putExperiment(w, stopped);
  audit(w, actor, stopped, 'experiment.stop', { status: { before: 'running', after: 'stopped' } }, now);
  return experimentView(stopped);
}

/** Deletes an experiment that is not running (its statistics stay counted under its key). */
export function experimentDelete(w: StoreWriter, input: ExperimentKeyInput, now: number): { key: string; deleted: true } {
  const { project, actor, env } = actingIn(w, input, now);
  const experiment = requireExperiment(w, project.id, env, input.key);
  if (experimentStatus(experiment) === 'running')
    throw new FlagwireError('INVALID_REQUEST', `Experiment "${experiment.key}" is running: stop it before deleting it.`);
  deleteExperiment(w, experiment);
  audit(w, actor, experiment, 'experiment.delete', { experiment: { before: experimentView(experiment), after: null } }, now);
  return { key: experiment.key, deleted: true };
}

/** A look at the results: the sample-ratio check's p-value, and the day's interval point where one is due (lookOf, results-view.ts). */
export interface ExperimentLook {
  projectId: string;
  environment: string | null;
  key: string;
  pValue: number;
  point: IntervalPoint | null;
}

/**
 * A look at the results: its sample-ratio p-value kept where it is the lowest yet, so every later look is
 * given the running minimum; its interval point appended where it is the first of its UTC day (the
 * oldest dropped past kMaxIntervalPoints). Not audited (a reading, not a change anyone made); an
 * experiment deleted meanwhile is left alone.
 */
export function experimentLook(w: StoreWriter, input: ExperimentLook, now: number): { lowestSrmPValue: number } {
  const experiment = getExperiment(w, input.projectId, input.environment, input.key);
  if (experiment === undefined) return { lowestSrmPValue: input.pValue };
  const lowestSrmPValue = Math.min(input.pValue, experiment.lowestSrmPValue);
  const point = input.point !== null && intervalPointDue(experiment, input.point.at) ? input.point : null;
  if (lowestSrmPValue === experiment.lowestSrmPValue && point === null) return { lowestSrmPValue };
  const looked: Experiment = { ...experiment, lowestSrmPValue, updatedAt: Math.max(now, experiment.updatedAt + 1) };
  if (point !== null) looked.intervals = [...(experiment.intervals ?? []), point].slice(-kMaxIntervalPoints);
  putExperiment(w, looked);
  return { lowestSrmPValue };
}

/** Whether a look at `at` adds the experiment's interval point: the first look of a UTC day while it runs. */
export function intervalPointDue(experiment: Experiment, at: number): boolean {
  if (experimentStatus(experiment) !== 'running') return false;
  const last = experiment.intervals?.at(-1);
  return last === undefined || utcDay(last.at) !== utcDay(at);
}

const kDayMs = 86_400_000;
const utcDay = (ms: number) => Math.floor(ms / kDayMs);

function audit(
  w: StoreWriter,
  actor: Actor,
  e: Experiment,
  action: ExperimentAuditAction,
  changes: AuditEntry['changes'],
  now: number,
): void {
  writeAudit(w, actor, { projectId: e.projectId, action, flagId: e.flagId, env: e.environment, changes }, now);
}

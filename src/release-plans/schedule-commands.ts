// Scheduled changes (issue 27, item 1): any change a flag accepts (a PATCH body: state, percentage,
// variants, rules; per environment on a group flag) applied at a given time, listed and cancellable until
// then. Each is a record (schedules.ts), so it survives restarts and kill -9; the scheduler
// (scheduler.ts) asks the writer to run the ones due, and scheduleRun applies one exactly once: it runs
// in a write transaction that first checks the change is still pending, and with PostgreSQL that
// transaction holds the database's revision lock with the node's copy brought up to date, so when every
// node's scheduler asks for the same change, one applies it and the others find it done.
import { FlagwireError } from '../errors.js';
import { type Actor, type Principal, planActor } from '../actor/audit-actor.js';
import { requireEnvironmentAllowed } from '../model/environments.js';
import { checkPatch, patchFlagAs } from '../flags/flag-commands.js';
import { randomId } from '../model/ids.js';
import { scheduleNotFound } from '../model/records/lookups.js';
import { requirePatchTarget } from '../flags/flag-lookups.js';
import { listedBytes } from '../model/listed-bytes.js';
import type { ScheduledChange } from './schedules.js';
import { compileValidator } from '../model/validation.js';
import type { StoreWriter } from '../store/interfaces.js';
import { auditPlan, existingPlanRequest, newPlanRequest, type PlanBody } from './plan-actors.js';
import { ScheduleCreate } from './schemas.js';
import { getSchedule, pendingSchedules, putSchedule } from './records.js';

/** Pending changes a project may hold: the scheduler's work and the store stay bounded whatever clients do. */
export const kMaxPendingSchedules = 1000;
/** Their size together, as JSON: each may carry a patch of up to a request body's 1 MiB. */
export const kMaxPendingScheduleBytes = 16 * 1024 * 1024;
/** How far ahead a change may be scheduled. */
export const kMaxScheduleAheadMs = 5 * 366 * 24 * 3600 * 1000;

const kCreateValidator = compileValidator(ScheduleCreate, { quoteKeys: false });

export interface ScheduleTarget {
  flagId: string;
  /** The `env` query parameter (or --env) as given. */
  env: string | null;
}

/**
 * A scheduled change: POST /api/v1/flags/{id}/schedules (a token, authorised again here and audited as
 * itself), the console's form (its user) and `flagwire flag schedule` (the operator, or the `--as` user),
 * who must be allowed to change flags. Checked as the PATCH it will be, then recorded and audited.
 */
export function scheduleCreate(w: StoreWriter, input: ScheduleTarget & PlanBody & { principal: Principal }, now: number): ScheduledChange {
  const request = newPlanRequest(w, input.principal, input.flagId, input, now);
  const { flagId, env } = input;
  return createSchedule(w, { flagId, env, projectId: request.project.id, actor: request.actor, body: request.body }, now);
}

function createSchedule(
  w: StoreWriter,
  input: ScheduleTarget & { projectId: string; actor: Actor; body: unknown },
  now: number,
): ScheduledChange {
  const { flag, project, env, problem } = requirePatchTarget(w, input.projectId, input.flagId, input.env, input.actor.environments);
  const problems = problem === null ? [] : [problem];
  const body = kCreateValidator.check(input.body) ? input.body : null;
  if (body === null) problems.push(...kCreateValidator.problems(input.body));
  else {
    if (body.at <= now) problems.push(`at must be in the future (now is ${now})`);
    if (body.at > now + kMaxScheduleAheadMs) problems.push('at must be at most five years ahead');
    const checked = checkPatch(w, project, flag, problem === null ? { env } : null, body.patch);
    problems.push(...checked.problems.map((p) => `patch: ${p}`));
    if (Object.keys(body.patch).length === 0) problems.push('patch has no fields: send at least one key PATCH accepts');
  }
  if (body === null || problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  const change: ScheduledChange = {
    id: `sch_${randomId(12)}`,
    projectId: project.id,
    flagId: flag.id,
    env,
    patch: body.patch,
    at: body.at,
    createdAt: now,
    createdBy: input.actor.id,
    createdByName: input.actor.name,
    status: 'pending',
    doneAt: null,
    outcome: null,
  };
  // From the index of pending changes alone: making one never reads the project's other changes.
  const pending = pendingSchedules(w, project.id);
  if (pending.count >= kMaxPendingSchedules)
    throw new FlagwireError(
      'INVALID_REQUEST',
      `this project already has ${kMaxPendingSchedules} pending scheduled changes; cancel some first`,
    );
  const bytes = listedBytes(change);
  if (pending.bytes + bytes > kMaxPendingScheduleBytes)
    throw new FlagwireError(
      'INVALID_REQUEST',
      `this project's pending scheduled changes would hold ${pending.bytes + bytes} bytes, more than ${kMaxPendingScheduleBytes}; cancel some first, or schedule smaller changes`,
    );
  putSchedule(w, change);
  auditPlan(
    w,
    input.actor,
    change,
    'schedule.create',
    { schedule: { before: null, after: { id: change.id, at: change.at, patch: change.patch } } },
    now,
  );
  return change;
}

/** Cancels a pending change; one already applied, failed or cancelled is a 400 saying which. */
export function scheduleCancel(w: StoreWriter, input: { scheduleId: string; principal: Principal }, now: number): ScheduledChange {
  const { plan: change, actor } = existingPlanRequest(w, input.principal, getSchedule(w, input.scheduleId), scheduleNotFound, now);
  requireEnvironmentAllowed(actor.environments, change.env);
  if (change.status !== 'pending') {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Scheduled change ${change.id} is ${change.status} (${change.outcome}); only a pending one can be cancelled.`,
    );
  }
  const next: ScheduledChange = { ...change, status: 'cancelled', doneAt: now, outcome: `cancelled by ${actor.name}` };
  putSchedule(w, next);
  auditPlan(w, actor, next, 'schedule.cancel', { schedule: { before: 'pending', after: 'cancelled' } }, now);
  return next;
}

/**
 * Applies a due change, once: null when it is not pending (another node's scheduler applied it, or it
 * was cancelled) or not yet due. The change goes through the flag's PATCH with its own actor
 * (`plan:<id>`), so it is checked, audited and served like any write; a change the flag no longer
 * accepts (the flag deleted, a variant gone) is recorded as failed, with why, and audited.
 */
export function scheduleRun(w: StoreWriter, input: { scheduleId: string; refused?: string }, now: number): ScheduledChange | null {
  const change = getSchedule(w, input.scheduleId);
  if (change === undefined || change.status !== 'pending' || change.at > now) return null;
  const actor = planActor(change.id, 'scheduled change');
  let next: ScheduledChange;
  try {
    // The approvals gate refused its change (a plan never approved for a guarded environment), or a write
    // check did (a running experiment's allocation): failed, with why.
    if (input.refused !== undefined) throw new FlagwireError('APPROVAL_REQUIRED', input.refused);
    const result = patchFlagAs(w, { projectId: change.projectId, flagId: change.flagId, env: change.env, actor, patch: change.patch }, now);
    next = { ...change, status: 'applied', doneAt: now, outcome: result.changed ? 'changed' : 'no change' };
  } catch (err) {
    // patchFlagAs checks everything before it writes: a refusal left nothing half-written.
    if (!(err instanceof FlagwireError)) throw err;
    next = { ...change, status: 'failed', doneAt: now, outcome: input.refused ?? `${err.title}: ${err.detail}` };
    auditPlan(w, actor, next, 'schedule.fail', { schedule: { before: 'pending', after: next.outcome } }, now);
  }
  putSchedule(w, next);
  return next;
}

// How scheduled changes and rollouts bear on an environment's state (src/store/interfaces.ts: EnvironmentBearing),
// for the approvals gate: a plan for a guarded environment is approved when it is made (docs/decisions.md:
// Approvals and release plans), so what it will do there is its view while it is to run. Ending one
// (cancelled, run, completed, rolled back) needs no approval; what it changes as it runs is judged then.
// What it will make evaluation read there (`reads`: the flag as each of its patches leaves it) is guarded
// from then on: an audience or a shared fragment it will use is held for approval as one in use is.
import { checkPatch } from '../flags/flag-commands.js';
import { effectiveState } from '../flags/records/flag-state.js';
import { applyFlagPatch } from '../flags/patch-rules.js';
import type { Flag } from '../model/flags.js';
import type { EnvironmentBearing, EnvRead, StoreReader } from '../store/interfaces.js';
import type { Page, PageRequest } from './list-pages.js';
import { kRolloutRecords, kScheduleRecords } from './records.js';
import { rollbackPatch, stepPatch } from './rollout-commands.js';
import type { RolloutPlan } from './rollouts.js';
import type { ScheduledChange } from './schedules.js';
import { getRollout, getSchedule, listRollouts, listSchedules } from './records.js';
import { getFlag } from '../flags/records/flag-store.js';
import { getProject } from '../model/records/project-records.js';

export const kScheduleEnvironmentState: EnvironmentBearing<ScheduledChange> = {
  kind: kScheduleRecords,
  projectOf: (schedule) => schedule.projectId,
  stored: (r, schedule) => getSchedule(r, schedule.id),
  view: (_r, schedule, env) =>
    schedule !== undefined && schedule.status === 'pending' && schedule.env === env
      ? { flagId: schedule.flagId, patch: schedule.patch, at: schedule.at }
      : null,
  isPlan: true,
  reads: (r, schedule, env) => (schedule.status === 'pending' && schedule.env === env ? plannedReads(r, schedule, [schedule.patch]) : []),
  list: (r, projectId) => everyPage((page) => listSchedules(r, projectId, { ...page, pendingOnly: true })),
};

export const kRolloutEnvironmentState: EnvironmentBearing<RolloutPlan> = {
  kind: kRolloutRecords,
  projectOf: (plan) => plan.projectId,
  stored: (r, plan) => getRollout(r, plan.id),
  // The plan as made: its steps and guard. Its progress (the step, the times, a pause) is not part of it.
  view: (_r, plan, env) =>
    plan !== undefined && isLive(plan) && plan.env === env ? { flagId: plan.flagId, steps: plan.steps, guard: plan.guard ?? null } : null,
  isPlan: true,
  // Approved later than it was made: its clock starts when it is applied, so no step falls due at once.
  onApply: (plan, now, delayMs) => ({
    ...plan,
    appliedAt: plan.appliedAt?.map((at) => (at === null ? null : at + delayMs)),
    nextAt: plan.nextAt === null ? null : plan.nextAt + delayMs,
    guardNextAt: plan.guardNextAt == null ? plan.guardNextAt : plan.guardNextAt + delayMs,
    updatedAt: Math.max(now, plan.updatedAt),
  }),
  // The steps still to come (a resume or a skip sets one again), and the rollback a guard may make.
  reads: (r, plan, env) =>
    isLive(plan) && plan.env === env
      ? plannedReads(
          r,
          plan,
          [...plan.steps.keys()]
            .filter((i) => i >= plan.current)
            .map((i) => stepPatch(plan, i))
            .concat(rollbackPatch(plan)),
        )
      : [],
  list: (r, projectId) => everyPage((page) => listRollouts(r, projectId, page)).filter(isLive),
};

function isLive(plan: RolloutPlan): boolean {
  return plan.status === 'running' || plan.status === 'paused';
}

/**
 * The flag's states in the plan's environment as each of `patches` leaves it, made one after another on
 * the flag as it is now. A patch the flag no longer accepts would fail when due: it reads nothing.
 */
function plannedReads(
  r: StoreReader,
  plan: { id: string; projectId: string; flagId: string; env: string | null },
  patches: unknown[],
): EnvRead[] {
  const project = getProject(r, plan.projectId);
  let flag: Flag | undefined = getFlag(r, plan.flagId);
  const reads: EnvRead[] = [];
  for (const value of patches) {
    if (project === undefined || flag === undefined) break;
    const { patch, problems } = checkPatch(r, project, flag, { env: plan.env }, value);
    if (patch === null || problems.length > 0) break;
    flag = applyFlagPatch(flag, plan.env, patch, 0).flag;
    reads.push({ flagId: flag.id, state: effectiveState(flag, plan.env), by: plan.id });
  }
  return reads;
}

/** Every item of a list read a page at a time. */
function everyPage<T>(read: (page: PageRequest) => Page<T>): T[] {
  const items: T[] = [];
  let page: PageRequest = { limit: 500, maxBytes: Number.POSITIVE_INFINITY, after: null };
  for (;;) {
    const { items: some, next } = read(page);
    items.push(...some);
    if (next === null) return items;
    page = { ...page, after: next };
  }
}

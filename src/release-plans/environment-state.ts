// How scheduled changes and rollouts bear on an environment's state (src/store/interfaces.ts: EnvironmentBearing),
// for the approvals gate: a plan for a guarded environment is approved when it is made (docs/decisions.md:
// Approvals and release plans), so what it will do there is its view while it is to run. Ending one
// (cancelled, run, completed, rolled back) needs no approval; what it changes as it runs is judged then.
import type { EnvironmentBearing } from '../store/interfaces.js';
import { kRolloutRecords, kScheduleRecords } from '../store/record-kinds.js';
import type { RolloutPlan } from './rollouts.js';
import type { ScheduledChange } from './schedules.js';

export const kScheduleEnvironmentState: EnvironmentBearing<ScheduledChange> = {
  kind: kScheduleRecords,
  projectOf: (schedule) => schedule.projectId,
  stored: (r, schedule) => r.getSchedule(schedule.id),
  view: (_r, schedule, env) =>
    schedule !== undefined && schedule.status === 'pending' && schedule.env === env
      ? { flagId: schedule.flagId, patch: schedule.patch, at: schedule.at }
      : null,
  isPlan: true,
};

export const kRolloutEnvironmentState: EnvironmentBearing<RolloutPlan> = {
  kind: kRolloutRecords,
  projectOf: (plan) => plan.projectId,
  stored: (r, plan) => r.getRollout(plan.id),
  // The plan as made: its steps and guard. Its progress (the step, the times, a pause) is not part of it.
  view: (_r, plan, env) =>
    plan !== undefined && (plan.status === 'running' || plan.status === 'paused') && plan.env === env
      ? { flagId: plan.flagId, steps: plan.steps, guard: plan.guard ?? null }
      : null,
  isPlan: true,
  // Approved later than it was made: its clock starts when it is applied, so no step falls due at once.
  onApply: (plan, now, delayMs) => ({
    ...plan,
    appliedAt: plan.appliedAt?.map((at) => (at === null ? null : at + delayMs)),
    nextAt: plan.nextAt === null ? null : plan.nextAt + delayMs,
    guardNextAt: plan.guardNextAt == null ? plan.guardNextAt : plan.guardNextAt + delayMs,
    updatedAt: Math.max(now, plan.updatedAt),
  }),
};

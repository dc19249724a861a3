// A renamed environment takes its release plans with it (docs/approvals.md: Release plans): a scheduled
// change still to run and a rollout running or paused in it are for the environment under its new name,
// as its flags' states and its approval rule are, so a plan approved under an environment's rule runs in
// that environment, whatever it is called when the plan falls due.
import type { StoreWriter } from '../store/interfaces.js';
import { kRolloutEnvironmentState, kScheduleEnvironmentState } from './environment-state.js';
import { putRollout, putSchedule } from './records.js';

export function renamePlansEnvironment(w: StoreWriter, projectId: string, from: string, to: string, now: number): void {
  for (const schedule of kScheduleEnvironmentState.list!(w, projectId)) {
    if (schedule.env === from) putSchedule(w, { ...schedule, env: to });
  }
  for (const plan of kRolloutEnvironmentState.list!(w, projectId)) {
    if (plan.env === from) putRollout(w, { ...plan, env: to, updatedAt: Math.max(now, plan.updatedAt) });
  }
}

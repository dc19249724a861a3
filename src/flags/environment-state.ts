// How a flag bears on an environment's state (src/store/interfaces.ts: EnvironmentBearing), for the approvals
// gate: what evaluation in the environment reads of it. A flag absent, or at an environment's defaults
// there (off, 0%, no audience, no cohorts, no typed variants, no experiment), reads as nothing: making a flag that
// starts off in a guarded environment needs no approval, turning it on there does. One at its defaults
// that a pending release plan or change request will turn on there is read as if it were on: what clients
// will evaluate it by (its name, its bucketing) is guarded from the plan's approval, or the request's
// asking, as an audience or a fragment it will use is, so renaming or deleting it is held, naming them.
// Its state there is what evaluation reads through it (`reads`): the audience and the shared fragments it uses.
import type { EnvironmentBearing } from '../store/interfaces.js';
import { kFlagRecords } from './records/flag-store.js';
import { effectiveState, kDefaultEnvState, type EffectiveState } from './records/flag-state.js';
import type { Flag } from '../model/flags.js';
import { getFlag, listFlags } from './records/flag-store.js';

export const kFlagEnvironmentState: EnvironmentBearing<Flag> = {
  kind: kFlagRecords,
  projectOf: (flag) => flag.projectId,
  stored: (r, flag) => getFlag(r, flag.id),
  view(_r, flag, env, reads) {
    // Archived, it is read by no evaluation: archiving one that serves is a change to the environment, as deleting it is.
    if (flag === undefined || flag.archivedAt !== undefined) return null;
    const state = effectiveState(flag, env);
    // Only a flag left at its defaults asks what plans and requests will set (not every flag's state now).
    if (atDefaults(state) && !reads('planned').some((read) => read.flagId === flag.id && read.state.enabled)) return null;
    // The name is what clients evaluate it by; the bucketing places every key.
    return { name: flag.name, bucketing: flag.bucketing ?? null, state };
  },
  onApply: (flag, now) => ({ ...flag, updatedAt: Math.max(now, flag.updatedAt) }),
  // What evaluation reads through it there now (its audience, the fragments its rule names).
  reads: (_r, flag, env) => [{ flagId: flag.id, state: effectiveState(flag, env), by: null }],
  list: (r, projectId) => listFlags(r, projectId),
};

function atDefaults(state: EffectiveState): boolean {
  return (
    state.enabled === kDefaultEnvState.enabled &&
    state.trafficPercentage === kDefaultEnvState.trafficPercentage &&
    state.audienceId === null &&
    state.cohorts.length === 0 &&
    state.typed === undefined &&
    state.experiment === undefined &&
    state.unleash === undefined
  );
}

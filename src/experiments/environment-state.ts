// How an experiment bears on an environment's state (src/store/interfaces.ts: EnvironmentBearing), for
// the approvals gate: where it runs there, or a pending change request will start it (its flag's state
// there will carry its key), its plan and that it runs. So a start or stop in a guarded environment is
// held as a change request with its flag's change, as one change, and a change to the plan a pending
// start will run is held too, naming that request; a draft or stopped experiment nothing will start is
// free to change, as a flag left at its defaults is.
import type { EnvironmentBearing } from '../store/interfaces.js';
import { type Experiment, experimentStatus, getExperiment, kExperimentRecords, planOf } from './records.js';

export const kExperimentEnvironmentState: EnvironmentBearing<Experiment> = {
  kind: kExperimentRecords,
  projectOf: (e) => e.projectId,
  stored: (r, e) => getExperiment(r, e.projectId, e.environment, e.key),
  view(_r, e, env, reads) {
    if (e === undefined || e.environment !== env) return null;
    const running = experimentStatus(e) === 'running';
    if (!running && !reads('planned').some((read) => read.flagId === e.flagId && read.state.experiment === e.key)) return null;
    return {
      running,
      flagId: e.flagId,
      ...planOf(e),
    };
  },
  // Started or stopped by an approval: when it was applied, which is when its flag's state changed.
  onApply(e, now) {
    const status = experimentStatus(e);
    return {
      ...e,
      startedAt: status === 'running' ? now : e.startedAt,
      stoppedAt: status === 'stopped' ? now : e.stoppedAt,
      updatedAt: Math.max(now, e.updatedAt),
    };
  },
};

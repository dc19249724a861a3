// Experiments as a capability (issue 59; src/capability/capability.ts): per project environment and key,
// the flag an experiment runs on, the arms, control, metrics and plan; started and stopped through the
// flag state's `experiment` key; its results computed here from the events capability's statistics by
// the engine beside it (results.ts and its modules; docs/statistics.md). Management API, CLI and the
// web console's experiments pages. A start or stop in a guarded environment is a change request
// (environment-state.ts); a running experiment's allocation does not change, whatever would change it
// (allocation.ts, a write check), nor does its key move off its flag or onto another (running-keys.ts).
import { defineCapability } from '../capability/capability.js';
import { checkRunningAllocations } from './allocation.js';
import { kExperimentAuditActions } from './audit-actions.js';
import { kExperimentEnvironmentState } from './environment-state.js';
import { kExperimentCommands } from './command-table.js';
import { kExperimentRecords } from './records.js';
import { checkRunningKeys } from './running-keys.js';
import { ExperimentBody, ExperimentCreate, ExperimentDeleted, ExperimentList, ExperimentResultsBody, ExperimentUpdate } from './schemas.js';

export const kExperiments = defineCapability({
  name: 'experiments',
  databases: ['experiments'],
  records: [kExperimentRecords],
  commands: kExperimentCommands,
  routes: async () => (await import('./routes.js')).kExperimentApiRoutes,
  schemas: {
    ExperimentCreate,
    ExperimentUpdate,
    Experiment: ExperimentBody,
    ExperimentList,
    ExperimentDeleted,
    ExperimentResults: ExperimentResultsBody,
  },
  consoleRoutes: async () => (await import('./console-routes.js')).kExperimentRoutes,
  cli: async () => (await import('./cli.js')).kExperimentCli,
  auditActions: kExperimentAuditActions,
  webhookEvent: 'flag',
  environmentState: [kExperimentEnvironmentState],
  writeChecks: [checkRunningAllocations, checkRunningKeys],
});

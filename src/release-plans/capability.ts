// Release plans as a capability (src/capability/capability.ts): scheduled changes and progressive
// rollouts (docs/release-plans.md), made and acted on by a token, a user or the operator (one command
// per verb, given the Principal), and run by the node's scheduler through scheduleRun, rolloutAdvance
// and rolloutGuardRecord.
import { kRolloutRecords, kScheduleRecords } from './records.js';
import { defineCapability } from '../capability/capability.js';
import { kReleasePlanCommands } from './command-table.js';
import { kReleasePlanAuditActions } from './audit-actions.js';
import { RolloutBody, RolloutCreate, RolloutList, ScheduleCreate, ScheduledChangeBody, ScheduleList } from './schemas.js';
import { kRolloutEnvironmentState, kScheduleEnvironmentState } from './environment-state.js';

export const kReleasePlans = defineCapability({
  name: 'release-plans',
  databases: ['schedules', 'rollouts'],
  records: [kScheduleRecords, kRolloutRecords],
  commands: kReleasePlanCommands,
  routes: async () => (await import('./routes.js')).kReleasePlanApiRoutes,
  schemas: {
    ScheduleCreate,
    ScheduledChange: ScheduledChangeBody,
    ScheduleList,
    RolloutCreate,
    Rollout: RolloutBody,
    RolloutList,
  },
  consoleRoutes: async () => (await import('./console-routes.js')).kReleasePlanConsoleRoutes,
  cli: async () => (await import('./cli.js')).kReleasePlanCli,
  auditActions: kReleasePlanAuditActions,
  webhookEvent: 'plan',
  environmentState: [kScheduleEnvironmentState, kRolloutEnvironmentState],
  // Loaded when a node starts it (as mail's mailer is: src/mail/capability.ts says why). Before the node
  // listens: the changes and rollout steps that fell due while it was down run first.
  background: [
    {
      name: 'scheduler',
      phase: 'before listening',
      runsOnRelay: false,
      start: async (node) => (await import('./background.js')).startScheduler(node),
    },
  ],
});

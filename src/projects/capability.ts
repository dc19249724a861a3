// Projects, their environments and audiences as a capability (src/capability/capability.ts).
import { kAudienceRecords, kProjectRecords } from '../model/records/project-records.js';
import { defineCapability } from '../capability/capability.js';
import { kProjectAuditActions } from './audit-actions.js';
import { kProjectCommands } from './command-table.js';
import { kAudienceEnvironmentState } from './environment-state.js';

export const kProjects = defineCapability({
  name: 'projects',
  databases: ['projects', 'audiences'],
  records: [kProjectRecords, kAudienceRecords],
  commands: kProjectCommands,
  consoleRoutes: async () => (await import('./console-routes.js')).kProjectConsoleRoutes,
  cli: async () => (await import('./cli.js')).kProjectCli,
  auditActions: kProjectAuditActions,
  // What evaluation answers from, as a flag's changes are: a webhook hears of them as `flag` events.
  webhookEvent: 'flag',
  environmentState: [kAudienceEnvironmentState],
});

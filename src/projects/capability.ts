// Projects, their environments and audiences as a capability (src/capability/capability.ts).
import { kProjectRecords, kAudienceRecords } from '../store/record-kinds.js';
import { defineCapability } from '../capability/capability.js';
import { kProjectCli } from './cli.js';
import { kProjectConsoleRoutes } from './console-routes.js';
import { kProjectAuditActions, kProjectCommands } from './project-commands.js';
import { kAudienceEnvironmentState } from './environment-state.js';

export const kProjects = defineCapability({
  name: 'projects',
  databases: ['projects', 'audiences', 'projectIndex'],
  records: [kProjectRecords, kAudienceRecords],
  commands: kProjectCommands,
  consoleRoutes: kProjectConsoleRoutes,
  cli: kProjectCli,
  auditActions: kProjectAuditActions,
  // What evaluation answers from, as a flag's changes are: a webhook hears of them as `flag` events.
  webhookEvent: 'flag',
  environmentState: [kAudienceEnvironmentState],
});

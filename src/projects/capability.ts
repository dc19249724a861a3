// Projects, their environments and audiences as a capability (src/capability/capability.ts).
import { defineCapability } from '../capability/capability.js';
import { kProjectCli } from './cli.js';
import { kProjectConsoleRoutes } from './console-routes.js';
import { kProjectAuditActions, kProjectCommands } from './project-commands.js';

export const kProjects = defineCapability({
  name: 'projects',
  commands: kProjectCommands,
  consoleRoutes: kProjectConsoleRoutes,
  cli: kProjectCli,
  auditActions: kProjectAuditActions,
  // What evaluation answers from, as a flag's changes are: a webhook hears of them as `flag` events.
  webhookEvent: 'flag',
});

// Projects, their environments and audiences as a capability (src/capability/capability.ts).
import { defineCapability } from '../capability/capability.js';
import { kProjectCli } from './cli.js';
import { kProjectAuditActions, kProjectCommands } from './project-commands.js';

export const kProjects = defineCapability({
  name: 'projects',
  commands: kProjectCommands,
  cli: kProjectCli,
  auditActions: kProjectAuditActions,
});

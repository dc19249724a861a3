// Flags as a capability (src/capability/capability.ts): a project's flags, created, changed and deleted,
// imported from a flagd file, and the evaluations the workers counted.
import { defineCapability } from '../capability/capability.js';
import { commandTable } from '../writer/command.js';
import { flagCohorts, flagCreate, flagDelete, flagDescribe, flagPatch, flagRename, flagTags } from './flag-commands.js';
import { kFlagCli } from './cli.js';
import { kFlagConsoleRoutes } from './console-routes.js';
import { flagsImport } from './import-commands.js';
import { kFlagApiRoutes } from './routes.js';
import { recordUsage } from './usage-commands.js';

export const kFlagCommands = commandTable({
  flagCreate,
  flagPatch,
  flagRename,
  flagDescribe,
  flagTags,
  flagCohorts,
  flagDelete,
  flagsImport,
  recordUsage,
});

/** Every audit action a flag command writes. */
export const kFlagAuditActions = [
  'flag.create',
  'flag.patch',
  'flag.rename',
  'flag.describe',
  'flag.tags',
  'flag.cohorts',
  'flag.delete',
] as const;
export type FlagAuditAction = (typeof kFlagAuditActions)[number];

export const kFlags = defineCapability({
  name: 'flags',
  commands: kFlagCommands,
  routes: kFlagApiRoutes,
  consoleRoutes: kFlagConsoleRoutes,
  cli: kFlagCli,
  auditActions: kFlagAuditActions,
  webhookEvent: 'flag',
});

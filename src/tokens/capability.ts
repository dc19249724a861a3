// API tokens and their recorded activity as a capability (src/capability/capability.ts).
import { kActivityRecords, kTokenRecords } from '../model/records/token-records.js';
import { defineCapability } from '../capability/capability.js';
import { TokenDescription } from './representation.js';
import { kTokenAuditActions } from './audit-actions.js';
import { kTokenCommands } from './command-table.js';

export const kTokens = defineCapability({
  name: 'tokens',
  databases: ['tokens', 'activity'],
  records: [kTokenRecords, kActivityRecords],
  commands: kTokenCommands,
  routes: async () => (await import('./routes.js')).kTokenApiRoutes,
  schemas: { TokenDescription },
  auditActions: kTokenAuditActions,
  cli: async () => (await import('./cli.js')).kTokenCli,
  consoleRoutes: async () => (await import('./console-routes.js')).kTokenConsoleRoutes,
  webhookEvent: 'token',
});

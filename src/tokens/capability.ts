// API tokens and their recorded activity as a capability (src/capability/capability.ts).
import { kTokenRecords, kActivityRecords } from '../store/record-kinds.js';
import { defineCapability } from '../capability/capability.js';
import { TokenDescription } from './representation.js';
import { kTokenAuditActions, kTokenCommands } from './token-commands.js';

export const kTokens = defineCapability({
  name: 'tokens',
  databases: ['tokens', 'tokenHashes', 'activity'],
  records: [kTokenRecords, kActivityRecords],
  commands: kTokenCommands,
  routes: async () => (await import('./routes.js')).kTokenApiRoutes,
  schemas: { TokenDescription },
  auditActions: kTokenAuditActions,
  cli: async () => (await import('./cli.js')).kTokenCli,
  consoleRoutes: async () => (await import('./console-routes.js')).kTokenConsoleRoutes,
  webhookEvent: 'token',
});

// API tokens and their recorded activity as a capability (src/capability/capability.ts).
import { kTokenRecords, kActivityRecords } from '../store/record-kinds.js';
import { defineCapability } from '../capability/capability.js';
import { kTokenCli } from './cli.js';
import { kTokenConsoleRoutes } from './console-routes.js';
import { kTokenApiRoutes } from './routes.js';
import { TokenDescription } from './representation.js';
import { kTokenAuditActions, kTokenCommands } from './token-commands.js';

export const kTokens = defineCapability({
  name: 'tokens',
  databases: ['tokens', 'tokenHashes', 'activity'],
  records: [kTokenRecords, kActivityRecords],
  commands: kTokenCommands,
  routes: kTokenApiRoutes,
  schemas: { TokenDescription },
  auditActions: kTokenAuditActions,
  cli: kTokenCli,
  consoleRoutes: kTokenConsoleRoutes,
  webhookEvent: 'token',
});

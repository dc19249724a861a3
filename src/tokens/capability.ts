// API tokens and their recorded activity as a capability (src/capability/capability.ts).
import { defineCapability } from '../capability/capability.js';
import { kTokenCli } from './cli.js';
import { kTokenAuditActions, kTokenCommands } from './token-commands.js';

export const kTokens = defineCapability({
  name: 'tokens',
  commands: kTokenCommands,
  auditActions: kTokenAuditActions,
  webhookEvent: 'token',
  cli: kTokenCli,
});

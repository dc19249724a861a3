// The webhooks capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes, command line and background work call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import {
  webhookClaim,
  webhookClaimMany,
  webhookCreate,
  webhookDelete,
  webhookRedeliver,
  webhookResult,
  webhookResultMany,
} from './webhook-commands.js';

export const kWebhookCommands = commandTable({
  webhookCreate,
  webhookDelete,
  webhookRedeliver,
  webhookClaim,
  webhookClaimMany,
  webhookResult,
  webhookResultMany,
});

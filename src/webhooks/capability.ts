// Webhooks as a capability (src/capability/capability.ts): made, deleted and redelivered, and the
// outbox's claims and results (docs/webhooks.md).
import { defineCapability } from '../capability/capability.js';
import { commandTable } from '../writer/command.js';
import {
  apiWebhookCreate,
  apiWebhookDelete,
  apiWebhookRedeliver,
  consoleWebhookCreate,
  consoleWebhookDelete,
  consoleWebhookRedeliver,
  webhookClaim,
  webhookClaimMany,
  webhookResult,
  webhookResultMany,
} from './webhook-commands.js';

export const kWebhookCommands = commandTable({
  apiWebhookCreate,
  consoleWebhookCreate,
  apiWebhookDelete,
  consoleWebhookDelete,
  apiWebhookRedeliver,
  consoleWebhookRedeliver,
  webhookClaim,
  webhookClaimMany,
  webhookResult,
  webhookResultMany,
});

/** Every audit action a webhook command writes. */
export const kWebhookAuditActions = ['webhook.create', 'webhook.delete', 'webhook.redeliver'] as const;
export type WebhookAuditAction = (typeof kWebhookAuditActions)[number];

export const kWebhooks = defineCapability({ name: 'webhooks', commands: kWebhookCommands, auditActions: kWebhookAuditActions });

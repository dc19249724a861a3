// Webhooks as a capability (src/capability/capability.ts): made, deleted and redelivered, the outbox's
// claims and results, the web console's webhooks page's routes and the command-line commands
// (docs/webhooks.md).
import { defineCapability } from '../capability/capability.js';
import { commandTable } from '../writer/command.js';
import { kWebhookCli } from './cli.js';
import { kWebhookRoutes } from './console-routes.js';
import { kWebhookApiRoutes } from './routes.js';
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

/** Every audit action a webhook command writes. */
export const kWebhookAuditActions = ['webhook.create', 'webhook.delete', 'webhook.redeliver'] as const;
export type WebhookAuditAction = (typeof kWebhookAuditActions)[number];

export const kWebhooks = defineCapability({
  name: 'webhooks',
  commands: kWebhookCommands,
  routes: kWebhookApiRoutes,
  consoleRoutes: kWebhookRoutes,
  cli: kWebhookCli,
  auditActions: kWebhookAuditActions,
  // Loaded when a node starts it (as mail's mailer is: src/mail/capability.ts says why).
  background: [{ name: 'deliverer', phase: 'outbox', start: async (node) => (await import('./background.js')).startDeliverer(node) }],
});

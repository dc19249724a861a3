// Webhooks as a capability (src/capability/capability.ts): made, deleted and redelivered, the outbox's
// claims and results, the web console's webhooks page's routes and the command-line commands
// (docs/webhooks.md).
import { kDeliveryRecords, kPayloadRecords, kWebhookRecords } from './records.js';
import { defineCapability } from '../capability/capability.js';
import { kWebhookCommands } from './command-table.js';
import { kWebhookAuditActions } from './audit-actions.js';
import { DeliveryBody, DeliveryList, WebhookCreate, WebhookCreated, WebhookDeleted, WebhookList } from './schemas.js';

export const kWebhooks = defineCapability({
  name: 'webhooks',
  databases: ['webhooks', 'deliveries', 'payloads'],
  records: [kWebhookRecords, kDeliveryRecords, kPayloadRecords],
  commands: kWebhookCommands,
  routes: async () => (await import('./routes.js')).kWebhookApiRoutes,
  schemas: { WebhookCreate, WebhookCreated, WebhookList, WebhookDeleted, Delivery: DeliveryBody, DeliveryList },
  consoleRoutes: async () => (await import('./console-routes.js')).kWebhookRoutes,
  cli: async () => (await import('./cli.js')).kWebhookCli,
  auditActions: kWebhookAuditActions,
  // Loaded when a node starts it (as mail's mailer is: src/mail/capability.ts says why).
  background: [
    {
      name: 'deliverer',
      phase: 'outbox',
      runsOnRelay: false,
      start: async (node) => (await import('./background.js')).startDeliverer(node),
    },
  ],
});

// The webhooks capability's audit actions: a closed list, declared once (src/capability/capability.ts).
/** Every audit action a webhook command writes. */
export const kWebhookAuditActions = ['webhook.create', 'webhook.delete', 'webhook.redeliver'] as const;
export type WebhookAuditAction = (typeof kWebhookAuditActions)[number];

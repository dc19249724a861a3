// The events a webhook may subscribe to: each capability declares which one its audit actions are sent
// as (Capability.webhookEvent), and the webhooks capability offers every one of them.

/** What a webhook may subscribe to, each the audit actions of the capabilities that declare it (src/capabilities.ts: webhookEventOf). */
export const kWebhookEvents = ['flag', 'token', 'plan', 'request'] as const;
export type WebhookEvent = (typeof kWebhookEvents)[number];

// Webhooks and their deliveries as people read them (`flagwire webhook list`, `webhook deliveries`, ...).
import type { WebhookDelivery } from './webhook.js';
import type { WebhookBody, WebhookCreated } from './schemas.js';

type Table = (h: readonly string[], r: readonly (readonly string[])[]) => string;
const time = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());

export function renderWebhooks(hooks: readonly WebhookBody[], table: Table): string {
  if (hooks.length === 0) return 'No webhooks.';
  return table(
    ['ID', 'URL', 'EVENTS', 'FORMAT', 'CREATED'],
    hooks.map((h) => [h.id, h.url, h.events.join(','), h.format, time(h.createdAt)]),
  );
}

export function renderCreatedWebhook(hook: WebhookCreated, table: Table): string {
  return `${renderWebhooks([hook], table)}\nSigning secret (shown only now; receivers verify webhook-signature with it):\n${hook.secret}`;
}

export function renderDeliveries(
  deliveries: readonly Pick<
    WebhookDelivery,
    'id' | 'event' | 'status' | 'attempts' | 'lastStatus' | 'lastError' | 'lastLatencyMs' | 'nextAttemptAt' | 'createdAt'
  >[],
  table: Table,
): string {
  if (deliveries.length === 0) return 'No deliveries.';
  return table(
    ['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST ANSWER', 'LATENCY', 'NEXT TRY', 'CREATED'],
    deliveries.map((d) => [
      d.id,
      d.event,
      d.status,
      String(d.attempts),
      d.lastStatus === null ? (d.lastError ?? '-') : String(d.lastStatus),
      d.lastLatencyMs === null ? '-' : `${Math.round(d.lastLatencyMs)} ms`,
      time(d.nextAttemptAt),
      time(d.createdAt),
    ]),
  );
}

// The shapes webhooks take and answer with, as TypeBox values: the single source of their types and of
// the OpenAPI document's components.
import { type Static, Type } from '../typebox.js';
import { kWebhookEvents } from '../capability/webhook-events.js';
import type { Webhook, WebhookDelivery } from './webhook.js';

const kEvent = Type.Union(
  kWebhookEvents.map((e) => Type.Literal(e)),
  { 'x-error': `must be one of ${kWebhookEvents.join(', ')}` },
);
const kFormat = Type.Union([Type.Literal('standard'), Type.Literal('slack')], { 'x-error': 'must be "standard" or "slack"' });

/** The body of POST /api/v1/webhooks. */
export const WebhookCreate = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'Where deliveries are POSTed: http:// or https://',
      'x-error': 'must be an http:// or https:// URL of at most 2048 characters',
    }),
    events: Type.Optional(
      Type.Array(kEvent, {
        minItems: 1,
        maxItems: kWebhookEvents.length,
        description:
          'flag (flags, environments, audiences), token (made, rotated, revoked), plan (scheduled changes, rollout steps and breaches); default all',
        'x-error': `must be a non-empty array of ${kWebhookEvents.join(', ')}`,
      }),
    ),
    format: Type.Optional(kFormat),
  },
  { additionalProperties: false },
);
export type WebhookCreate = Static<typeof WebhookCreate>;

export const WebhookBody = Type.Object({
  id: Type.String({ description: 'whk_…' }),
  url: Type.String(),
  events: Type.Array(kEvent),
  format: kFormat,
  createdAt: Type.Integer(),
  createdBy: Type.String(),
  createdByName: Type.String(),
});
export type WebhookBody = Static<typeof WebhookBody>;

export const WebhookCreated = Type.Composite([
  WebhookBody,
  Type.Object({
    secret: Type.String({ description: "The signing secret (whsec_…), Standard Webhooks' form: shown only now" }),
  }),
]);
export type WebhookCreated = Static<typeof WebhookCreated>;

export const WebhookList = Type.Object({ webhooks: Type.Array(WebhookBody, { description: "The project's webhooks, oldest first" }) });

export const WebhookDeleted = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });

export const DeliveryBody = Type.Object({
  id: Type.String({ description: 'msg_…: the webhook-id header, the same on every attempt' }),
  webhookId: Type.String(),
  event: Type.String({ description: 'The audit action it tells of, e.g. flag.patch' }),
  auditSeq: Type.Integer(),
  createdAt: Type.Integer(),
  queuedAt: Type.Integer({ description: 'When it was last queued (made or redelivered)' }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  nextAttemptAt: Type.Union([Type.Integer(), Type.Null()], { description: 'When it is tried next; null once delivered or given up' }),
  lastStatus: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's last status code; null: no answer" }),
  lastError: Type.Union([Type.String(), Type.Null()]),
  lastLatencyMs: Type.Union([Type.Integer(), Type.Null()]),
  lastAttemptAt: Type.Union([Type.Integer(), Type.Null()]),
  doneAt: Type.Union([Type.Integer(), Type.Null()]),
});
export type DeliveryBody = Static<typeof DeliveryBody>;

export const DeliveryList = Type.Object({
  deliveries: Type.Array(DeliveryBody, { description: "The webhook's deliveries, newest first" }),
});

/** A webhook as every answer but its creation's shows it: without its secret, or its project (the token's). */
export function webhookView(hook: Webhook): WebhookBody {
  const { secret: _secret, projectId: _project, ...view } = hook;
  return view;
}

/** A delivery as the log shows it: without the claim or the project (its body is its change's, not shown). */
export function deliveryView(delivery: WebhookDelivery): DeliveryBody {
  const { claimedBy: _by, projectId: _project, ...view } = delivery;
  return { ...view, lastLatencyMs: view.lastLatencyMs === null ? null : Math.round(view.lastLatencyMs) };
}

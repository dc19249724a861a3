// Webhooks (issue 28): a project's subscriptions to its changes, and the outbox of their deliveries.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.
import type { WebhookEvent } from '../capability/webhook-events.js';

export interface Webhook {
  /** `whk_…`. */
  id: string;
  projectId: string;
  url: string;
  /** Standard Webhooks' secret: `whsec_` and the base64 of the signing key's bytes. Shown once, when made. */
  secret: string;
  events: WebhookEvent[];
  /** `standard`: the change as JSON, signed; `slack`: a Slack-compatible `{text}` message, signed the same way. */
  format: 'standard' | 'slack';
  createdAt: number;
  createdBy: string;
  createdByName: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One change sent to one webhook: written in the transaction of the change, then sent until it succeeds or is given up. */
export interface WebhookDelivery {
  /** `msg_…`: the webhook-id header, the same on every attempt (a receiver dedupes by it). */
  id: string;
  webhookId: string;
  projectId: string;
  /** The audit action it tells of (`flag.patch`, `token.revoke`, `rollout.guard-breach`, …). */
  event: string;
  /** The change it tells of: its body is that change's DeliveryPayload, in the webhook's format. */
  auditSeq: number;
  createdAt: number;
  /** When it was last queued (made, or asked to be redelivered): the give-up age counts from here. */
  queuedAt: number;
  status: DeliveryStatus;
  attempts: number;
  /** When it may be tried next (Unix ms; while claimed, when the claim runs out); null once delivered or given up. */
  nextAttemptAt: number | null;
  /**
   * The node that claimed it last (null: none since its last outcome). A claim moves nextAttemptAt to
   * the claim's end: no node takes it before then, and any node may after (its sender died).
   */
  claimedBy: string | null;
  /** The last attempt: the receiver's status code (null: no answer), why it failed, how long it took. */
  lastStatus: number | null;
  lastError: string | null;
  lastLatencyMs: number | null;
  lastAttemptAt: number | null;
  /** When it was delivered or given up; null while pending. */
  doneAt: number | null;
}

/**
 * What a change's deliveries send, stored once however many webhooks it goes to (issue 42: a copy per
 * delivery grew the data file by the flag's size times the webhooks, at every change). Written in the
 * transaction of the change; kept while a delivery that refers to it is in a webhook's log (redeliver
 * sends the same body), and dropped with the last one, or when the project's outbox passes its bound
 * (webhook-commands.ts: kMaxPendingDeliveries, kMaxOutboxBytes).
 */
export interface DeliveryPayload {
  /** The change's audit entry's seq (unique across projects). */
  auditSeq: number;
  projectId: string;
  /** The body in each format the change's webhooks use, as sent: what the signature covers. */
  bodies: Partial<Record<Webhook['format'], string>>;
  /** The bodies' UTF-8 bytes: what the project's outbox bound counts. */
  bytes: number;
}

/** A project's outbox, as its bound counts it: its pending deliveries, and the bytes of the payloads it keeps. */
export interface OutboxUsage {
  pending: number;
  bytes: number;
}

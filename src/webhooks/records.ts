// Webhooks' records as the store keeps them (keyedRecords: each kind in a database of its own, found
// through the lookups it declares), and every read and write of them: a project's webhooks, each
// webhook's delivery log and its deliveries due, a change's payload and the deliveries that send it,
// and a project's outbox as its bound counts it (tallies the store keeps with every write).
import { byCreation } from '../model/by-creation.js';
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { keyedRecords } from '../store/record-kinds.js';
import type { DeliveryPayload, OutboxUsage, Webhook, WebhookDelivery } from './webhook.js';

export const kWebhookRecords = keyedRecords<Webhook>()({
  name: 'webhook',
  database: 'webhooks',
  relayed: false,
  key: (hook) => hook.id,
  // One deleted, after its delivery log (each delivery a change of its own).
  deletedAs: 'webhookDeleted',
  indexes: { project: { keysOf: (hook) => [hook.projectId] } },
});

export const kDeliveryRecords = keyedRecords<WebhookDelivery>()({
  name: 'delivery',
  database: 'deliveries',
  relayed: false,
  key: (delivery) => delivery.id,
  deletedAs: 'deliveryDeleted',
  // Its webhook's deletion deletes its log (webhookDelete deletes them first, dropping the payloads they leave).
  hangsOff: { kind: 'webhook', via: 'history', onDelete: 'cascade' },
  indexes: {
    /**
     * A webhook's delivery log, by when each was made; tallied, so that the writer finds where a full log
     * ends without stepping through it (deliveriesPast).
     */
    history: { keysOf: (delivery) => [[delivery.webhookId, delivery.createdAt]], tallied: true },
    /**
     * Pending deliveries, per webhook by their next try: one webhook's backlog never hides another's due
     * deliveries from the deliverer.
     */
    due: {
      keysOf: (delivery) =>
        delivery.status === 'pending' && delivery.nextAttemptAt !== null ? [[delivery.webhookId, delivery.nextAttemptAt]] : [],
    },
    /** The deliveries that send a payload. */
    payload: { keysOf: (delivery) => [[delivery.auditSeq]] },
    /** A project's pending deliveries, counted for its outbox's bound. */
    pending: { keysOf: (delivery) => (delivery.status === 'pending' ? [delivery.projectId] : []), tallied: true },
  },
});

/** A change's delivery bodies, stored once for all its webhooks; dropped with its last delivery or by the bound. */
export const kPayloadRecords = keyedRecords<DeliveryPayload>()({
  name: 'deliveryPayload',
  database: 'payloads',
  relayed: false,
  key: (payload) => String(payload.auditSeq),
  deletedAs: 'deliveryPayloadDeleted',
  indexes: {
    /** A project's payloads, oldest change first (what its outbox bound drops first), with their bytes summed. */
    project: { keysOf: (payload) => [[payload.projectId, payload.auditSeq]], weigh: (payload) => payload.bytes, tallied: true },
  },
});

export function getWebhook(r: StoreReader, id: string): Webhook | undefined {
  return r.getKeyed(kWebhookRecords, id);
}

/** A project's webhooks, oldest first. */
export function listWebhooks(r: StoreReader, projectId: string): Webhook[] {
  return r.listKeyedBy(kWebhookRecords, 'project', projectId).sort(byCreation);
}

export function putWebhook(w: StoreWriter, hook: Webhook): void {
  w.putKeyed(kWebhookRecords, hook);
}

/** The webhook alone: its deliveries are deleted one by one first (each a change of its own). */
export function deleteWebhook(w: StoreWriter, hook: Webhook): void {
  w.deleteKeyed(kWebhookRecords, hook);
}

export function getDelivery(r: StoreReader, id: string): WebhookDelivery | undefined {
  return r.getKeyed(kDeliveryRecords, id);
}

/** A webhook's deliveries, newest first, `limit` of them after skipping `offset`. */
export function listDeliveries(r: StoreReader, webhookId: string, limit: number, offset = 0): WebhookDelivery[] {
  return r.listKeyedBy(kDeliveryRecords, 'history', webhookId, { reverse: true, limit, offset });
}

/**
 * The newest `limit` of a webhook's deliveries past its newest `kept`: what listDeliveries(r, webhookId,
 * limit, kept) answers, in either order. A range's offset is stepped over entry by entry, so this reads
 * from the end nearer to them: asked on every change the webhook is sent, from the newest end it stepped
 * over the whole kept log each time, about a third of the writer's CPU in a run of changes with a full log.
 */
export function deliveriesPast(r: StoreReader, webhookId: string, kept: number, limit: number): WebhookDelivery[] {
  const past = r.tallyOf(kDeliveryRecords, 'history', webhookId).count - kept;
  if (past <= 0) return [];
  const fromOldest = Math.max(0, past - limit);
  if (fromOldest >= kept) return listDeliveries(r, webhookId, limit, kept);
  return r.listKeyedBy(kDeliveryRecords, 'history', webhookId, { offset: fromOldest, limit: Math.min(limit, past) });
}

/** What scanDue finds. */
export interface DueScan {
  /** The webhooks with a delivery due (at most the limit asked). */
  webhookIds: string[];
  /** Whether any delivery is pending at all, due now or later. */
  pending: boolean;
}

/** The webhooks with a delivery due at `now` (at most `limit`), and whether any is pending. */
export function scanDue(r: StoreReader, now: number, limit: number): DueScan {
  const webhookIds: string[] = [];
  let pending = false;
  // A skip scan: each webhook's first entry is its earliest try; then on past all of its entries.
  let past: string[] | undefined;
  while (webhookIds.length < limit) {
    const [first] = r.lookupEntries(kDeliveryRecords, 'due', [], { past, limit: 1 });
    if (first === undefined) break;
    pending = true;
    const [webhookId, dueAt] = first.at as [string, number, string];
    if (dueAt <= now) webhookIds.push(webhookId);
    past = [webhookId];
  }
  return { webhookIds, pending };
}

/** A webhook's deliveries due at `now`, earliest first. */
export function listDueDeliveries(r: StoreReader, webhookId: string, now: number, limit: number): WebhookDelivery[] {
  return r.listKeyedBy(kDeliveryRecords, 'due', webhookId, { through: [now], limit });
}

export function putDelivery(w: StoreWriter, delivery: WebhookDelivery): void {
  w.putKeyed(kDeliveryRecords, delivery);
}

export function deleteDelivery(w: StoreWriter, delivery: WebhookDelivery): void {
  w.deleteKeyed(kDeliveryRecords, delivery);
}

/** A change's delivery payload. */
export function getPayload(r: StoreReader, auditSeq: number): DeliveryPayload | undefined {
  return r.getKeyed(kPayloadRecords, String(auditSeq));
}

/**
 * Whether the change's payload is still kept, from its lookup: a payload holds its bodies (up to a flag's
 * size in each format), which this does not read.
 */
export function payloadKept(r: StoreReader, projectId: string, auditSeq: number): boolean {
  return r.lookupEntries(kPayloadRecords, 'project', [projectId, auditSeq], { limit: 1 }).length > 0;
}

/** Whether a delivery still sends the change's payload, from its lookup, reading no delivery. */
export function payloadHasDeliveries(r: StoreReader, auditSeq: number): boolean {
  return r.lookupEntries(kDeliveryRecords, 'payload', [auditSeq], { limit: 1 }).length > 0;
}

/** The deliveries that send a change's payload (pending or done). */
export function listPayloadDeliveries(r: StoreReader, auditSeq: number): WebhookDelivery[] {
  return r.listKeyedBy(kDeliveryRecords, 'payload', [auditSeq]);
}

/** The project's payloads' changes, oldest first (at most `limit`). */
export function listPayloadSeqs(r: StoreReader, projectId: string, limit: number): number[] {
  return r.lookupEntries(kPayloadRecords, 'project', projectId, { limit }).map((entry) => entry.at[0] as number);
}

/** A payload is written once and deleted once (its deliveries are deleted or given up first). */
export function putPayload(w: StoreWriter, payload: DeliveryPayload): void {
  w.putKeyed(kPayloadRecords, payload);
}

export function deletePayload(w: StoreWriter, payload: DeliveryPayload): void {
  w.deleteKeyed(kPayloadRecords, payload);
}

/** The project's outbox as its bound counts it: its pending deliveries, and its payloads' bytes. */
export function getOutboxUsage(r: StoreReader, projectId: string): OutboxUsage {
  return {
    pending: r.tallyOf(kDeliveryRecords, 'pending', projectId).count,
    bytes: r.tallyOf(kPayloadRecords, 'project', projectId).weight,
  };
}

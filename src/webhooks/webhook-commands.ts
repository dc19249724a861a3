// Webhooks as writer commands: made, deleted and redelivered by a token, a person or the operator (one
// command each, given who asks as a Principal), and the outbox. Every audited
// change is offered to the project's webhooks in the transaction that makes it (queueWebhookDeliveries,
// called by runCommand), so a delivery exists exactly when its change does, once per change and webhook,
// on one node or on PostgreSQL. The deliverer (deliverer.ts) claims a delivery, sends it and records the
// outcome, each a transaction that checks the delivery's state first: one node sends it at a time.
import { FlagwireError } from '../errors.js';
import { type Actor, actorInProject, type Principal, writeAudit } from '../actor/audit-actor.js';
import type { AuditEntry } from '../model/audit.js';
import { requireEveryEnvironment } from '../model/environments.js';
import { randomId } from '../model/ids.js';
import { deliveryNotFound, webhookNotFound } from '../model/records/lookups.js';
import type { Project } from '../model/projects.js';
import { parseJsonObject, type ReceivedBody } from '../model/request-body.js';
import { compileValidator } from '../model/validation.js';
import { kWebhookEvents, type WebhookEvent } from '../capability/webhook-events.js';
import type { DeliveryPayload, Webhook, WebhookDelivery } from './webhook.js';
import { afterFailure, claimLease, type RetrySchedule } from '../outbox/outbox.js';
import type { StoreWriter } from '../store/interfaces.js';
import type { WebhookAuditAction } from './audit-actions.js';
import { deliveryBody } from './payload.js';
import { WebhookCreate, type WebhookCreated, webhookView } from './schemas.js';
import { newWebhookSecret } from './signature.js';
import { urlSyntaxProblem } from './url-safety.js';
import {
  deleteDelivery,
  deletePayload,
  deleteWebhook,
  getDelivery,
  getOutboxUsage,
  getPayload,
  getWebhook,
  deliveriesPast,
  listDeliveries,
  listPayloadDeliveries,
  listPayloadSeqs,
  payloadKept,
  payloadHasDeliveries,
  listWebhooks,
  putDelivery,
  putPayload,
  putWebhook,
} from './records.js';
import { getFlag, getUsage } from '../flags/records/flag-store.js';
import { getProject } from '../model/records/project-records.js';

const kCreateValidator = compileValidator(WebhookCreate, { quoteKeys: false });
/** Webhooks a project may have: each change is queued once per webhook, in the change's transaction. */
export const kMaxWebhooks = 20;
/** Deliveries kept per webhook in its log; older ones that are done are dropped as new ones come. */
export const kKeptDeliveries = 1000;
/**
 * A project's outbox bound (issue 42): at most this many deliveries pending, and this many bytes of the
 * change bodies it keeps (pending or in a log). Past either, the project's oldest changes are dropped
 * from the outbox (dropOldestChanges) until the new one fits.
 */
export const kMaxPendingDeliveries = 10_000;
export const kMaxOutboxBytes = 64 * 1024 * 1024;
/** The reason a delivery given up by the bound shows in the log. */
export const kDroppedError = `dropped: the project's webhook outbox was full (${kMaxPendingDeliveries} pending deliveries or ${kMaxOutboxBytes / 1024 / 1024} MiB of bodies)`;
/**
 * A failed delivery's retries, by the outbox rule (src/outbox/outbox.ts): 5 s, doubled each time up to an
 * hour, each drawn between half and all of it; given up once its next try would come `giveUpMs`
 * (FLAGWIRE_WEBHOOK_GIVE_UP_HOURS) after it was queued (docs/webhooks.md).
 */
function webhookSchedule(giveUpMs: number): RetrySchedule {
  return { firstDelayMs: 5000, maxDelayMs: 3_600_000, jitter: true, giveUp: { afterQueuedMs: giveUpMs } };
}
/** What the environment limit's refusal calls a webhook (requireEveryEnvironment): the API's precheck and the writer say the same. */
export const kWebhookWhat = 'A webhook';

/**
 * Who changes a project's webhooks, resolved once here: a token acts in its own project (another
 * project's webhook or delivery is then not found); a person or the operator in the project `projectOf`
 * names (the project of the webhook or delivery named, or its 404), the person needing a flag editor's role.
 */
function actingOn(w: StoreWriter, principal: Principal, projectOf: () => string, now: number): { project: Project; actor: Actor } {
  return actorInProject(w, principal, projectOf, 'editFlags', now);
}

function projectOfWebhook(w: StoreWriter, webhookId: string): string {
  const hook = getWebhook(w, webhookId);
  if (hook === undefined) throw webhookNotFound();
  return hook.projectId;
}

function projectOfDelivery(w: StoreWriter, deliveryId: string): string {
  const delivery = getDelivery(w, deliveryId);
  if (delivery === undefined) throw deliveryNotFound();
  return delivery.projectId;
}

export interface WebhookCreateInput {
  principal: Principal;
  /** The project, for a person or the operator (a token makes webhooks in its own project). */
  projectId: string;
  /** The body, as the Management API received it; the console and the command line send theirs as JSON (jsonBody). */
  received: ReceivedBody;
}

export function webhookCreate(w: StoreWriter, input: WebhookCreateInput, now: number): WebhookCreated {
  const { project, actor } = actingOn(w, input.principal, () => input.projectId, now);
  const parsed = parseJsonObject(input.received, 'create');
  if (!parsed.ok) throw new FlagwireError('INVALID_REQUEST', parsed.problem);
  requireEveryEnvironment(actor.environments, kWebhookWhat);
  const body = parsed.value;
  if (!kCreateValidator.check(body)) throw new FlagwireError('INVALID_REQUEST', kCreateValidator.problems(body).join('; '));
  const problems: string[] = [];
  const urlProblem = urlSyntaxProblem(body.url);
  if (urlProblem !== null) problems.push(`url: ${urlProblem}`);
  if (listWebhooks(w, project.id).length >= kMaxWebhooks) problems.push(`a project has at most ${kMaxWebhooks} webhooks: delete one first`);
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  const hook: Webhook = {
    id: `whk_${randomId(12)}`,
    projectId: project.id,
    url: body.url,
    secret: newWebhookSecret(),
    events: body.events === undefined ? [...kWebhookEvents] : [...new Set(body.events)],
    format: body.format ?? 'standard',
    createdAt: now,
    createdBy: actor.id,
    createdByName: actor.name,
  };
  putWebhook(w, hook);
  audit(w, actor, hook, 'webhook.create', { webhook: { before: null, after: webhookView(hook) } }, now);
  return { ...webhookView(hook), secret: hook.secret };
}

export function webhookDelete(w: StoreWriter, input: { principal: Principal; webhookId: string }, now: number) {
  const { project, actor } = actingOn(w, input.principal, () => projectOfWebhook(w, input.webhookId), now);
  requireEveryEnvironment(actor.environments, kWebhookWhat);
  const hook = requireWebhook(w, project.id, input.webhookId);
  for (;;) {
    const batch = listDeliveries(w, hook.id, 500);
    if (batch.length === 0) break;
    for (const delivery of batch) dropDelivery(w, delivery);
  }
  deleteWebhook(w, hook);
  audit(w, actor, hook, 'webhook.delete', { webhook: { before: webhookView(hook), after: null } }, now);
  return { id: hook.id, deleted: true as const };
}

/** A delivery sent again (delivered, given up or pending): the same message, webhook-id and body, tried now. */
export function webhookRedeliver(w: StoreWriter, input: { principal: Principal; deliveryId: string }, now: number): WebhookDelivery {
  const { project, actor } = actingOn(w, input.principal, () => projectOfDelivery(w, input.deliveryId), now);
  requireEveryEnvironment(actor.environments, kWebhookWhat);
  const delivery = getDelivery(w, input.deliveryId);
  if (delivery === undefined || delivery.projectId !== project.id) throw deliveryNotFound();
  const hook = requireWebhook(w, project.id, delivery.webhookId);
  if (!payloadKept(w, delivery.projectId, delivery.auditSeq))
    throw new FlagwireError('INVALID_REQUEST', `This delivery's body is no longer kept (${kDroppedError}): it cannot be sent again.`);
  if (delivery.status !== 'pending' && getOutboxUsage(w, hook.projectId).pending >= kMaxPendingDeliveries)
    throw new FlagwireError(
      'INVALID_REQUEST',
      `The project has ${kMaxPendingDeliveries} webhook deliveries pending, its most: redeliver once some are delivered or given up.`,
    );
  const again: WebhookDelivery = {
    ...delivery,
    status: 'pending',
    queuedAt: now,
    nextAttemptAt: now,
    claimedBy: null,
    doneAt: null,
  };
  putDelivery(w, again);
  audit(w, actor, hook, 'webhook.redeliver', { delivery: { before: delivery.status, after: delivery.id } }, now);
  return again;
}

/**
 * The deliveries of the changes just made (`entries`, audited in this transaction), one per webhook that
 * subscribes; the change's body stored once for them all, in each format they use (DeliveryPayload).
 * `eventOf` is the event each action is sent as, derived from the capabilities' declarations
 * (src/capabilities.ts: webhookEventOf), which list this capability too and so are passed in.
 */
export function queueWebhookDeliveries(
  w: StoreWriter,
  entries: readonly AuditEntry[],
  eventOf: (action: string) => WebhookEvent | null,
  now: number,
): void {
  for (const entry of entries) {
    const event = eventOf(entry.action);
    if (event === null) continue;
    const hooks = listWebhooks(w, entry.projectId).filter((h) => h.events.includes(event));
    if (hooks.length === 0) continue;
    const project = getProject(w, entry.projectId)!;
    const flag = entry.flagId === null ? undefined : getFlag(w, entry.flagId);
    const usage = flag === undefined ? undefined : getUsage(w, flag.id);
    const bodies: DeliveryPayload['bodies'] = {};
    for (const hook of hooks) bodies[hook.format] ??= deliveryBody(hook, entry, flag, usage, project);
    const bytes = Object.values(bodies).reduce((sum, body) => sum + Buffer.byteLength(body), 0);
    dropOldestChanges(w, entry.projectId, hooks.length, bytes, now);
    putPayload(w, { auditSeq: entry.seq, projectId: entry.projectId, bodies, bytes });
    for (const hook of hooks) {
      putDelivery(w, {
        id: `msg_${randomId(20)}`,
        webhookId: hook.id,
        projectId: hook.projectId,
        event: entry.action,
        auditSeq: entry.seq,
        createdAt: now,
        queuedAt: now,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: now,
        claimedBy: null,
        lastStatus: null,
        lastError: null,
        lastLatencyMs: null,
        lastAttemptAt: null,
        doneAt: null,
      });
      // The log stays bounded: what is past the newest kKeptDeliveries and done is dropped.
      for (const old of deliveriesPast(w, hook.id, kKeptDeliveries, 10)) if (old.status !== 'pending') dropDelivery(w, old);
    }
  }
}

/**
 * Makes room in the project's outbox for `count` more pending deliveries and `bytes` more of bodies: while
 * either bound would be passed, its oldest change is dropped: its body deleted, its deliveries still
 * pending given up (kDroppedError; the log keeps them and every done one, none can be redelivered). The
 * newest changes are what a receiver that comes back needs most (each tells the flag as it is then), and
 * a change is always queued: one alone never passes the bounds (a flag is far smaller than they are).
 */
function dropOldestChanges(w: StoreWriter, projectId: string, count: number, bytes: number, now: number): void {
  const fits = () => {
    const usage = getOutboxUsage(w, projectId);
    return usage.pending + count <= kMaxPendingDeliveries && usage.bytes + bytes <= kMaxOutboxBytes;
  };
  while (!fits()) {
    const [oldest] = listPayloadSeqs(w, projectId, 1);
    if (oldest === undefined) return;
    for (const delivery of listPayloadDeliveries(w, oldest)) {
      if (delivery.status !== 'pending') continue;
      const done = { claimedBy: null, nextAttemptAt: null, doneAt: now };
      putDelivery(w, { ...delivery, ...done, status: 'failed', lastError: kDroppedError });
    }
    deletePayload(w, getPayload(w, oldest)!);
  }
}

/** A delivery deleted from its log, and its change's body with it when no other delivery sends that. */
function dropDelivery(w: StoreWriter, delivery: WebhookDelivery): void {
  deleteDelivery(w, delivery);
  // The payload (every body of the change, up to a flag's size in each format) is read only to delete it
  // with its last delivery: a webhook's delete drops up to kKeptDeliveries of them, and each change past
  // that bound drops one per webhook, all in the writer.
  if (payloadHasDeliveries(w, delivery.auditSeq)) return;
  const payload = getPayload(w, delivery.auditSeq);
  if (payload !== undefined) deletePayload(w, payload);
}

/**
 * The deliverer of `nodeId` takes a due delivery for `claimMs` (longer than an attempt may take): null when
 * it is not due, done, or another node holds it. The delivery and its webhook are what it sends.
 */
export function webhookClaim(
  w: StoreWriter,
  input: { deliveryId: string; nodeId: string; claimMs: number },
  now: number,
): ClaimedDelivery | null {
  const delivery = getDelivery(w, input.deliveryId);
  if (delivery === undefined || delivery.status !== 'pending') return null;
  // Its next try moves to the claim's end: out of every node's due window until then, and due again
  // then if the node that holds it died (webhookResult sets the next try it really has).
  const claimed = claimLease(delivery, input, now);
  if (claimed === null) return null;
  const webhook = getWebhook(w, delivery.webhookId);
  if (webhook === undefined) return null;
  // A kept payload has a body in the format of each webhook its deliveries go to (queueWebhookDeliveries;
  // schema 9's migration; a webhook's format never changes), so its lookup says enough, and the writer
  // reads no body: the deliverer reads it as it sends.
  if (!payloadKept(w, delivery.projectId, delivery.auditSeq)) {
    // Written by a Flagwire that kept a body per delivery and lost in the move (a PostgreSQL node's
    // records): nothing to send, so it is given up, saying why.
    const lost = { claimedBy: null, nextAttemptAt: null, doneAt: now, lastError: 'its body was not kept' };
    putDelivery(w, { ...delivery, ...lost, status: 'failed' });
    return null;
  }
  putDelivery(w, claimed);
  return { delivery: claimed, webhook };
}

/**
 * A claimed delivery and its webhook. Not its body: the deliverer reads that from the store when it
 * sends (a batch's bodies at once would be 64 times a flag, for each webhook with a batch under way).
 */
export interface ClaimedDelivery {
  delivery: WebhookDelivery;
  webhook: Webhook;
}

/** Several claims in one transaction: the deliverer takes a webhook's due deliveries together. */
export function webhookClaimMany(
  w: StoreWriter,
  input: { deliveryIds: string[]; nodeId: string; claimMs: number },
  now: number,
): ClaimedDelivery[] {
  return input.deliveryIds.flatMap(
    (deliveryId) => webhookClaim(w, { deliveryId, nodeId: input.nodeId, claimMs: input.claimMs }, now) ?? [],
  );
}

export interface AttemptOutcome {
  /** The receiver's status code; null when there was no answer. */
  status: number | null;
  error: string | null;
  latencyMs: number;
}

/**
 * An attempt's outcome recorded: a 2xx is delivered; otherwise it is tried again after a backoff, or
 * given up once it has been queued for `giveUpMs`. Null when the delivery is gone or no longer pending.
 */
export function webhookResult(
  w: StoreWriter,
  input: { deliveryId: string; outcome: AttemptOutcome; giveUpMs: number },
  now: number,
): WebhookDelivery | null {
  const delivery = getDelivery(w, input.deliveryId);
  if (delivery === undefined || delivery.status !== 'pending') return null;
  const { status, error, latencyMs } = input.outcome;
  const attempts = delivery.attempts + 1;
  const ok = status !== null && status >= 200 && status < 300;
  const tried = { ...delivery, attempts, lastStatus: status, lastError: ok ? null : error, lastLatencyMs: latencyMs, lastAttemptAt: now };
  const free = { claimedBy: null };
  let next: WebhookDelivery;
  if (ok) next = { ...tried, ...free, status: 'delivered', nextAttemptAt: null, doneAt: now };
  else {
    const { retryAt, givenUp } = afterFailure(webhookSchedule(input.giveUpMs), { attempts, queuedAt: delivery.queuedAt }, now);
    next = givenUp
      ? { ...tried, ...free, status: 'failed', nextAttemptAt: null, doneAt: now }
      : { ...tried, ...free, nextAttemptAt: retryAt };
  }
  putDelivery(w, next);
  return next;
}

/** Several outcomes in one transaction (a webhook's deliveries sent together). */
export function webhookResultMany(
  w: StoreWriter,
  input: { results: { deliveryId: string; outcome: AttemptOutcome }[]; giveUpMs: number },
  now: number,
): (WebhookDelivery | null)[] {
  return input.results.map(({ deliveryId, outcome }) => webhookResult(w, { deliveryId, outcome, giveUpMs: input.giveUpMs }, now));
}

function requireWebhook(w: StoreWriter, projectId: string, webhookId: string): Webhook {
  const hook = getWebhook(w, webhookId);
  if (hook === undefined || hook.projectId !== projectId) throw webhookNotFound();
  return hook;
}

function audit(w: StoreWriter, actor: Actor, hook: Webhook, action: WebhookAuditAction, changes: AuditEntry['changes'], now: number): void {
  writeAudit(w, actor, { projectId: hook.projectId, action, changes }, now);
}

// Sends the webhook outbox, on every node, beside the request path (as the mailer does): a slow, hanging
// or failing receiver never delays a write, and never another receiver. Every poll reads the deliveries
// due; each is claimed through the writer (one node sends it at a time: the claim is a transaction that
// checks no other node holds it), sent with its Standard Webhooks signature, and its outcome recorded.
// A webhook's due deliveries go in batches of at most kBatch, one batch at a time per webhook: claimed in
// one transaction, sent kSendsPerWebhook at a time, their outcomes recorded in one transaction. The due
// deliveries are read per webhook (the store's index is), so one webhook's backlog never hides another's,
// and a batch that ends starts the next at once while a backlog is left (not at the next poll): a webhook
// keeps up with the write rate.
//
// Send places (issue 42): at most kSends sends run at once on a node, at most kSendsPerProject of them for
// one project, handed out in turn between the projects that wait (send-places.ts): a project's hanging
// receivers hold at most a quarter of the node's places, never the places another project's deliveries
// need, and a waiting project's next send goes before a project that already holds places sends again. A
// receiver that keeps timing out is given less time on each try (attemptTimeoutMs), so its sends hold
// their places briefly.
//
// At least once: a node killed mid-send leaves its claim, which runs out (claimMs), and another node
// sends the delivery again, with the same webhook-id; a receiver that dedupes by it sees it once.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Webhook, WebhookDelivery } from './webhook.js';
import { claimMsFor, newSenderId } from '../outbox/outbox.js';
import type { SnapshotReader } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';
import { SendPlaces } from './send-places.js';
import { signedHeaders } from './signature.js';
import type { Destination, UrlGuard } from './url-safety.js';
import type { AttemptOutcome, ClaimedDelivery } from './webhook-commands.js';
import { SentBodies } from './sent-bodies.js';
import { listDueDeliveries, scanDue } from './records.js';

const kBatch = 64;
export const kSendsPerWebhook = 4;
export const kSendsPerProject = 16;
export const kSends = 64;
/** The shortest time a receiver that keeps timing out is given (unless the configured timeout is shorter). */
const kShortestTimeoutMs = 1000;
const kRememberedTimeouts = 10_000;
/** The receiver's answer is read this far, then dropped: only its status counts. */
const kMaxAnswerBytes = 64 * 1024;
/** A send's body dropped since its claim (its webhook deleted, or its change by the outbox bound): nothing sent. */
const kBodyGone = 'not sent: its body was dropped';
/** What `attempt` reports for an attempt cut off at its timeout (then said with the time it had). */
const kTimedOut = 'timed out';
/** Webhooks with due deliveries read per poll. */
const kWebhooksPerPoll = 1000;

/**
 * What the deliverer asks the writer (src/webhooks/webhook-commands.ts: webhookClaimMany,
 * webhookResultMany): a webhook's due deliveries are claimed in one transaction and their outcomes
 * recorded in one, so delivering costs the writer two transactions per batch, not per change.
 */
export interface DeliveryWork {
  claim(deliveryIds: string[], nodeId: string, claimMs: number): Promise<ClaimedDelivery[]>;
  result(results: { deliveryId: string; outcome: AttemptOutcome }[]): Promise<(WebhookDelivery | null)[]>;
}

export interface DelivererOptions {
  /** How often it reads the outbox while any delivery is pending. */
  pollMs: number;
  /**
   * With none pending: how long it waits for a commit before it reads the outbox anyway. A command-line
   * command writes the data file from a process of its own, whose commits this node does not count.
   */
  idleMs: number;
  /** An attempt's whole time: connect, send, the answer's status. */
  timeoutMs: number;
}

const kDefaults: DelivererOptions = { pollMs: 100, idleMs: 1000, timeoutMs: 10_000 };

/**
 * The commits this node's copy takes, counted by the writer thread: a change that queues a delivery is
 * one, whether this node's writer made it or its follower applied another node's.
 */
export type Commits = Pick<WriterClient, 'commitCount' | 'commitAfter'>;

export class Deliverer {
  /** This process: the name its claims carry. */
  readonly nodeId = newSenderId();
  private readonly options: DelivererOptions;
  /** The polling loop (run), from start() on. */
  private loop: Promise<void> | null = null;
  /** Cuts the loop's wait short: set while it waits. */
  private wake: (() => void) | null = null;
  private stopped = false;
  /** Deliveries being claimed, sent or recorded by this node, and their batch's end. */
  private readonly sending = new Map<string, Promise<void>>();
  /** Webhooks with a batch under way on this node. */
  private readonly busy = new Set<string>();
  private readonly places = new SendPlaces(kSends, kSendsPerProject);
  private readonly bodies: SentBodies;
  /**
   * Webhooks whose last attempts on this node had no answer in time: how many in a row (kept per node:
   * what a node saw of a receiver is its own; an answer of any kind clears it).
   */
  private readonly timeouts = new Map<string, number>();
  /** Set when a poll left due deliveries for want of a slot: the next send that ends polls again. */
  private backlog = false;
  private pollQueued = false;

  constructor(
    private readonly store: SnapshotReader,
    private readonly work: DeliveryWork,
    private readonly guard: UrlGuard,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly commits: Commits,
    options: Partial<DelivererOptions> = {},
  ) {
    this.options = { ...kDefaults, ...options };
    this.bodies = new SentBodies(store);
  }

  /** Polls from now on (once: a second start changes nothing). */
  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Reads the outbox every pollMs while a delivery is pending. With none pending, an idle node would wake
   * ten times a second for nothing (most of its CPU: bench/RESULTS.md, An idle node's CPU): it waits
   * for the next commit instead, the change that queues a delivery, or idleMs at most.
   */
  private async run(): Promise<void> {
    while (!this.stopped) {
      // Counted before the read: a commit made while it reads ends the wait at once.
      const seen = this.commits.commitCount();
      let pending = true;
      try {
        pending = this.poll();
      } catch (err) {
        this.log.error({ err }, 'webhook delivery: a poll failed; the next one tries again');
      }
      if (this.stopped) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        if (pending) setTimeout(resolve, this.options.pollMs).unref();
        else void this.commits.commitAfter(seen, this.options.idleMs).then(resolve);
      });
      this.wake = null;
    }
  }

  /** Starts no new send; waits for those running at most `waitMs` (each is cut off by its timeout anyway). */
  async stop(waitMs = 1000): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.sending.values()), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  }

  /** Begins the due deliveries' sends; whether any delivery is pending or being sent. */
  private poll(): boolean {
    this.backlog = false;
    if (this.stopped) return false;
    this.store.resetReadTxn();
    const now = this.clock.now();
    const scan = scanDue(this.store, now, kWebhooksPerPoll);
    for (const webhookId of scan.webhookIds) {
      if (this.busy.has(webhookId)) {
        this.backlog = true;
        continue;
      }
      // A claimed delivery is out of the due window until its claim runs out (the claim writes so).
      const due = listDueDeliveries(this.store, webhookId, now, kBatch + 1).filter((d) => !this.sending.has(d.id));
      if (due.length > kBatch) this.backlog = true;
      if (due.length > 0) this.begin(webhookId, due.slice(0, kBatch));
    }
    return scan.pending || this.sending.size > 0;
  }

  /** Another poll as soon as this turn ends, once however many sends end in it. */
  private pollSoon(): void {
    if (this.pollQueued || this.stopped) return;
    this.pollQueued = true;
    setImmediate(() => {
      this.pollQueued = false;
      this.poll();
    });
  }

  /** One webhook's batch: claimed together, sent kSendsPerWebhook at a time, recorded together. */
  private begin(webhookId: string, batch: WebhookDelivery[]): void {
    this.busy.add(webhookId);
    const done = this.send(batch.map((d) => d.id))
      .catch((err: unknown) => this.log.warn({ err, webhookId }, 'webhook delivery: could not be recorded; it is sent again'))
      .finally(() => {
        this.busy.delete(webhookId);
        for (const delivery of batch) this.sending.delete(delivery.id);
        if (this.backlog) this.pollSoon();
      });
    for (const delivery of batch) this.sending.set(delivery.id, done);
  }

  private async send(deliveryIds: string[]): Promise<void> {
    // The claim outlasts an attempt with room to record it: no other node sends these meanwhile.
    const claimed = await this.work.claim(deliveryIds, this.nodeId, claimMsFor(this.options.timeoutMs));
    if (claimed.length === 0 || this.stopped) return;
    const outcomes: { deliveryId: string; outcome: AttemptOutcome }[] = new Array(claimed.length);
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < claimed.length; i = next++) {
        const { delivery, webhook } = claimed[i]!;
        const destination = await this.guard.destination(webhook.url);
        const outcome: AttemptOutcome =
          'refused' in destination
            ? { status: null, error: destination.refused, latencyMs: 0 }
            : await this.places.run(webhook.projectId, async () => {
                // Taken in its place: a node holds the bodies of the sends it runs, no more.
                const body = this.bodies.take(delivery.auditSeq, webhook.format);
                if (body === null) return { status: null, error: kBodyGone, latencyMs: 0 };
                try {
                  return await this.attempt(webhook, delivery, body, destination);
                } finally {
                  this.bodies.release(delivery.auditSeq, webhook.format);
                }
              });
        outcomes[i] = { deliveryId: delivery.id, outcome };
      }
    };
    await Promise.all(Array.from({ length: Math.min(kSendsPerWebhook, claimed.length) }, lane));
    const recorded = await this.work.result(outcomes);
    outcomes.forEach(({ deliveryId, outcome }, i) => {
      const fields = { deliveryId, webhookId: claimed[i]!.webhook.id, event: claimed[i]!.delivery.event, ...outcome };
      if (recorded[i]?.status === 'failed') this.log.warn(fields, 'webhook delivery given up');
      else if (outcome.error !== null) this.log.info(fields, 'webhook delivery failed; will retry');
    });
  }

  private attempt(
    webhook: Webhook,
    delivery: WebhookDelivery,
    body: Buffer,
    destination: Exclude<Destination, { refused: string }>,
  ): Promise<AttemptOutcome> {
    const started = performance.now();
    const timeoutMs = attemptTimeoutMs(this.options.timeoutMs, this.timeouts.get(webhook.id) ?? 0);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Flagwire-Webhooks',
      ...signedHeaders(webhook.secret, delivery.id, Math.floor(this.clock.now() / 1000), body),
    };
    // The connection goes to the address the guard checked, whatever the name resolves to now.
    const lookup: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all)
        (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [destination]);
      else callback(null, destination.address, destination.family);
    };
    const url = new URL(webhook.url);
    return new Promise<AttemptOutcome>((resolve) => {
      const done = (status: number | null, error: string | null) => {
        if (status === null && error === kTimedOut) {
          // Bounded: a node that saw this many receivers time out forgets them all (each starts again at the whole timeout).
          if (this.timeouts.size >= kRememberedTimeouts) this.timeouts.clear();
          this.timeouts.set(webhook.id, (this.timeouts.get(webhook.id) ?? 0) + 1);
        } else this.timeouts.delete(webhook.id);
        resolve({ status, error: error === kTimedOut ? `no answer in ${timeoutMs} ms` : error, latencyMs: performance.now() - started });
      };
      const request = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'POST',
        headers,
        lookup,
        signal: AbortSignal.timeout(timeoutMs),
      });
      request.on('response', (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > kMaxAnswerBytes) response.destroy();
        });
        const status = response.statusCode ?? null;
        const error = status !== null && status >= 200 && status < 300 ? null : `answered ${status}`;
        response.on('end', () => done(status, error));
        response.on('close', () => done(status, error));
        response.on('error', () => done(status, error));
      });
      request.on('error', (err) => {
        const timedOut = err.name === 'AbortError' || err.name === 'TimeoutError';
        done(null, timedOut ? kTimedOut : ((err as NodeJS.ErrnoException).code ?? err.message));
      });
      request.end(body);
    });
  }
}

/**
 * The time an attempt has, after `timedOut` attempts in a row to the same webhook had no answer in
 * theirs: the configured timeout, halved after each, down to kShortestTimeoutMs (10 s, 5 s, 2.5 s,
 * 1.25 s, then 1 s by default). A receiver that answers anything gets the whole timeout again.
 */
export function attemptTimeoutMs(timeoutMs: number, timedOut: number): number {
  return Math.max(Math.min(timeoutMs, kShortestTimeoutMs), Math.round(timeoutMs / 2 ** Math.min(timedOut, 30)));
}

// Sends the webhook outbox, on every node, beside the request path (as the mailer does): a slow, hanging
// or failing receiver never delays a write, and never another receiver. Every poll reads the deliveries
// due; each is claimed through the writer (one node sends it at a time: the claim is a transaction that
// checks no other node holds it), sent with its Standard Webhooks signature, and its outcome recorded.
// At most kConcurrency sends run at once, at most kPerWebhook of them to one webhook, each cut off after
// timeoutMs: a receiver that hangs holds two slots for a while, never the deliverer.
//
// At least once: a node killed mid-send leaves its claim, which runs out (claimMs), and another node
// sends the delivery again, with the same webhook-id; a receiver that dedupes by it sees it once.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { randomId } from '../model/ids.js';
import type { Webhook, WebhookDelivery } from '../model/webhooks.js';
import type { SnapshotReader } from '../store/interfaces.js';
import { signedHeaders } from './signature.js';
import type { Destination, UrlGuard } from './url-safety.js';
import type { AttemptOutcome } from './webhook-commands.js';

const kConcurrency = 16;
const kPerWebhook = 2;
/** The receiver's answer is read this far, then dropped: only its status counts. */
const kMaxAnswerBytes = 64 * 1024;
/** Due deliveries read per poll. */
const kBatch = 100;

/** What the deliverer asks the writer (src/webhooks/webhook-commands.ts: webhookClaim, webhookResult). */
export interface DeliveryWork {
  claim(deliveryId: string, nodeId: string, claimMs: number): Promise<{ delivery: WebhookDelivery; webhook: Webhook } | null>;
  result(deliveryId: string, outcome: AttemptOutcome): Promise<WebhookDelivery | null>;
}

export interface DelivererOptions {
  pollMs: number;
  /** An attempt's whole time: connect, send, the answer's status. */
  timeoutMs: number;
}

const kDefaults: DelivererOptions = { pollMs: 100, timeoutMs: 10_000 };

export class Deliverer {
  /** This process: the name its claims carry. */
  readonly nodeId = `node_${randomId(8)}`;
  private readonly options: DelivererOptions;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly sending = new Map<string, Promise<void>>();
  private readonly perWebhook = new Map<string, number>();

  constructor(
    private readonly store: SnapshotReader,
    private readonly work: DeliveryWork,
    private readonly guard: UrlGuard,
    private readonly clock: Clock,
    private readonly log: Logger,
    options: Partial<DelivererOptions> = {},
  ) {
    this.options = { ...kDefaults, ...options };
  }

  start(): void {
    this.timer = setInterval(() => this.poll(), this.options.pollMs);
    this.timer.unref();
  }

  /** Starts no new send; waits for those running at most `waitMs` (each is cut off by its timeout anyway). */
  async stop(waitMs = 1000): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.sending.values()), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  }

  private poll(): void {
    if (this.stopped || this.sending.size >= kConcurrency) return;
    this.store.resetReadTxn();
    for (const delivery of this.store.listDueDeliveries(this.clock.now(), kBatch)) {
      if (this.sending.size >= kConcurrency) return;
      if (this.sending.has(delivery.id) || (this.perWebhook.get(delivery.webhookId) ?? 0) >= kPerWebhook) continue;
      if (delivery.claimUntil > this.clock.now()) continue;
      this.perWebhook.set(delivery.webhookId, (this.perWebhook.get(delivery.webhookId) ?? 0) + 1);
      const sent = this.send(delivery.id)
        .catch((err: unknown) =>
          this.log.warn({ err, deliveryId: delivery.id }, 'webhook delivery: could not be recorded; it is sent again'),
        )
        .finally(() => {
          this.sending.delete(delivery.id);
          const left = (this.perWebhook.get(delivery.webhookId) ?? 1) - 1;
          if (left === 0) this.perWebhook.delete(delivery.webhookId);
          else this.perWebhook.set(delivery.webhookId, left);
        });
      this.sending.set(delivery.id, sent);
    }
  }

  private async send(deliveryId: string): Promise<void> {
    // The claim outlasts an attempt with room to record it: no other node sends it meanwhile.
    const claimed = await this.work.claim(deliveryId, this.nodeId, this.options.timeoutMs * 3);
    if (claimed === null || this.stopped) return;
    const { delivery, webhook } = claimed;
    const destination = await this.guard.destination(webhook.url);
    const outcome =
      'refused' in destination
        ? { status: null, error: destination.refused, latencyMs: 0 }
        : await this.attempt(webhook, delivery, destination);
    const recorded = await this.work.result(delivery.id, outcome);
    const fields = { deliveryId: delivery.id, webhookId: webhook.id, event: delivery.event, ...outcome };
    if (recorded?.status === 'failed') this.log.warn(fields, 'webhook delivery given up');
    else if (outcome.error !== null) this.log.info(fields, 'webhook delivery failed; will retry');
  }

  private attempt(
    webhook: Webhook,
    delivery: WebhookDelivery,
    destination: Exclude<Destination, { refused: string }>,
  ): Promise<AttemptOutcome> {
    const started = performance.now();
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Flagwire-Webhooks',
      ...signedHeaders(webhook.secret, delivery.id, Math.floor(this.clock.now() / 1000), delivery.body),
    };
    // The connection goes to the address the guard checked, whatever the name resolves to now.
    const lookup: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all)
        (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [destination]);
      else callback(null, destination.address, destination.family);
    };
    const url = new URL(webhook.url);
    return new Promise<AttemptOutcome>((resolve) => {
      const done = (status: number | null, error: string | null) => resolve({ status, error, latencyMs: performance.now() - started });
      const request = (url.protocol === 'https:' ? https : http).request(url, {
        method: 'POST',
        headers,
        lookup,
        signal: AbortSignal.timeout(this.options.timeoutMs),
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
        done(null, timedOut ? `no answer in ${this.options.timeoutMs} ms` : ((err as NodeJS.ErrnoException).code ?? err.message));
      });
      request.end(delivery.body);
    });
  }
}

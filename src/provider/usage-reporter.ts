// The provider's in-process evaluations, reported to the server as flag usage (docs/provider.md: Usage),
// so a flag evaluated only in-process is not shown as unused. On the evaluation's path: one or two Map
// reads and a set, by flag id and variant (a new pair allocates its entry, nothing else does). Every
// `flushIntervalMs`, and at close, the counts are cut into a batch under an id of its own and sent to
// POST /v1/usage/{project}[?env=] with the provider's token, sent again until answered (the server counts
// an id once: src/usage-reports). The counts are also cut at each hour's end, timed at its last
// millisecond, so the server puts each in the hour it was made in (usage is kept per hour). Bounded both ways: past `maxKeys` flag and variant pairs in one
// interval a new pair's evaluations are dropped, and past `maxPendingBatches` unanswered batches the
// oldest is; both are counted in `dropped`, never grown.
import type { Logger } from '@openfeature/server-sdk';
import { kMaxBatchEntries, UsageBatchSender, type UsageEntry } from './usage-batches.js';
import type { FlagwireUsageOptions } from './provider.js';
import { type SnapshotSource, usageUrl } from './snapshot-client.js';

const kDefaultFlushMs = 60_000;
const kDefaultPendingBatches = 60;
const kDefaultCloseMs = 5000;
const kSendTimeoutMs = 30_000;
const kHourMs = 3600 * 1000;

/** Counts by flag id, then variant ('' for an answer without one): the hot path's only state. */
export class UsageCounts {
  private byFlag = new Map<string, Map<string, number>>();
  private keys = 0;
  /** Evaluations not counted: past maxKeys pairs in one interval. */
  dropped = 0;

  constructor(private readonly maxKeys: number) {}

  count(flagId: string, variant: string): void {
    let byVariant = this.byFlag.get(flagId);
    if (byVariant === undefined) {
      if (this.keys >= this.maxKeys) {
        this.dropped++;
        return;
      }
      byVariant = new Map();
      this.byFlag.set(flagId, byVariant);
    }
    const n = byVariant.get(variant);
    if (n !== undefined) byVariant.set(variant, n + 1);
    else if (this.keys >= this.maxKeys) this.dropped++;
    else {
      this.keys++;
      byVariant.set(variant, 1);
    }
  }

  /** The counts so far as report entries timed `at`, and a fresh start. */
  take(at: number): UsageEntry[] {
    const entries: UsageEntry[] = [];
    for (const [flag, byVariant] of this.byFlag) {
      for (const [variant, evaluations] of byVariant) {
        entries.push(variant === '' ? { flag, evaluations, lastEvaluatedAt: at } : { flag, variant, evaluations, lastEvaluatedAt: at });
      }
    }
    this.byFlag = new Map();
    this.keys = 0;
    return entries;
  }
}

export class UsageReporter {
  readonly counts: UsageCounts;
  private readonly sender: UsageBatchSender;
  private readonly timer: NodeJS.Timeout;
  private hourTimer: NodeJS.Timeout;
  private readonly closeTimeoutMs: number;
  private droppedUnsent = 0;

  constructor(source: SnapshotSource, options: FlagwireUsageOptions, logger: Pick<Logger, 'warn'>) {
    this.counts = new UsageCounts(Math.min(options.maxKeys ?? kMaxBatchEntries, kMaxBatchEntries));
    this.closeTimeoutMs = options.closeTimeoutMs ?? kDefaultCloseMs;
    this.sender = new UsageBatchSender({
      url: usageUrl(source),
      authorization: `Bearer ${source.token}`,
      maxPendingBatches: options.maxPendingBatches ?? kDefaultPendingBatches,
      timeoutMs: kSendTimeoutMs,
      onDropped: (evaluations, why) => {
        this.droppedUnsent += evaluations;
        logger.warn(`Flagwire provider: ${evaluations} evaluations not reported as usage: ${why}.`);
      },
    });
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs ?? kDefaultFlushMs);
    this.timer.unref();
    this.hourTimer = this.cutAtHourEnd();
  }

  /** A timer that cuts the counts at the end of this hour (each batch entry is of one hour), then at the next's. */
  private cutAtHourEnd(): NodeJS.Timeout {
    const now = Date.now();
    const hourEnd = (Math.floor(now / kHourMs) + 1) * kHourMs;
    const timer = setTimeout(() => {
      this.cut(hourEnd - 1, Date.now());
      this.hourTimer = this.cutAtHourEnd();
    }, hourEnd - now);
    timer.unref();
    return timer;
  }

  /** The counts so far as a batch of entries timed `at`, queued to send. */
  private cut(at: number, now: number): void {
    const entries = this.counts.take(at);
    if (entries.length > 0) this.sender.add(entries, now);
  }

  /** Evaluations counted and never reported: past the bounds, or refused by the server. */
  get dropped(): number {
    return this.counts.dropped + this.droppedUnsent;
  }

  /** Cuts the counts into a batch and sends every waiting batch; true when none is left waiting. */
  flush(signal?: AbortSignal): Promise<boolean> {
    const now = Date.now();
    this.cut(now, now);
    return this.sender.flush(now, signal);
  }

  /** The last flush: tried again after a failure (pauses of 0.1 s doubling to 1 s) until closeTimeoutMs. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.hourTimer);
    const signal = AbortSignal.timeout(this.closeTimeoutMs);
    let pauseMs = 100;
    while (!(await this.flush(signal)) && !signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      pauseMs = Math.min(pauseMs * 2, 1000);
    }
    this.sender.dropAll('the server did not answer before the provider closed');
  }
}

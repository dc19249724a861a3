// Aggregates token activity in memory and flushes it through the writer every `intervalMs`, so no
// request pays a disk write for it. A crash loses at most one interval of activity, never flag data.
// A flush refused with Storage busy (another process holds the write lock; it was not applied) is kept
// and sent again with the next one; one flush runs at a time, so a long-held lock costs one waiting
// flush, not one per interval.
import { kTokenCommands } from './command-table.js';
import type { Logger } from 'pino';
import { type ErrorCode, FlagwireError } from '../errors.js';
import type { WriterClient } from '../writer/client.js';
import { kActivityKept, type ActivityBatch } from './activity-commands.js';
import { Periodic } from '../background/periodic.js';

/** Refusals that are recorded on the token and e-mailed (spec: Events): a real token refused. */
const kDenialCodes: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'TOKEN_REVOKED',
  'TOKEN_EXPIRED',
  'INSUFFICIENT_PERMISSION',
  'ENVIRONMENT_NOT_PERMITTED',
  'FORBIDDEN',
]);

export class ActivityRecorder {
  private pending = new Map<string, ActivityBatch>();
  private readonly flusher: Periodic;

  /** `writer` null: a relay's, which writes nothing and so records nothing (nothing is kept either). */
  constructor(
    private readonly writer: Pick<WriterClient, 'call'> | null,
    private readonly log: Logger,
    intervalMs = 1000,
  ) {
    this.flusher = new Periodic(() => this.send(), {
      intervalMs,
      onError: (err) => log.error({ err }, 'token activity: the flush failed'),
    });
  }

  start(): void {
    if (this.writer !== null) this.flusher.start();
  }

  used(tokenId: string, method: string, path: string, status: number, at: number): void {
    if (this.writer === null) return;
    const batch = this.batch(tokenId);
    batch.lastUsedAt = at;
    push(batch.recent, { at, method, path, status });
  }

  denied(tokenId: string, reason: string, method: string, path: string, at: number): void {
    if (this.writer === null) return;
    push(this.batch(tokenId).denials, { at, reason, method, path });
  }

  /**
   * A request of a known token answered with `error`: a use with the error's status, and a denial when
   * the refusal is one the spec records and e-mails (a real token refused). Every service that takes
   * tokens (the Management API, the flag sets and the sync service) records its refusals through here.
   */
  refused(tokenId: string, error: FlagwireError, method: string, path: string, at: number): void {
    this.used(tokenId, method, path, error.status, at);
    if (kDenialCodes.has(error.code)) this.denied(tokenId, `${error.title}: ${error.detail}`, method, path, at);
  }

  /** Sends everything aggregated so far, after the flush in flight (if any) ends. */
  flush(): Promise<void> {
    return this.flusher.runNow();
  }

  async stop(): Promise<void> {
    await this.flusher.stop();
    await this.flusher.runNow();
    if (this.pending.size > 0) this.log.warn({ tokens: this.pending.size }, 'token activity not recorded: the writer was busy at shutdown');
  }

  private async send(): Promise<void> {
    if (this.pending.size === 0 || this.writer === null) return;
    const batches = [...this.pending.values()];
    this.pending = new Map();
    try {
      await this.writer.call(kTokenCommands.recordActivity, { batches });
    } catch (err) {
      // The writer logs the busy episode once; this activity was not written: keep it for the next flush.
      if (err instanceof FlagwireError && err.code === 'STORE_BUSY') this.restore(batches);
      else this.log.warn({ err }, 'token activity could not be recorded');
    }
  }

  /** Puts refused batches back, before what was aggregated since. */
  private restore(batches: ActivityBatch[]): void {
    const newer = this.pending;
    this.pending = new Map(batches.map((b) => [b.tokenId, b]));
    for (const batch of newer.values()) {
      const older = this.pending.get(batch.tokenId);
      if (older === undefined) {
        this.pending.set(batch.tokenId, batch);
        continue;
      }
      older.lastUsedAt = batch.lastUsedAt ?? older.lastUsedAt;
      for (const item of batch.recent) push(older.recent, item);
      for (const item of batch.denials) push(older.denials, item);
    }
  }

  private batch(tokenId: string): ActivityBatch {
    let batch = this.pending.get(tokenId);
    if (!batch) {
      batch = { tokenId, lastUsedAt: null, recent: [], denials: [] };
      this.pending.set(tokenId, batch);
    }
    return batch;
  }
}

function push<T>(list: T[], item: T): void {
  if (list.length >= kActivityKept) list.shift();
  list.push(item);
}

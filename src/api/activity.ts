// Aggregates token activity in memory and flushes it through the writer every `intervalMs`, so no
// request pays a disk write for it. A crash loses at most one interval of activity, never flag data.
import type { Logger } from 'pino';
import type { WriterClient } from '../writer/client.js';
import { kActivityKept, type ActivityBatch } from '../writer/activity-commands.js';

export class ActivityRecorder {
  private pending = new Map<string, ActivityBatch>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly writer: WriterClient, private readonly log: Logger, private readonly intervalMs = 1000) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  used(tokenId: string, method: string, path: string, status: number, at: number): void {
    const batch = this.batch(tokenId);
    batch.lastUsedAt = at;
    push(batch.recent, { at, method, path, status });
  }

  denied(tokenId: string, reason: string, method: string, path: string, at: number): void {
    push(this.batch(tokenId).denials, { at, reason, method, path });
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batches = [...this.pending.values()];
    this.pending = new Map();
    try {
      await this.writer.call('recordActivity', { batches });
    } catch (err) {
      this.log.warn({ err }, 'token activity could not be recorded');
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
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

// Flag usage (docs/operations.md: Flag usage): the eval workers count evaluations on their compiled flags
// (engine.ts); once a minute the main thread asks every worker for its counts (pool.ts:
// collectUsage), sums them by flag and hands them to its destination: on a node that writes, one writer
// command (recordUsage); on a relay, a batch for its upstream (src/relay/usage-forwarder.ts), which counts
// it once. No request pays a write. What a kill loses: the counts not yet written (or, on a relay, not yet
// answered by the upstream), at most the last interval's. A flush refused with Storage busy (not applied)
// is kept and sent with the next one; one flush runs at a time.
import type { Logger } from 'pino';
import { FlagwireError } from '../../errors.js';
import { kUsageCommands } from '../../flags/records/usage-commands.js';
import { addCount, type UsageCount } from '../../model/flags.js';
import type { WriterClient } from '../../writer/client.js';
import { Periodic } from '../../background/periodic.js';

/**
 * Where counts made outside the eval workers join the next flush, summed with theirs: Unleash's server
 * SDKs evaluate locally and report their counts (POST /api/client/metrics, src/unleash); on a relay they
 * go upstream with its own.
 */
export interface UsageSink {
  addUsage(counts: readonly UsageCount[]): void;
}

declare module '../../routes/handler.js' {
  interface RouteServices {
    /** This front end's flag usage, written with the eval workers' counts. */
    usage: UsageSink;
  }
}

/** How often the counts are written: the most a kill loses, and how far behind lastEvaluatedAt may be. */
export const kUsageFlushMs = 60_000;
/** How long a flush waits for the workers' counts; a late worker's counts join the next flush. */
const kCollectTimeoutMs = 5000;

/** Where the counts come from: every eval worker, each answer handed to `onCounts` (even one after the timeout). */
export interface UsageSource {
  collectUsage(timeoutMs: number, onCounts: (counts: readonly UsageCount[]) => void): Promise<void>;
}

/** Where a flush's counts go: this node's writer (writtenUsage), or a relay's upstream. */
export interface UsageDestination {
  /** Writes or sends `counts`, summed by flag, environment and hour; resolves to those to keep for the next flush (none: taken). */
  take(counts: UsageCount[]): Promise<readonly UsageCount[]>;
  /** At the last flush: what is still held is sent if it can be, within a bound. */
  close?(): Promise<void>;
}

/** The counts written by this node's writer: refused as Storage busy (not applied), they are kept for the next flush. */
export function writtenUsage(writer: Pick<WriterClient, 'call'>, log: Pick<Logger, 'warn'>): UsageDestination {
  return {
    async take(counts) {
      try {
        await writer.call(kUsageCommands.recordUsage, { counts });
        return [];
      } catch (err) {
        // The writer logs the busy episode once; these counts were not written: keep them for the next flush.
        if (err instanceof FlagwireError && err.code === 'STORE_BUSY') return counts;
        log.warn({ err }, 'flag usage could not be recorded');
        return [];
      }
    },
  };
}

export class UsageRecorder {
  private pending = new Map<string, UsageCount>();
  private readonly flusher: Periodic;

  constructor(
    private readonly source: UsageSource,
    private readonly destination: UsageDestination,
    private readonly log: Logger,
    intervalMs = kUsageFlushMs,
  ) {
    this.flusher = new Periodic(() => this.collectAndSend(), {
      intervalMs,
      onError: (err) => log.error({ err }, 'flag usage: the flush failed'),
    });
  }

  start(): void {
    this.flusher.start();
  }

  /** Adds counts to what the next flush writes, summed by flag, environment and hour. */
  add(counts: readonly UsageCount[]): void {
    for (const count of counts) addCount(this.pending, count);
  }

  /** Collects every worker's counts and writes them, after the flush in flight (if any) ends. */
  flush(): Promise<void> {
    return this.flusher.runNow();
  }

  /** The last flush: call before the workers stop. */
  async stop(): Promise<void> {
    await this.flusher.stop();
    await this.flusher.runNow();
    await this.destination.close?.();
    if (this.pending.size > 0) this.log.warn({ flags: this.pending.size }, 'flag usage not recorded: the writer was busy at shutdown');
  }

  private async collectAndSend(): Promise<void> {
    try {
      await this.source.collectUsage(kCollectTimeoutMs, (counts) => this.add(counts));
    } catch (err) {
      this.log.warn({ err }, 'flag usage could not be collected from the eval workers');
    }
    if (this.pending.size === 0) return;
    const counts = [...this.pending.values()];
    this.pending = new Map();
    this.add(await this.destination.take(counts));
  }
}

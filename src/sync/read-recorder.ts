// Reads of flagd flag sets (src/flags/records/flag-set-read-records.ts), marked in memory where a set is
// served (GET /v1/flag-sets on each front end, the sync service on the main thread) and written through
// the writer at most once an interval, as the eval workers' usage is (src/evaluation/engine/usage.ts): a
// read costs a map entry, never a write. An open SyncFlags stream is a reader for as long as it is open,
// so each flush marks every set with a stream open now (`present`). What a kill loses: the marks not yet
// written, at most an interval's; a stream still open is marked again by the node it reconnects to.
import type { Logger } from 'pino';
import { Periodic } from '../background/periodic.js';
import { FlagwireError } from '../errors.js';
import { kFlagSetReadCommands } from '../flags/records/flag-set-read-commands.js';
import { type FlagSetReadMark, flagSetIdOf } from '../flags/records/flag-set-read-records.js';
import { kTestSwitches } from '../test-switches.js';
import type { WriterClient } from '../writer/client.js';

declare module '../routes/handler.js' {
  interface RouteServices {
    /** This front end's reads of flag sets, written at most once an interval. */
    flagSetReads: FlagSetReadRecorder;
  }
}

/** How often the marks are written: as usage's, so the most a kill loses and how far behind a read may be. */
export const kReadFlushMs = 60_000;

/** A set read now: its project and environment (null: a single-environment project's). */
export type OpenFlagSet = Pick<FlagSetReadMark, 'projectId' | 'environment'>;

export class FlagSetReadRecorder {
  private pending = new Map<string, FlagSetReadMark>();
  private readonly flusher: Periodic;
  /** Whether a flush was written (and so the store says since when it records reads): an empty one is skipped after. */
  private written = false;

  /**
   * `writer` null: a relay's, which writes nothing (docs/decisions.md: flag set reads). `present`: the sets
   * read for as long as a stream is open, marked at each flush.
   */
  constructor(
    private readonly writer: Pick<WriterClient, 'call'> | null,
    private readonly log: Pick<Logger, 'warn' | 'error'>,
    private readonly clock: { now(): number },
    private readonly present: () => Iterable<OpenFlagSet> = () => [],
    intervalMs = kTestSwitches.readFlushMs ?? kReadFlushMs,
  ) {
    this.flusher = new Periodic(() => this.send(), {
      intervalMs,
      onError: (err) => log.error({ err }, 'flag set reads: the flush failed'),
    });
  }

  /**
   * Ticks from now on, the first flush at once: it says since when this store records reads. Settles once
   * that flush ended, so that the node writes it before it serves (a store changed after start-up by no
   * request is a surprise to whoever watches it), and never rejects: a failed flush is logged.
   */
  async start(): Promise<void> {
    if (this.writer === null) return;
    this.flusher.start();
    await this.flusher.runNow().catch((err: unknown) => this.log.error({ err }, 'flag set reads: the flush failed'));
  }

  /** `projectId`'s set of `environment` read at `at`: one map entry, the latest kept. */
  read(projectId: string, environment: string | null, at: number): void {
    if (this.writer === null) return;
    const id = flagSetIdOf(projectId, environment);
    const known = this.pending.get(id);
    if (known === undefined) this.pending.set(id, { projectId, environment, at });
    else if (known.at < at) known.at = at;
  }

  /** Writes the marks now, after the flush in flight (if any) ends. */
  flush(): Promise<void> {
    return this.flusher.runNow();
  }

  /** The last flush: call once the sets are no longer served. */
  async stop(): Promise<void> {
    await this.flusher.stop();
    if (this.writer !== null) await this.flusher.runNow();
  }

  private async send(): Promise<void> {
    if (this.writer === null) return;
    const now = this.clock.now();
    for (const open of this.present()) this.read(open.projectId, open.environment, now);
    if (this.pending.size === 0 && this.written) return;
    const reads = [...this.pending.values()];
    this.pending = new Map();
    try {
      await this.writer.call(kFlagSetReadCommands.recordFlagSetReads, { reads });
      this.written = true;
    } catch (err) {
      // Not written (Storage busy, or the writer refused): kept for the next flush, newer marks winning.
      if (!(err instanceof FlagwireError && err.code === 'STORE_BUSY')) this.log.warn({ err }, 'flag set reads could not be recorded');
      for (const mark of reads) this.read(mark.projectId, mark.environment, mark.at);
    }
  }
}

// The front end's handle on the tally file (src/store/tally-file.ts), where the events routes count and
// the statistics route reads: opened on first use, so a node that is never sent an event never opens it.
// With it, the projects' event rate (event-rate.ts), shared by both events routes.
import type { Config } from '../config.js';
import { FlagwireError } from '../errors.js';
import { TallyFile, type TallyTxn } from '../store/tally-file.js';
import { EventRate } from './event-rate.js';
import type { StorageLimits } from './receive.js';

declare module '../routes/handler.js' {
  interface RouteServices {
    /** The tally file of events, per front end (src/events). */
    events: EventCounter;
  }
}

export class EventCounter {
  /** How many events each project may send: both events routes take from it. */
  readonly rate: EventRate;
  /** How much a project's events may keep (docs/operations.md: Limits). */
  readonly limits: StorageLimits;
  /** The data dir: the tally file's, and where a Parquet export writes its scratch files. */
  readonly dataDir: string;
  private file: TallyFile | null = null;
  /** Settles once the batch counted last has run its transaction's work (see count). */
  private ran: Promise<void> = Promise.resolve();

  constructor(
    config: Readonly<
      Pick<Config, 'dataDir' | 'eventsPerSecond' | 'httpThreads' | 'eventSubjectsPerEnvironment' | 'rawEventBytesPerProject'>
    >,
  ) {
    this.dataDir = config.dataDir;
    this.limits = { subjectsPerEnvironment: config.eventSubjectsPerEnvironment, rawBytesPerProject: config.rawEventBytesPerProject };
    this.rate = new EventRate(config.eventsPerSecond, config.httpThreads);
  }

  get tally(): TallyFile {
    this.file ??= TallyFile.open(this.dataDir);
    return this.file;
  }

  /**
   * The tally file for a read: null while none is on disk (a node never sent an event), so that reading
   * the statistics there answers empty and creates no file.
   */
  get existing(): TallyFile | null {
    return this.file === null && !TallyFile.exists(this.dataDir) ? null : this.tally;
  }

  /**
   * Runs `apply` in a write transaction of its own and settles with its result once committed, on disk.
   * lmdb-js runs every transaction callback waiting for the write lock in one go on this thread: eight
   * batches of 1,000 events held evaluation answers for 30 ms. So a batch's transaction is asked for
   * only once the one before it has run its work: the thread is held for one batch's few milliseconds
   * at a time, while the commits still overlap the next batch's work.
   */
  count<T>(apply: (txn: TallyTxn) => T): Promise<T> {
    const started = this.ran.then(() => {
      let done!: () => void;
      const ran = new Promise<void>((resolve) => (done = resolve));
      const committed = this.tally.transact((txn) => {
        try {
          return apply(txn);
        } finally {
          done();
        }
      });
      // A transaction that fails before its work runs must not hold the next ones.
      committed.catch(done);
      return { ran, committed };
    });
    this.ran = started.then(({ ran }) => ran);
    return started.then(({ committed }) => committed);
  }

  /** Closes the file once the front end has drained (every answered batch is on disk by then). */
  async close(): Promise<void> {
    await this.file?.close();
    this.file = null;
  }
}

/**
 * The refusal of every events route on a node that does not count them: with PostgreSQL, each node's own
 * tally file would hold only part of a subject's events (and a relay forwards no writes).
 */
export function refuseUnlessCounted(config: Readonly<Pick<Config, 'databaseUrl' | 'upstream'>>): void {
  if (config.databaseUrl !== null || config.upstream !== null)
    throw new FlagwireError(
      'NOT_FOUND',
      'Events are counted on an embedded node only: this node keeps its data in PostgreSQL, or relays another node, where each node would hold part of a subject. Send them to an embedded node.',
    );
}

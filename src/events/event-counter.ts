// The front end's handle on the tally, where the events routes count and the statistics route reads: the
// data dir's tally file (src/store/tally-file.ts) on an embedded node, PostgreSQL's tally tables
// (src/store/pg/pg-tally.ts) on a node that shares a database, so every node counts a subject alike.
// Opened on first use, so a node that is never sent an event never opens it. With it, the projects'
// event rate (event-rate.ts), shared by both events routes: per node (and thread), as ever.
import type { Config } from '../config.js';
import { FlagwireError } from '../errors.js';
import { PgTally, type TallyTouches } from '../store/pg/pg-tally.js';
import { type ExperimentTally, TallyFile, type TallyScope, type TallyTxn } from '../store/tally-file.js';
import { EventRate } from './event-rate.js';

declare module '../routes/handler.js' {
  interface RouteServices {
    /** The tally of events, per front end (src/events). */
    events: EventCounter;
  }
}

/** Connections of a front end's pool to PostgreSQL's tally: the batches it counts at once. */
const kPgConnections = 4;

export class EventCounter {
  /** How many events each project may send: both events routes take from it. */
  readonly rate: EventRate;
  private readonly dataDir: string;
  private readonly databaseUrl: string | null;
  private file: TallyFile | null = null;
  private pg: PgTally | null = null;
  /** Settles once the batch counted last has run its transaction's work (see count). */
  private ran: Promise<void> = Promise.resolve();

  constructor(config: Readonly<Pick<Config, 'dataDir' | 'databaseUrl' | 'eventsPerSecond' | 'httpThreads'>>) {
    this.dataDir = config.dataDir;
    this.databaseUrl = config.databaseUrl;
    this.rate = new EventRate(config.eventsPerSecond, config.httpThreads);
  }

  private get tally(): TallyFile {
    this.file ??= TallyFile.open(this.dataDir);
    return this.file;
  }

  private get pgTally(): PgTally {
    this.pg ??= PgTally.open(this.databaseUrl!, kPgConnections);
    return this.pg;
  }

  /** An experiment's arms and sums in `scope`, read now. */
  experiment(scope: TallyScope, experiment: string): Promise<ExperimentTally> {
    if (this.databaseUrl !== null) return this.pgTally.experiment(scope, experiment);
    return Promise.resolve(this.tally.experiment(scope, experiment));
  }

  /**
   * Runs `apply` in a write transaction of its own and settles with its result once committed, on disk.
   * `apply` works in `scope` on the batch id and subjects `touches` names (what PostgreSQL reads for it).
   * With PostgreSQL, one transaction there (PgTally.transact), its statements awaited, so the thread is
   * held only for `apply`'s work. On the tally file:
   * lmdb-js runs every transaction callback waiting for the write lock in one go on this thread: eight
   * batches of 1,000 events held evaluation answers for 30 ms. So a batch's transaction is asked for
   * only once the one before it has run its work: the thread is held for one batch's few milliseconds
   * at a time, while the commits still overlap the next batch's work.
   */
  count<T>(scope: TallyScope, touches: TallyTouches, apply: (txn: TallyTxn) => T): Promise<T> {
    if (this.databaseUrl !== null) return this.pgTally.transact(scope, touches, apply);
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

  /** Closes the file or pool once the front end has drained (every answered batch is on disk by then). */
  async close(): Promise<void> {
    await this.file?.close();
    this.file = null;
    await this.pg?.close();
    this.pg = null;
  }
}

/**
 * The refusal of every events route on a relay: it takes no writes (its copy is the upstream's), and a
 * relay's own tally would hold part of a subject's events. Embedded nodes and nodes on PostgreSQL count.
 */
export function refuseUnlessCounted(config: Readonly<Pick<Config, 'upstream'>>): void {
  if (config.upstream !== null)
    throw new FlagwireError(
      'NOT_FOUND',
      'Events are not counted on a relay: it relays another node and takes no writes. Send them to the node it relays (or any node on its PostgreSQL).',
    );
}

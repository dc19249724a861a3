// Where events are counted and the statistics read: the data dir's tally file (tally/tally-file.ts)
// on an embedded node, PostgreSQL's tally tables (tally/pg-tally.ts) on a node that shares a
// database, so every node counts a subject alike. The events thread counts through one (events-thread.ts),
// the front end erases and reads through its own (event-counter.ts). Opened on first use, so a process
// that is never sent an event never opens the file, a pool, or loads PostgreSQL's client.
import type { Config } from '../config.js';
import type { PgTally, TallyTouches } from './tally/pg-tally.js';
import { type ExperimentTally, type RawEventPages, TallyFile, type TallyScope, type TallyTxn } from './tally/tally-file.js';
import { eraseSubject } from './tally.js';

/** Connections of one tally's pool to PostgreSQL: the batches it counts at once. */
const kPgConnections = 4;
/**
 * Raw events an erasure removes per transaction: a subject may have millions, and one transaction for
 * them all would hold the tally file's write lock (every batch waits for it) and the memory of every key.
 */
export const kEraseRawPerTxn = 1000;

export class TallyWrites {
  private file: TallyFile | null = null;
  private pg: Promise<PgTally> | null = null;
  /** Settles once the work counted last has run in its transaction of the tally file (see count). */
  private ran: Promise<void> = Promise.resolve();
  private readonly dataDir: string;
  private readonly databaseUrl: string | null;

  constructor(config: Readonly<Pick<Config, 'dataDir' | 'databaseUrl'>>) {
    this.dataDir = config.dataDir;
    this.databaseUrl = config.databaseUrl;
  }

  private get tally(): TallyFile {
    this.file ??= TallyFile.open(this.dataDir);
    return this.file;
  }

  /** The tally file, or null while none is on disk (never on a node on PostgreSQL): a read opens no new file. */
  get existingFile(): TallyFile | null {
    if (this.databaseUrl !== null) return null;
    return this.file === null && !TallyFile.exists(this.dataDir) ? null : this.tally;
  }

  private pgTally(url: string): Promise<PgTally> {
    this.pg ??= import('./tally/pg-tally.js').then(({ PgTally }) => PgTally.open(url, kPgConnections));
    return this.pg;
  }

  /** Where raw events are read: PostgreSQL's tally, or the tally file (null while none is on disk). */
  async rawPages(): Promise<RawEventPages | null> {
    return this.databaseUrl === null ? this.existingFile : this.pgTally(this.databaseUrl);
  }

  /** An experiment's arms and sums in `scope`, read now: of every metric, or only of `metrics`. */
  async experiment(scope: TallyScope, experiment: string, metrics: readonly string[] | null): Promise<ExperimentTally> {
    if (this.databaseUrl !== null) return (await this.pgTally(this.databaseUrl)).experiment(scope, experiment, metrics);
    return this.existingFile?.experiment(scope, experiment, metrics) ?? { arms: [], sums: [] };
  }

  /**
   * Runs `apply` in a write transaction of its own, working in `scope` on the batch id and subjects
   * `touches` names, and settles with its result once committed, on disk.
   * With PostgreSQL, one transaction there (PgTally.transact), on a connection of its own.
   * In the tally file: lmdb-js runs every transaction callback waiting for the write lock in one go on
   * this thread (several batches' work held it in one stretch), so a transaction is asked for only
   * once the one before it has run its work: the thread is held for one batch's few milliseconds at a
   * time, while the commits still overlap the next batch's work.
   */
  async count<T>(scope: TallyScope, touches: TallyTouches, apply: (txn: TallyTxn) => T): Promise<T> {
    if (this.databaseUrl !== null) return (await this.pgTally(this.databaseUrl)).transact(scope, touches, apply);
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

  /**
   * Erases `subject` of `scope`: its counts in one transaction (count), which also reads where its raw
   * events end; then those raw events, up to there, kEraseRawPerTxn per transaction until none is left.
   * Those of a later subject of the same key, stored after that first transaction, stay. Settles, once
   * all of it is on disk, with whether anything of the subject was kept. An erasure cut short (the node
   * stopped) left its remaining raw events; the same erasure sent again removes them.
   */
  async erase(scope: TallyScope, subject: string): Promise<boolean> {
    const { erased, rawEnd } = await this.count(scope, { batchId: null, subjects: [subject], readsRawEnd: true }, (txn) =>
      eraseSubject(txn, scope, subject),
    );
    if (rawEnd === null) return erased;
    const raw = this.databaseUrl === null ? this.tally : await this.pgTally(this.databaseUrl);
    // Until a step removes none: on PostgreSQL a step may remove fewer than its bound while more remain
    // (rows an expiry was forgetting meanwhile).
    while ((await raw.removeRawEvents(scope, subject, rawEnd, kEraseRawPerTxn)) > 0);
    return true;
  }

  /** Closes the file or the pool once nothing more is counted (every answered batch is on disk by then). */
  async close(): Promise<void> {
    await this.file?.close();
    this.file = null;
    const pg = this.pg;
    this.pg = null;
    await (await pg)?.close();
  }
}

// Writes to the tally file (src/store/tally-file.ts), one batch's work at a time: the events thread's
// counts (events-thread.ts) and the front end's erasures and statistics each hold one. The file is
// opened on first use, so a process that is never sent an event never opens it.
import { TallyFile, type TallyTxn } from '../store/tally-file.js';

export class TallyWrites {
  private file: TallyFile | null = null;
  /** Settles once the work counted last has run in its transaction (see count). */
  private ran: Promise<void> = Promise.resolve();

  constructor(private readonly dataDir: string) {}

  get tally(): TallyFile {
    this.file ??= TallyFile.open(this.dataDir);
    return this.file;
  }

  /**
   * Runs `apply` in a write transaction of its own and settles with its result once committed, on disk.
   * lmdb-js runs every transaction callback waiting for the write lock in one go on this thread: eight
   * batches of 1,000 events held the thread for 30 ms. So a transaction is asked for only once the one
   * before it has run its work: the thread is held for one batch's few milliseconds at a time, while the
   * commits still overlap the next batch's work.
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

  /** Closes the file once nothing more is counted (every answered batch is on disk by then). */
  async close(): Promise<void> {
    await this.file?.close();
    this.file = null;
  }
}

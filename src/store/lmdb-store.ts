// The LMDB store: the transactions writes run in (transact, transactEach, and rehearse, which records
// a change set and writes nothing), over the records (lmdb-records.ts: every read and write of the
// layout, layout.ts) and the replica operations (lmdb-replica.ts: this file as a system of record's
// copy). Opened by open.ts; code above src/store sees it through the interfaces in interfaces.ts.
import { ABORT, type RootDatabase } from 'lmdb';
import { FlagwireError } from '../errors.js';
import type { Change, Revision } from './changes.js';
import { kCommitFailedDetail, type Settled, type Store, type StoreCopy, type StoreWriter } from './interfaces.js';
import { LmdbRecords } from './lmdb-records.js';
import { LmdbReplica } from './lmdb-replica.js';
import { openDataFile, type OpenedDataFile, type StoreOptions } from './open.js';
import { writeTransaction } from './write-txn.js';

export class LmdbStore extends LmdbRecords implements Store, StoreWriter, StoreCopy {
  readonly path: string;
  private readonly root: RootDatabase;
  private readonly replica: LmdbReplica;
  /** committedRevision(): read inside the last transaction this handle committed. */
  private lastCommitted = 0;

  private constructor(file: OpenedDataFile) {
    super(file.dbs);
    this.path = file.path;
    this.root = file.root;
    this.replica = new LmdbReplica(
      file.root,
      file.dbs,
      file.layout,
      (fn) => this.transact(fn),
      () => {
        this.configChanged = true;
      },
    );
  }

  /** Opens (creating if needed) the store in `dataDir`; refuses a newer or foreign layout (open.ts). */
  static open(dataDir: string, options: StoreOptions): LmdbStore {
    return new LmdbStore(openDataFile(dataDir, options));
  }

  /** One LMDB write transaction (the contract: StoreTransactions in interfaces.ts). */
  transact<T>(fn: (writer: StoreWriter) => T): T {
    if (this.inTxn) return fn(this);
    this.inTxn = true;
    this.configChanged = false;
    let applied = false;
    try {
      // Only from the newest commit (write-txn.ts): a process opening the file may have left the lock
      // file naming an older one.
      return writeTransaction(this.root, this.path, () => {
        const result = fn(this);
        // Only a configuration change moves the number readers key their caches on: the token
        // activity flush (every second under Management API traffic), the flag usage flush (every
        // minute under evaluation traffic), audit and mail writes would
        // otherwise make every eval worker recompile its flags and the API drop its memo each time.
        if (this.configChanged) this.db.meta.putSync('configSeq', this.configSeq() + 1);
        this.lastCommitted = this.revision();
        applied = true;
        return result;
      });
    } catch (err) {
      // `fn` ran to its end, so the commit itself failed (disk full, read-only filesystem, I/O
      // error): nothing was written. A defined error, so the API answers 503 and the console
      // "Storage unavailable", instead of an unexpected-error 500.
      if (applied) throw new FlagwireError('STORE_UNAVAILABLE', kCommitFailedDetail, { cause: err });
      throw err;
    } finally {
      this.inTxn = false;
    }
  }

  /** Group commit: each function in its own LMDB child transaction inside one write transaction. */
  transactEach<T>(fns: readonly ((writer: StoreWriter) => T)[]): Settled<T>[] {
    return this.transact(() =>
      fns.map((fn): Settled<T> => {
        // A child that fails is rolled back whole, so what it wrote before it failed does not count as
        // a configuration change either (configSeq moves only for a commit that changes something).
        const configChanged = this.configChanged;
        try {
          return { ok: true, value: this.root.transactionSync(() => fn(this)) };
        } catch (error) {
          this.configChanged = configChanged;
          return { ok: false, error };
        }
      }),
    );
  }

  /**
   * Runs each function as transactEach does, then rolls everything back: nothing is written here, and
   * what the functions wrote (the ones that did not throw) is returned as a change set. PostgreSQL's
   * write path (src/store/pg/pg-write-path.ts) commits that change set there first, then applies it
   * here with applyRevisions, so readers never see a change the system of record does not hold.
   */
  rehearse<T>(fns: readonly ((writer: StoreWriter) => T)[]): { settled: Settled<T>[]; changes: Change[] } {
    if (this.inTxn) throw new Error('rehearse runs outside any transaction');
    let settled: Settled<T>[] = [];
    this.inTxn = true;
    try {
      const changes = this.recorder.recordDuring(() =>
        writeTransaction(this.root, this.path, () => {
          settled = fns.map((fn): Settled<T> => {
            const mark = this.recorder.mark();
            try {
              return { ok: true, value: this.root.transactionSync(() => fn(this)) };
            } catch (error) {
              this.recorder.dropBack(mark);
              return { ok: false, error };
            }
          });
          return ABORT;
        }),
      );
      return { settled, changes };
    } finally {
      this.inTxn = false;
    }
  }

  committedRevision(): number {
    return this.lastCommitted;
  }

  // ---- the local copy of a system of record (lmdb-replica.ts) ---------------------------------

  replicaRevision(): number {
    return this.replica.replicaRevision();
  }

  replicaOf(): string | undefined {
    return this.replica.replicaOf();
  }

  applyRevisions(revisions: readonly Revision[]): number {
    return this.replica.applyRevisions(revisions);
  }

  replaceAll(source: string, revision: number, records: readonly Change[]): void {
    this.replica.replaceAll(source, revision, records);
  }

  exportRecords(): Change[] {
    return this.replica.exportRecords();
  }

  isRelayCopy(): boolean {
    return this.replica.isRelayCopy();
  }

  markRelayCopy(): void {
    this.replica.markRelayCopy();
  }

  adoptAsCopy(source: string, revision: number): void {
    this.replica.adoptAsCopy(source, revision);
  }

  resetReadTxn(): void {
    this.root.resetReadTxn();
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}

// The LMDB store: the transactions writes run in (transact, transactEach, commitEach, which records and
// logs the change set it commits, and rehearse, which records a change set and writes nothing), over the records (lmdb-keyed.ts: every read and write of the
// layout, layout.ts) and the replica operations (lmdb-replica.ts: this file as a system of record's
// copy). Opened by open.ts; code above src/store sees it through the interfaces in interfaces.ts.
import { ABORT, type RootDatabase } from 'lmdb';
import { FlagwireError } from '../errors.js';
import type { Change, LoggedChange, Revision } from './changes.js';
import {
  kCommitFailedDetail,
  type RelayedCopy,
  type Settled,
  type Store,
  type StoreCopy,
  type StoreWriter,
  type Tentative,
} from './interfaces.js';
import { ChangeLog } from './change-log.js';
import type { ChangeBearing, EnvironmentBearing } from './interfaces.js';
import type { StoreLayout } from './store-layout.js';
import { LmdbKeyed } from './lmdb-keyed.js';
import { LmdbReplica } from './lmdb-replica.js';
import { openDataFile, type OpenedDataFile, type StoreOptions } from './open.js';
import { writeTransaction } from './write-txn.js';

export class LmdbStore extends LmdbKeyed implements Store, StoreWriter, StoreCopy {
  readonly path: string;
  private readonly root: RootDatabase;
  private readonly replica: LmdbReplica;
  /** committedRevision(): read inside the last transaction this handle committed. */
  private lastCommitted = 0;

  private constructor(file: OpenedDataFile) {
    super(file.dbs, new ChangeLog(file.dbs.meta, file.changeLog));
    this.path = file.path;
    this.root = file.root;
    this.replica = new LmdbReplica(
      file.root,
      file.dbs,
      file.layout,
      this.changeLog,
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
    return this.transaction(fn, null);
  }

  /**
   * A write transaction; `logged`: the change set being recorded for it (commitEach), logged under the
   * revision it makes, or null. An embedded node's revision is its configSeq, so a commit that moves no
   * configuration (audit, usage, activity, mail alone) makes no revision and logs nothing: none of its
   * kinds is relayed (a relayed kind moves configSeq: lmdb-keyed.ts).
   */
  private transaction<T>(fn: (writer: StoreWriter) => T, logged: readonly Change[] | null): T {
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
        if (this.configChanged) {
          const seq = this.configSeq() + 1;
          this.db.meta.putSync('configSeq', seq);
          if (logged !== null)
            this.changeLog.append(
              seq,
              this.replica.logged(logged, (change) => this.recorder.baseOf(change)),
            );
        }
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
    return this.transact(() => this.eachInChild(fns));
  }

  /**
   * The embedded write path's group commit (write-path.ts): `claim()`'s functions run as transactEach
   * runs them, once the write lock is held, and what they wrote is recorded as PostgreSQL's write path
   * records it (rehearse) and logged in the same transaction under the revision the commit makes. A
   * database's copy is written only by following it: its log holds that database's revisions
   * (applyRevisions), so a commit here logs nothing.
   */
  commitEach<T>(claim: () => readonly ((writer: StoreWriter) => T)[]): Settled<T>[] {
    if (this.inTxn) throw new Error('commitEach runs outside any transaction');
    if (this.replicaOf() !== undefined) return this.transactEach(claim());
    let settled: Settled<T>[] = [];
    this.recorder.recordDuring((changes) => {
      settled = this.transaction(() => this.eachInChild(claim()), changes);
    });
    return settled;
  }

  /**
   * Runs each function as transactEach does, then rolls everything back: nothing is written here, and
   * what the functions wrote (the ones that did not throw) is returned as a change set, and `logged`,
   * the same set with each record written over another as its changed fields (record-patch.ts).
   * PostgreSQL's write path (src/store/pg/pg-write-path.ts) commits that change set there first (its
   * records whole, its change log as `logged`), then applies it here with applyRevisions, so readers
   * never see a change the system of record does not hold.
   */
  rehearse<T>(fns: readonly ((writer: StoreWriter) => T)[]): { settled: Settled<T>[]; changes: Change[]; logged: LoggedChange[] } {
    if (this.inTxn) throw new Error('rehearse runs outside any transaction');
    let settled: Settled<T>[] = [];
    this.inTxn = true;
    try {
      const changes = this.recorder.recordDuring(() =>
        writeTransaction(this.root, this.path, () => {
          settled = this.eachInChild(fns);
          return ABORT;
        }),
      );
      return { settled, changes, logged: this.replica.patched(changes, (change) => this.recorder.baseOf(change)) };
    } finally {
      this.inTxn = false;
    }
  }

  /**
   * Each function in its own LMDB child transaction, inside the open one. A child that fails is rolled
   * back whole, so what it wrote before it failed is neither a configuration change (configSeq moves
   * only for a commit that changes something) nor part of the change set being recorded.
   */
  private eachInChild<T>(fns: readonly ((writer: StoreWriter) => T)[]): Settled<T>[] {
    return fns.map((fn): Settled<T> => {
      const configChanged = this.configChanged;
      const mark = this.recorder.mark();
      try {
        return { ok: true, value: this.root.transactionSync(() => fn(this)) };
      } catch (error) {
        this.configChanged = configChanged;
        this.recorder.dropBack(mark);
        return { ok: false, error };
      }
    });
  }

  tentatively<T>(fn: () => T, review: (changes: readonly Change[]) => boolean): Tentative<T> {
    if (!this.inTxn) throw new Error('tentatively runs inside a transaction');
    const configChanged = this.configChanged;
    const mark = this.recorder.mark();
    // Rolled back: as if `fn` never ran (the change set being recorded, and whether configuration moved).
    const rollBack = () => {
      this.configChanged = configChanged;
      this.recorder.dropBack(mark);
    };
    let outcome: Tentative<T> | null = null;
    try {
      this.root.transactionSync(() => {
        const { value, changes } = this.recorder.watch(fn);
        if (!review(changes)) {
          outcome = { kept: true, value };
          return undefined;
        }
        outcome = { kept: false, value, changes };
        return ABORT;
      });
    } catch (err) {
      // `fn` threw and the nested transaction aborted: its writes must not stay in the change set either,
      // as the caller may go on (the approvals gate tries a refused change on top of a pending request).
      rollBack();
      throw err;
    }
    const done = outcome as Tentative<T> | null;
    if (done === null) throw new Error('tentatively: the nested transaction did not run');
    if (!done.kept) rollBack();
    return done;
  }

  changeBearing(kind: string): ChangeBearing | undefined {
    return this.replica.changeBearing(kind);
  }

  protected layoutOf(): StoreLayout {
    return this.replica.layoutOf();
  }

  // biome-ignore lint/suspicious/noExplicitAny: kinds of every record type; each is handed its own values.
  environmentBearings(): readonly EnvironmentBearing<any>[] {
    return this.replica.environmentBearings();
  }

  applyChanges(changes: readonly Change[]): void {
    this.replica.applyChanges(this, changes);
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

  relayedCopy(): RelayedCopy {
    // One synchronous run: the source, the revision and the records come from the same read snapshot.
    return { source: this.source(), revision: this.revision(), records: this.replica.relayedRecords() };
  }

  adoptAsCopy(source: string, revision: number): void {
    this.replica.adoptAsCopy(source, revision);
  }

  holdsConfiguration(): boolean {
    return this.replica.holdsConfiguration();
  }

  resetReadTxn(): void {
    this.root.resetReadTxn();
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}

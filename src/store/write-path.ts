// The write path of the embedded default: each group of commands in one LMDB write transaction of the
// data file, which is the system of record (PostgreSQL's path is pg/pg-write-path.ts). What the
// commands write is recorded as PostgreSQL's path records it, and logged with the revision the commit
// makes (change-log.ts), so a relay follows an embedded node as it follows a cluster.
import type { Settled, StoreWriter, WritePath } from './interfaces.js';
import type { LmdbStore } from './lmdb-store.js';

export class LmdbWritePath implements WritePath {
  constructor(private readonly store: LmdbStore) {}

  commit<T>(claim: () => readonly ((writer: StoreWriter) => T)[]): Promise<Settled<T>[]> {
    try {
      // The write lock is held inside transact: claim() runs there, so only the commit remains.
      return Promise.resolve(this.store.commitEach(claim));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Read inside the transaction, after its commit number moved: exactly this commit's. */
  revision(): number {
    return this.store.committedRevision();
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

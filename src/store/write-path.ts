// The write path of the embedded default: each group of commands in one LMDB write transaction of the
// data file, which is the system of record (PostgreSQL's path is pg/pg-write-path.ts).
import type { Settled, Store, StoreWriter, WritePath } from './interfaces.js';

export class LmdbWritePath implements WritePath {
  constructor(private readonly store: Store) {}

  commit<T>(claim: () => readonly ((writer: StoreWriter) => T)[]): Promise<Settled<T>[]> {
    try {
      // The write lock is held inside transact: claim() runs there, so only the commit remains.
      return Promise.resolve(this.store.transact(() => this.store.transactEach(claim())));
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

// Where a process gets its store. Code above src/store asks here and never names an implementation:
// today that is the data dir's LMDB file; another system of record (PostgreSQL, when several nodes
// run) is chosen here alone. Evaluation workers are the exception by design: they always read the
// node's local LMDB copy (src/eval/worker.ts).
import type { Store } from './interfaces.js';
import { dataFilePath } from './layout.js';
import { LmdbStore } from './lmdb-store.js';
import type { StoreOptions } from './open.js';
import { verifyDataFile } from './verify.js';

/** The store of `dataDir`, opened for reading and writing (or `readOnly`). */
export function openStore(dataDir: string, options: StoreOptions = {}): Store {
  return LmdbStore.open(dataDir, options);
}

/** The server's start-up check before it opens the store: the data file reads end to end (verify.ts). */
export function verifyStore(dataDir: string): Promise<void> {
  return verifyDataFile(dataFilePath(dataDir));
}

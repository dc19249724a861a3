// Where a process gets its store. Code above src/store asks here and never names an implementation.
// Reads always come from the data dir's LMDB file. Writes take the path chosen here: that file itself
// (the embedded default), or PostgreSQL as the system of record (src/store/pg/), the file then being
// this node's copy of it. Evaluation workers read the file directly by design (src/eval/worker.ts).
import { FlagwireError } from '../errors.js';
import type { Store, WritePath } from './interfaces.js';
import { dataFilePath } from './layout.js';
import { LmdbStore } from './lmdb-store.js';
import type { StoreOptions } from './open.js';
import type { ReplicaStatus } from './pg/follower.js';
import { PgSystem } from './pg/pg-system.js';
import { PgWritePath } from './pg/pg-write-path.js';
import { catchUpLatest } from './pg/replica.js';
import { verifyDataFile } from './verify.js';
import { LmdbWritePath } from './write-path.js';

export type { ReplicaStatus } from './pg/follower.js';

/** The store of `dataDir`, opened for reading and writing (or `readOnly`). */
export function openStore(dataDir: string, options: StoreOptions = {}): Store {
  return LmdbStore.open(dataDir, options);
}

/**
 * The server's start-up check before it opens the store: the data file reads end to end (verify.ts);
 * with PostgreSQL, a data dir that has never followed it is brought up to date (the schema migrated,
 * a full copy into an empty data dir), and refused when it holds data of its own or PostgreSQL cannot
 * be reached. A copy that has followed it starts as it is, without asking PostgreSQL: the follower
 * catches up right after (/ready waits for that), so a PostgreSQL that hangs delays no start.
 */
export async function verifyStore(dataDir: string, databaseUrl: string | null = null): Promise<void> {
  await verifyDataFile(dataFilePath(dataDir));
  if (databaseUrl === null) return;
  const copy = LmdbStore.open(dataDir);
  if (copy.replicaOf() !== undefined) {
    await copy.close();
    return;
  }
  const pg = PgSystem.open(databaseUrl, { max: 1 });
  try {
    await catchUpLatest(copy, pg);
  } finally {
    await pg.close();
    await copy.close();
  }
}

/**
 * The writer's path for `dataDir`'s store: with `databaseUrl`, PostgreSQL then this node's copy, with
 * its follower (`onReplica` hears the copy's state); else the LMDB file.
 */
export function openWritePath(dataDir: string, databaseUrl: string | null, onReplica: (status: ReplicaStatus) => void): WritePath {
  if (databaseUrl === null) return new LmdbWritePath(LmdbStore.open(dataDir));
  return new PgWritePath(LmdbStore.open(dataDir), PgSystem.open(databaseUrl), { onReplica });
}

/**
 * A console command's store and write path. With PostgreSQL, its copy is brought to the latest
 * revision first (so reads see every committed change); throws STORE_UNAVAILABLE when PostgreSQL
 * cannot be reached. The write path owns the store: closing it closes both.
 */
export async function openForConsole(dataDir: string, databaseUrl: string | null): Promise<{ store: Store; writes: WritePath }> {
  const copy = LmdbStore.open(dataDir);
  if (databaseUrl === null) return { store: copy, writes: new LmdbWritePath(copy) };
  const pg = PgSystem.open(databaseUrl, { max: 1 });
  try {
    await catchUpLatest(copy, pg);
  } catch (err) {
    await pg.close();
    await copy.close();
    throw err;
  }
  return { store: copy, writes: new PgWritePath(copy, pg, { onReplica: null }) };
}

/**
 * Copies the data dir's store into an empty PostgreSQL database (revision 1) and makes the data dir
 * that database's copy, so a node can start on it at once. Refuses a database holding any Flagwire
 * data. Run it with the server stopped: a write made meanwhile would stay behind.
 */
export async function migrateToPostgres(dataDir: string, databaseUrl: string): Promise<{ revision: number; records: number }> {
  const store = LmdbStore.open(dataDir);
  const pg = PgSystem.open(databaseUrl, { max: 1 });
  try {
    if (store.replicaOf() !== undefined) {
      throw new FlagwireError('INVALID_REQUEST', 'this data directory is already the copy of a PostgreSQL database; there is nothing to migrate');
    }
    const records = store.exportRecords();
    const databaseId = await pg.databaseId();
    const revision = await pg.importAll(records);
    store.adoptAsCopy(databaseId, revision);
    return { revision, records: records.length };
  } finally {
    await pg.close();
    await store.close();
  }
}

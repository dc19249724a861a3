// Where a process gets its store. Code above src/store asks here and never names an implementation.
// Reads always come from the data dir's LMDB file. Writes take the path chosen here: that file itself
// (the embedded default), or PostgreSQL as the system of record (src/store/pg/), the file then being
// this node's copy of it. Evaluation workers read the file directly by design (src/evaluation/engine/worker.ts).
import { ConfigError, kDatabaseUrlSetting, kUpstreamSetting, type ChangeLogBounds, type Config } from '../config.js';
import { FlagwireError } from '../errors.js';
import { claimDataDir, type DataDirClaim } from './data-dir-claim.js';
import type { Settled, Store, StoreCopy, StoreWriter, WritePath } from './interfaces.js';
import { dataFilePath } from './layout.js';
import { LmdbStore } from './lmdb-store.js';
import type { StoreOptions } from './open.js';
import type { StoreLayout } from './store-layout.js';
import type { ReplicaStatus } from './pg/follower.js';
import { kPgUnavailableDetail, PgSystem } from './pg/pg-system.js';
import { PgWritePath } from './pg/pg-write-path.js';
import { catchUpLatest } from './pg/replica.js';
import { markIntact, takeIntactMark } from './intact-mark.js';
import { verifyDataFile } from './verify.js';
import { LmdbWritePath } from './write-path.js';

export type { ReplicaStatus } from './pg/follower.js';

/** What a server's store follows: PostgreSQL (`databaseUrl`), another Flagwire node (`upstream`: a relay), or neither. */
export type Follows = Pick<Config, 'databaseUrl' | 'upstream'>;

/** The store of `dataDir`, opened for reading and writing with its layout (or `readOnly`: open.ts StoreOptions). */
export function openStore(dataDir: string, options: StoreOptions): Store {
  return LmdbStore.open(dataDir, options);
}

/**
 * The server's start-up check before it opens the store: the data file reads end to end (verify.ts),
 * unless the mark of the last clean stop vouches for it as that stop left it (intact-mark.ts); without PostgreSQL, the data dir is no database's copy (copyWithoutDatabase); with it, a data dir that
 * has never followed it is brought up to date (the schema migrated, a full copy into an empty data dir),
 * and refused when it holds data of its own or PostgreSQL cannot be reached. A copy that has followed it
 * starts as it is, without asking PostgreSQL: the follower catches up right after (/ready waits for
 * that), so a PostgreSQL that hangs delays no start. A relay's data dir (relayRefusal) starts as it is,
 * without asking its upstream, so a relay restarted while its upstream is down serves what it holds.
 */
export async function verifyStore(
  dataDir: string,
  layout: StoreLayout,
  follows: Follows = { databaseUrl: null, upstream: null },
  changeLog?: ChangeLogBounds,
): Promise<void> {
  const file = dataFilePath(dataDir);
  if (!takeIntactMark(file)) await verifyDataFile(file, layout.databases);
  const copy = LmdbStore.open(dataDir, { layout, changeLog });
  const { databaseUrl } = follows;
  if (databaseUrl === null) {
    const refusal = follows.upstream === null ? copyWithoutDatabase(copy, dataDir) : relayRefusal(copy, dataDir);
    await copy.close();
    if (refusal !== null) throw refusal;
    return;
  }
  if (copy.isRelayCopy()) {
    await copy.close();
    throw new ConfigError(
      kDatabaseUrlSetting,
      `data directory ${dataDir} is a relay's copy of another Flagwire node; give a PostgreSQL node an empty data directory (or serve this one with --upstream)`,
    );
  }
  if (copy.replicaOf() !== undefined) {
    await copy.close();
    return;
  }
  const pg = PgSystem.open(databaseUrl, { layout, max: 1 });
  try {
    await catchUpLatest(copy, pg);
  } finally {
    await pg.close();
    await copy.close();
  }
}

/**
 * A server's clean stop, its writer and store closed without a failure: the data file is marked intact
 * as it is now, so that the next start need not read it through (intact-mark.ts).
 */
export function markCleanStop(dataDir: string): void {
  markIntact(dataFilePath(dataDir));
}

/**
 * The one rule for a data dir that is a PostgreSQL database's copy, opened without that database: it
 * is written only by following its database. A write into the copy alone would reach no other node
 * (a token revoked here would keep working everywhere else) and would be overwritten by PostgreSQL's
 * next revisions (audit entries with the same sequence numbers). The refusal, or null for a data dir
 * that is no copy: a configuration error naming the missing setting, as a missing data dir is.
 */
function copyWithoutDatabase(copy: StoreCopy, dataDir: string): ConfigError | null {
  if (copy.isRelayCopy()) {
    return new ConfigError(
      kUpstreamSetting,
      `data directory ${dataDir} is a relay's copy of another Flagwire node and changes only by following it; pass --upstream URL --upstream-token SECRET to serve it, and make changes on the upstream`,
    );
  }
  if (copy.replicaOf() === undefined) return null;
  return new ConfigError(
    kDatabaseUrlSetting,
    `data directory ${dataDir} is the copy of a PostgreSQL database and changes only through it; pass --database URL (or set FLAGWIRE_DATABASE_URL) to write or to serve`,
  );
}

/**
 * A relay's data dir: its own from before (it starts from what it holds, whatever its upstream's
 * state), or an empty one, marked a relay's now. A PostgreSQL node's copy (its revisions are the
 * database's, and a relay's copy is kept by other rules) and a data dir holding data of its own (the
 * first full copy would erase it) are refused: the refusal, or null.
 */
function relayRefusal(copy: StoreCopy, dataDir: string): ConfigError | null {
  if (copy.isRelayCopy()) return null;
  if (copy.replicaOf() !== undefined) {
    return new ConfigError(
      kUpstreamSetting,
      `data directory ${dataDir} is the copy of a PostgreSQL database; a relay needs an empty data directory (or its own from before)`,
    );
  }
  if (copy.holdsConfiguration()) {
    return new ConfigError(
      kUpstreamSetting,
      `data directory ${dataDir} holds data of its own, which a relay's first copy of its upstream would erase; give the relay an empty data directory`,
    );
  }
  copy.markRelayCopy();
  return null;
}

/** The write path of a copy opened without its database: every write refused, nothing written. */
class RefusedWritePath implements WritePath {
  constructor(
    private readonly store: Store,
    private readonly refusal: ConfigError,
  ) {}

  commit<T>(_claim: () => readonly ((writer: StoreWriter) => T)[]): Promise<Settled<T>[]> {
    return Promise.reject(this.refusal);
  }

  /** Nothing is ever committed here: the copy's own. */
  revision(): number {
    return this.store.revision();
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/**
 * The writer's path for `dataDir`'s store: with `databaseUrl`, PostgreSQL then this node's copy, with
 * its follower (`onReplica` hears the copy's state); else the LMDB file. A relay's, which follows
 * another node over the network, is the relay's own (src/relay/relay-write-path.ts).
 * `changeLog`: what its change log keeps (the setting's default when absent), PostgreSQL's too.
 */
export function openWritePath(
  dataDir: string,
  layout: StoreLayout,
  databaseUrl: string | null,
  onReplica: (status: ReplicaStatus) => void,
  changeLog?: ChangeLogBounds,
): WritePath {
  const copy = LmdbStore.open(dataDir, { layout, changeLog });
  if (databaseUrl === null) return new LmdbWritePath(copy);
  const pg = PgSystem.open(databaseUrl, { layout, changeLogBytes: changeLog?.bytes });
  return new PgWritePath(copy, pg, { onReplica });
}

/** A command-line command's store and write path; `copyOnly`: a database's copy opened without it (reads only). */
export interface CliStore {
  store: Store;
  writes: WritePath;
  copyOnly: boolean;
}

/**
 * A command-line command's store and write path. With PostgreSQL, its copy is brought to the latest
 * revision first (so reads see every committed change); throws STORE_UNAVAILABLE when PostgreSQL
 * cannot be reached. Without it, a data dir that is a database's copy is read as it is and every write
 * is refused (copyWithoutDatabase). The write path owns the store: closing it closes both.
 */
export async function openForCli(
  dataDir: string,
  layout: StoreLayout,
  databaseUrl: string | null,
  changeLog?: ChangeLogBounds,
): Promise<CliStore> {
  const copy = LmdbStore.open(dataDir, { layout, changeLog });
  if (databaseUrl === null) {
    const refusal = copyWithoutDatabase(copy, dataDir);
    if (refusal === null) return { store: copy, writes: new LmdbWritePath(copy), copyOnly: false };
    return { store: copy, writes: new RefusedWritePath(copy, refusal), copyOnly: true };
  }
  const pg = PgSystem.open(databaseUrl, { layout, max: 1, changeLogBytes: changeLog?.bytes });
  try {
    await catchUpLatest(copy, pg);
  } catch (err) {
    await pg.close();
    await copy.close();
    throw err;
  }
  return { store: copy, writes: new PgWritePath(copy, pg, { onReplica: null }), copyOnly: false };
}

/**
 * What a console write answers when opening its store failed: PostgreSQL unreachable while the copy was
 * brought up to date is the write's refusal (nothing was changed, and nothing will be), where a read
 * that met it says only that PostgreSQL cannot be reached.
 */
export function writeRefusalOnOpen(err: unknown): unknown {
  return err instanceof FlagwireError && err.code === 'STORE_UNAVAILABLE'
    ? new FlagwireError('STORE_UNAVAILABLE', kPgUnavailableDetail, { cause: err })
    : err;
}

/**
 * Claims `dataDir` for a server's lifetime (data-dir-claim.ts): refused while the data dir is being
 * migrated to PostgreSQL. Taken before the server opens or writes anything there.
 */
export function claimForServer(dataDir: string): DataDirClaim {
  return claimDataDir(dataDir, 'server');
}

/**
 * Copies the data dir's store into an empty PostgreSQL database (revision 1) and makes the data dir
 * that database's copy, so a node can start on it at once. Refuses a database holding any Flagwire
 * data, and a data dir a running server uses (its acknowledged writes would go on into a file that has
 * become a copy, and never reach PostgreSQL); a server does not start on it meanwhile. Everything is
 * exported from one read snapshot.
 */
export async function migrateToPostgres(
  dataDir: string,
  layout: StoreLayout,
  databaseUrl: string,
): Promise<{ revision: number; records: number }> {
  const claim = claimDataDir(dataDir, 'migration');
  try {
    const store = LmdbStore.open(dataDir, { layout });
    const pg = PgSystem.open(databaseUrl, { layout, max: 1 });
    try {
      if (store.replicaOf() !== undefined) {
        throw new FlagwireError(
          'INVALID_REQUEST',
          'this data directory is already the copy of a PostgreSQL database; there is nothing to migrate',
        );
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
  } finally {
    claim.release();
  }
}

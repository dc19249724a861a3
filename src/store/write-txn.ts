// Write transactions on the LMDB file that never start from an out-of-date commit.
//
// LMDB keeps the id of the newest commit in its lock file; a write transaction takes the next id and
// starts from the meta page that id names. The LMDB inside lmdb-js 3.5.6 has every process that opens
// the file store there, without any lock, the id it read from the file's header a moment before
// (mdb_env_open2, liblmdb/mdb.c: `if (env->me_txns) env->me_txns->mti_txnid = meta.mm_txnid;`; the
// upstream bug ITS#9496, fixed there in 2021 by storing it only for MDB_PREVSNAPSHOT, not in lmdb-js's
// copy). When another process commits in that moment (the server writing while a command-line command opens
// the file, or the reverse), the lock file is left naming an older commit. The next write transaction,
// in whichever process, then starts from that older state under an id already used: its commit
// overwrites the newest commit's meta page, so a write that was acknowledged is gone (the writes of
// that commit are no longer reachable), or it fails or crashes the process inside LMDB.
//
// So every write transaction checks, holding the write lock, that its id follows the newest commit in
// the file. When it does not, nothing is written: a short-lived process opens the file (reopen.ts), so
// that LMDB itself stores the newest id, which no commit can change while this transaction holds the
// write lock, and the transaction is run again from there. It costs one id comparison per transaction;
// the repair (a Node start, well under a second) only follows an open that met a commit.
import { fileURLToPath } from 'node:url';
import type { RootDatabase } from 'lmdb';
import { FlagwireError } from '../errors.js';
import { childProcess, storeChildEnv } from './child-env.js';

const kReopen = fileURLToPath(new URL('./reopen.js', import.meta.url));
/** Another open can meet a commit again right after a repair; more than this in a row is not chance. */
const kAttempts = 3;
const kReopenTimeoutMs = 60_000;

/** Thrown inside a write transaction that would have started from an out-of-date commit (nothing written). */
class OutOfDateStart extends Error {}

/** What lmdb-js offers at run time beyond its type declarations. */
interface TxnIds {
  getWriteTxnId(): number;
  env: { info(): { lastTxnId: number } };
}

/**
 * `root.transactionSync(fn)` for a write (fn may return lmdb's ABORT), run only once its transaction
 * follows the newest commit of the data file at `path`. Throws STORE_UNAVAILABLE, with nothing written,
 * when that cannot be brought about.
 */
export function writeTransaction<T>(root: RootDatabase, path: string, fn: () => T): T {
  for (let attempt = 1; ; attempt++) {
    try {
      return root.transactionSync(() => {
        startsFromNewest(root, path);
        return fn();
      });
    } catch (err) {
      if (!(err instanceof OutOfDateStart)) throw err;
      if (attempt === kAttempts) {
        throw new FlagwireError(
          'STORE_UNAVAILABLE',
          "The change could not be written: the data file's lock file names an out-of-date commit and could not be corrected; nothing was changed. Retry later.",
          { cause: err },
        );
      }
    }
  }
}

/**
 * Called right after this process opened the data file for writing. The open stored in the lock file the
 * newest commit as it read it a moment before; a commit in that moment left the lock file naming an older
 * one, and until the next write every reader, in every process, would read that older state (a write
 * already acknowledged, invisible to evaluation). An empty write transaction checks it and has it
 * corrected; it writes nothing (LMDB commits no empty transaction).
 */
export function settleAfterOpen(root: RootDatabase, path: string): void {
  writeTransaction(root, path, () => undefined);
}

/** Returns when this write transaction follows the newest commit; otherwise repairs the lock file and throws. */
function startsFromNewest(root: RootDatabase, path: string): void {
  const ids = root as unknown as TxnIds;
  const txnId = ids.getWriteTxnId();
  // The newer of the file's two meta pages: no other process writes them while this one holds the lock.
  const newest = ids.env.info().lastTxnId;
  if (txnId === newest + 1) return;
  const reopen = childProcess().spawnSync(process.execPath, [kReopen, path], {
    env: storeChildEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: kReopenTimeoutMs,
  });
  const failed = reopen.status === 0 ? '' : `; reopening it failed: ${reopen.error?.message ?? reopen.stderr?.toString().trim() ?? ''}`;
  throw new OutOfDateStart(`write transaction ${txnId} would start from commit ${txnId - 1}, but the newest is ${newest}${failed}`);
}

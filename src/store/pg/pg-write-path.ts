// The write path with PostgreSQL as the system of record. For each group of commands:
//   1. BEGIN, and take the revision row FOR UPDATE: writers of every node wait here, one at a time;
//   2. bring this node's LMDB copy to that revision (the change log, in the same transaction), so
//      the commands read exactly what PostgreSQL holds: every rule (the token cap, unique names, a
//      PATCH that changes nothing) holds across nodes as on one;
//   3. claim the commands and run them against the copy in an LMDB transaction that is rolled back,
//      recording what they write (StoreCopy.rehearse): the same command functions as without PostgreSQL;
//   4. write that change set as the next revision (the records whole; the change log with each record
//      written again as its changed fields, which the other nodes' copies, at the revision before, apply),
//      keep the change log within its bounds, NOTIFY, COMMIT;
//   5. apply it to the copy, then answer: read-your-writes on this node.
// A failure before COMMIT answers 503 and nothing is written; so does a transaction still short of its
// COMMIT at its first caller's deadline (a PostgreSQL that stopped answering mid-way): its connection
// is dropped, so PostgreSQL rolls it back, and a refusal never turns into a change. A connection lost during COMMIT leaves
// the outcome unknown: the writer asks PostgreSQL (by the transaction's write id) until it can tell,
// so an answer is not a guess; only if PostgreSQL stays away for kResolveForMs is the answer a 503
// that says the outcome is unknown.
import type { Settled, StoreCopy, StoreWriter, WritePath } from '../interfaces.js';
import type { Change, LoggedChange } from '../changes.js';
import { FlagwireError } from '../../errors.js';
import { StoreOpenError } from '../data-file.js';
import { Follower, type ReplicaStatus } from './follower.js';
import { CommitUnknown, kPgUnavailableDetail, type PgSystem } from './pg-system.js';
import { catchUp } from './replica.js';

const kResolveRetryMs = 500;
/** How long a writer whose COMMIT's outcome is unknown keeps asking PostgreSQL before it answers so. */
const kResolveForMs = 30_000;
const kCommitUnknownDetail =
  'PostgreSQL went away while this change was being committed, and has not come back to say whether it was: read the record back before retrying.';

export class PgWritePath implements WritePath {
  private readonly follower: Follower | null;
  /** revision(): set by each commit (the follower, in this thread too, may move the copy on meanwhile). */
  private lastRevision = 0;

  /**
   * Owns `copy` and `pg` (close closes them). `onReplica`: a server's writer runs the follower, which
   * reports the copy's state there; null for a command-line command, which caught up once when it opened.
   */
  constructor(
    private readonly copy: StoreCopy,
    private readonly pg: PgSystem,
    options: { onReplica: ((status: ReplicaStatus) => void) | null },
  ) {
    this.follower = options.onReplica === null ? null : new Follower(copy, pg, options.onReplica);
    this.follower?.start();
  }

  async commit<T>(claim: () => readonly ((writer: StoreWriter) => T)[], cutOff?: AbortSignal): Promise<Settled<T>[]> {
    const txn = await this.pg.begin();
    let settled: Settled<T>[];
    let changes: Change[];
    let logged: LoggedChange[];
    try {
      await catchUp(this.copy, txn, await this.pg.databaseId(), txn.revision);
      ({ settled, changes, logged } = this.copy.rehearse(claim()));
    } catch (err) {
      await txn.rollback();
      if (err instanceof FlagwireError || err instanceof StoreOpenError) throw err;
      throw new FlagwireError('STORE_UNAVAILABLE', kPgUnavailableDetail, { cause: err });
    }
    if (changes.length === 0) {
      await txn.rollback();
      // Nothing to commit: the commands read the copy at the revision the lock was taken at.
      this.lastRevision = txn.revision;
      return settled;
    }
    let revision: number;
    try {
      revision = await txn.commit(changes, logged, cutOff);
    } catch (err) {
      if (!(err instanceof CommitUnknown)) throw err;
      revision = await this.resolve(txn.writeId, err);
    }
    this.copy.applyRevisions([{ revision, changes }]);
    this.lastRevision = revision;
    return settled;
  }

  revision(): number {
    return this.lastRevision;
  }

  /**
   * After a connection lost during COMMIT: asks PostgreSQL whether the write committed, for up to
   * kResolveForMs. If PostgreSQL stays away that long, the answer says plainly that the outcome is
   * unknown (the one case where a 503 may have been applied; the follower applies it if it was).
   */
  private async resolve(writeId: string, lost: CommitUnknown): Promise<number> {
    const until = Date.now() + kResolveForMs;
    for (;;) {
      try {
        const revision = await this.pg.committed(writeId);
        if (revision === null) throw new FlagwireError('STORE_UNAVAILABLE', kPgUnavailableDetail, { cause: lost });
        return revision;
      } catch (err) {
        if (err instanceof FlagwireError) throw err;
        if (Date.now() > until) throw new FlagwireError('STORE_UNAVAILABLE', kCommitUnknownDetail, { cause: lost });
        await new Promise((resolve) => setTimeout(resolve, kResolveRetryMs));
      }
    }
  }

  async close(): Promise<void> {
    await this.follower?.stop();
    await this.pg.close();
    await this.copy.close();
  }
}

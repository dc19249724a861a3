// The change log: the change set of each of the store's last revisions (layout.ts, changeLog), every
// kind of record in it, written in the transaction that makes the revision: by applyRevisions on a copy
// (lmdb-replica.ts: PostgreSQL's revisions, or an upstream's on a relay) and by the embedded write path
// (lmdb-store.ts commitEach: the revision is the configSeq the commit moves to). Bounded: a revision
// past the last `keep` is dropped in the transaction that logs a newer one. A full copy (replaceAll)
// clears it: what came before the copy is no longer this store's history. Read by the relay service
// (src/relay/) from the memory map of any thread, with revisionsAfter.
//
//   changeLog   revision -> Change[]   consecutive numbers, oldest first; the newest is the store's revision
import type { Database } from 'lmdb';
import type { Change, Revision } from './changes.js';

export class ChangeLog {
  /**
   * `db`: absent in a read-only open of a file older than schema 10 (which reads as a log that reaches
   * nothing); `keep`: the revisions kept (FLAGWIRE_CHANGE_LOG_REVISIONS).
   */
  constructor(
    private readonly db: Database<Change[], number> | undefined,
    private readonly keep: number,
  ) {}

  /** Logs `revision`'s change set and drops what falls past the bound; inside the transaction that makes it. */
  append(revision: number, changes: readonly Change[]): void {
    const db = this.writable();
    db.putSync(revision, changes as Change[]);
    // Usually one key, the revision that just fell out; more after the bound was lowered.
    for (const old of [...db.getKeys({ end: revision - this.keep + 1 })]) db.removeSync(old);
  }

  /** Forgets every revision (a full copy replaces the store's history); inside a transaction. */
  clear(): void {
    const db = this.writable();
    for (const key of [...db.getKeys()]) db.removeSync(key);
  }

  /**
   * The revisions after `revision` up to `current` (the store's revision, read in the same snapshot),
   * oldest first (at most `limit` of them, when given): [] when `revision` is `current`; null when the log no longer
   * reaches `revision` + 1, has a hole before `current` (a commit no write path logged), or `revision`
   * is past `current` (a revision this store never reached, or of a state it has since left: a restored
   * backup).
   */
  after(revision: number, current: number, limit?: number): Revision[] | null {
    if (revision === current) return [];
    if (revision > current || this.db === undefined) return null;
    const out: Revision[] = [];
    let next = revision + 1;
    for (const { key, value } of this.db.getRange({ start: next, end: current + 1, limit })) {
      if (key !== next) return null;
      out.push({ revision: key, changes: value });
      next++;
    }
    return next === current + 1 || out.length === limit ? out : null;
  }

  private writable(): Database<Change[], number> {
    if (this.db === undefined) throw new Error('the change log is written only by a store opened for writing');
    return this.db;
  }
}

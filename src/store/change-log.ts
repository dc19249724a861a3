// The change log: the change set of each of the store's last revisions (layout.ts, changeLog), every
// kind of record in it, written in the transaction that makes the revision: by applyRevisions on a copy
// (lmdb-replica.ts: PostgreSQL's revisions, or an upstream's on a relay) and by the embedded write path
// (lmdb-store.ts commitEach: the revision is the configSeq the commit moves to). Bounded: a revision
// past the last `keep` is dropped in the transaction that logs a newer one. A full copy (replaceAll)
// clears it: what came before the copy is no longer this store's history. Read by the relay service
// (src/relay/) from the memory map of any thread, with revisionsAfter.
//
//   meta  ['changeLog', revision] -> Change[]   consecutive numbers, oldest first; the newest is the store's revision
//
// In meta, not a database of its own: a write transaction dirties meta anyway (configSeq, revision), and a
// commit that fails (a file system turned read-only) after dirtying one more database made LMDB leave
// readers of the memory map a page that crashes them (SIGSEGV in mdb_page_search_root on the main
// thread's next read; test/reliability/storage.test.ts caught it, at every run, with a database of its own).
import type { Database } from 'lmdb';
import type { Change, Revision } from './changes.js';

const kLogKey = 'changeLog';
type LogKey = [typeof kLogKey, number];
/** Every revision of the log lies between these keys. */
const kFirst: LogKey = [kLogKey, 0];
const kPastLast: LogKey = [kLogKey, Number.MAX_SAFE_INTEGER];

export class ChangeLog {
  private readonly db: Database<Change[], LogKey>;

  /** `meta`: the store's meta database, which holds the log; `keep`: the revisions kept (FLAGWIRE_CHANGE_LOG_REVISIONS). */
  constructor(
    meta: Database<unknown, string>,
    private readonly keep: number,
  ) {
    this.db = meta as unknown as Database<Change[], LogKey>;
  }

  /** Logs `revision`'s change set and drops what falls past the bound; inside the transaction that makes it. */
  append(revision: number, changes: readonly Change[]): void {
    this.db.putSync([kLogKey, revision], changes as Change[]);
    // Usually one key, the revision that just fell out; more after the bound was lowered.
    for (const old of [...this.db.getKeys({ start: kFirst, end: [kLogKey, revision - this.keep + 1] })]) this.db.removeSync(old);
  }

  /** Forgets every revision (a full copy replaces the store's history); inside a transaction. */
  clear(): void {
    for (const key of [...this.db.getKeys({ start: kFirst, end: kPastLast })]) this.db.removeSync(key);
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
    if (revision > current) return null;
    const out: Revision[] = [];
    let next = revision + 1;
    for (const { key, value } of this.db.getRange({ start: [kLogKey, next], end: [kLogKey, current + 1], limit })) {
      if (key[1] !== next) return null;
      out.push({ revision: next, changes: value });
      next++;
    }
    return next === current + 1 || out.length === limit ? out : null;
  }
}

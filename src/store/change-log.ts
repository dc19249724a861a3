// The change log: what each of the store's last revisions changed of the relayed kinds (the only ones
// its readers, relays, are sent: store-layout.ts relayedChanges), written in the transaction that makes
// the revision: by applyRevisions on a copy (lmdb-replica.ts: PostgreSQL's revisions, or an upstream's
// on a relay) and by the embedded write path (lmdb-store.ts commitEach: the revision is the configSeq
// the commit moves to). A record written again is logged as its changed fields (record-patch.ts), so a
// revision's size follows what it changed, not the size of what it touched. Bounded by revisions and by
// bytes (FLAGWIRE_CHANGE_LOG_REVISIONS, FLAGWIRE_CHANGE_LOG_BYTES): the oldest revisions are dropped in
// the transaction that logs a newer one until both hold; the newest is always kept. A full copy
// (replaceAll) clears it: what came before the copy is no longer this store's history. Read by the
// relay service (src/relay/) from the memory map of any thread, with revisionsAfter.
//
//   meta  ['changeLog', revision] -> bytes    msgpack of the revision's LoggedChange[]; consecutive
//                                              numbers, oldest first; the newest is the store's revision
//         'changeLogBytes' -> number           the entries' bytes together: what the byte bound counts
//
// In meta, not a database of its own: a write transaction dirties meta anyway (configSeq, revision), and a
// commit that fails (a file system turned read-only) after dirtying one more database made LMDB leave
// readers of the memory map a page that crashes them (SIGSEGV in mdb_page_search_root on the main
// thread's next read; test/reliability/storage.test.ts caught it, at every run, with a database of its own).
import type { Database } from 'lmdb';
import { Packr } from 'msgpackr';
import type { ChangeLogBounds } from '../config.js';
import type { LoggedChange, Revision } from './changes.js';
import type { ChangeLogUsage } from './interfaces.js';

const kLogKey = 'changeLog';
const kBytesKey = 'changeLogBytes';
type LogKey = [typeof kLogKey, number];
/** Every revision of the log lies between these keys. */
const kFirst: LogKey = [kLogKey, 0];
const kPastLast: LogKey = [kLogKey, Number.MAX_SAFE_INTEGER];
/** As PostgreSQL's change sets (pg-system.ts): a value reads back exactly as it was written. */
const packr = new Packr({ useRecords: false });

export class ChangeLog {
  private readonly db: Database<Uint8Array, LogKey>;

  /** `meta`: the store's meta database, which holds the log; `bounds`: what it keeps. */
  constructor(
    private readonly meta: Database<unknown, string>,
    private readonly bounds: ChangeLogBounds,
  ) {
    this.db = meta as unknown as Database<Uint8Array, LogKey>;
  }

  /** Logs `revision`'s changes and drops the oldest revisions past the bounds; inside the transaction that makes it. */
  append(revision: number, changes: readonly LoggedChange[]): void {
    const entry = packr.pack(changes);
    this.db.putSync([kLogKey, revision], entry);
    let bytes = this.bytes() + entry.length;
    // Usually none or one, the revision that just fell out; more after a large revision or a bound lowered.
    // Keys first: an entry is read (for its size) only when it is dropped.
    const dropped: LogKey[] = [];
    for (const key of this.db.getKeys({ start: kFirst, end: [kLogKey, revision] })) {
      if (key[1] > revision - this.bounds.revisions && bytes <= this.bounds.bytes) break;
      dropped.push(key);
      bytes -= this.db.get(key)?.length ?? 0;
    }
    for (const key of dropped) this.db.removeSync(key);
    this.meta.putSync(kBytesKey, bytes);
  }

  /** Forgets every revision (a full copy replaces the store's history); inside a transaction. */
  clear(): void {
    for (const key of [...this.db.getKeys({ start: kFirst, end: kPastLast })]) this.db.removeSync(key);
    this.meta.removeSync(kBytesKey);
  }

  /** The revisions it holds (counted: for tests and the bench, not the write path) and their bytes, in the reader's snapshot. */
  usage(): ChangeLogUsage {
    return { revisions: this.db.getKeysCount({ start: kFirst, end: kPastLast }), bytes: this.bytes() };
  }

  private bytes(): number {
    return (this.meta.get(kBytesKey) as number | undefined) ?? 0;
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
      // An entry that is not bytes was logged by an older schema (read-only, before the writer migrates it): a hole.
      if (key[1] !== next || !(value instanceof Uint8Array)) return null;
      out.push({ revision: next, changes: packr.unpack(value) as LoggedChange[] });
      next++;
    }
    return next === current + 1 || out.length === limit ? out : null;
  }
}

/**
 * Schema 12 to 13, in the migration's transaction: each entry of an older log (a revision's whole change
 * set, every kind in it) rewritten as this one logs it, with only its changes of kinds in `relayed`, and
 * their bytes counted. Its records stay whole: a whole change is one this log may hold.
 */
export function repackOlderLog(meta: Database<unknown, string>, relayed: ReadonlySet<string>): void {
  const db = meta as unknown as Database<unknown, LogKey>;
  let bytes = 0;
  // One entry read at a time: an older log may hold gigabytes.
  for (const key of [...db.getKeys({ start: kFirst, end: kPastLast })]) {
    const value = db.get(key);
    const changes = value instanceof Uint8Array ? (packr.unpack(value) as LoggedChange[]) : (value as LoggedChange[]);
    const entry = packr.pack(changes.filter((change) => relayed.has(change.kind)));
    db.putSync(key, entry);
    bytes += entry.length;
  }
  meta.putSync(kBytesKey, bytes);
}

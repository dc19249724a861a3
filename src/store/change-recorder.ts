// Change recording: while LmdbStore.rehearse or commitEach runs, each record write (lmdb-keyed.ts)
// hands the change it made to the recorder, which collects them as the change set of a revision
// (changes.ts): the one PostgreSQL's write path commits, or the one the embedded write path logs
// (change-log.ts). Otherwise the recorder is idle and a write records nothing.
import type { Change } from './changes.js';

export class ChangeRecorder {
  /** The change set being collected; null while idle. */
  private changes: Change[] | null = null;
  /** What watch() collects, innermost last: each watcher sees every change made while it runs. */
  private readonly watchers: Change[][] = [];
  /** The version each change of the set being collected wrote over, where the write read it (baseOf). */
  private readonly bases = new WeakMap<Change, unknown>();

  /** Whether a change set is being collected (recordDuring): a write then reads the version it replaces (baseOf). */
  get collecting(): boolean {
    return this.changes !== null;
  }

  /**
   * Adds `change` to the change set being collected, if any, and to every watcher's. `base`: the record
   * it wrote over, read by the write while collecting (the change log keeps the fields that changed).
   */
  record(change: Change, base?: unknown): void {
    if (base !== undefined && this.changes !== null) this.bases.set(change, base);
    this.changes?.push(change);
    for (const watched of this.watchers) watched.push(change);
  }

  /** The record `change` wrote over, when its write read it (record); undefined: a new record, or not read. */
  baseOf(change: Change): unknown {
    return this.bases.get(change);
  }

  /**
   * What `fn` writes, whether or not a change set is being collected (LmdbStore.tentatively: the
   * approvals gate reads what a command would change before it is kept).
   */
  watch<T>(fn: () => T): { value: T; changes: Change[] } {
    const changes: Change[] = [];
    this.watchers.push(changes);
    try {
      return { value: fn(), changes };
    } finally {
      this.watchers.pop();
    }
  }

  /**
   * Collects what `fn` writes; returns the change set. `fn` is handed the set as it grows: the embedded
   * write path logs it inside the transaction it records (lmdb-store.ts commitEach).
   */
  recordDuring(fn: (changes: readonly Change[]) => void): Change[] {
    const changes: Change[] = [];
    this.changes = changes;
    try {
      fn(changes);
    } finally {
      this.changes = null;
    }
    return changes;
  }

  /** How much is collected so far, in the change set and by each watcher: dropBack(mark) forgets what is recorded after it. */
  mark(): RecorderMark {
    return { changes: this.changes?.length ?? 0, watched: this.watchers.map((w) => w.length) };
  }

  /** Forgets the changes recorded since `mark` (a function that threw, or was rolled back: its writes undone). */
  dropBack(mark: RecorderMark): void {
    if (this.changes !== null) this.changes.length = mark.changes;
    mark.watched.forEach((length, i) => {
      const watched = this.watchers[i];
      if (watched !== undefined) watched.length = length;
    });
  }
}

/** A point in what the recorder collected (ChangeRecorder.mark). */
export interface RecorderMark {
  readonly changes: number;
  /** Each watcher open at the mark, outermost first. */
  readonly watched: readonly number[];
}

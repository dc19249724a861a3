// Change recording: while LmdbStore.rehearse or commitEach runs, each record write (lmdb-records.ts)
// hands the change it made to the recorder, which collects them as the change set of a revision
// (changes.ts): the one PostgreSQL's write path commits, or the one the embedded write path logs
// (change-log.ts). Otherwise the recorder is idle and a write records nothing.
import type { Change } from './changes.js';

export class ChangeRecorder {
  /** The change set being collected; null while idle. */
  private changes: Change[] | null = null;

  /** Adds `change` to the change set being collected, if any. */
  record(change: Change): void {
    this.changes?.push(change);
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

  /** How much is collected so far: dropBack(mark) forgets what is recorded after it. */
  mark(): number {
    return this.changes?.length ?? 0;
  }

  /** Forgets the changes recorded since `mark` (a function that threw, its writes rolled back). */
  dropBack(mark: number): void {
    if (this.changes !== null) this.changes.length = mark;
  }
}

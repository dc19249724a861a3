// When a front end may start its events thread again after it died (event-counter.ts). A thread dies
// only of a fault of ours (a bug, never a client's input, which is refused in words), and may die again
// on the next batch: restarting it for every batch would let one poisoned batch, sent again and again,
// cost every other batch in flight with it. So the first death is restarted by the next batch, and each
// further death in a row waits longer before the next start (1 s, 2 s, 4 s, ... 60 s), batches refused
// meanwhile with 503 and Retry-After; a thread that ran a minute without dying ends the row.

/** The longest wait before a start, and how long a thread must run for its death to start a new row. */
const kMaxWaitMs = 60_000;

export class ThreadRestarts {
  private deaths = 0;
  private startedAt = 0;
  private notBefore = 0;

  /** A thread started at `now`. */
  started(now: number): void {
    this.startedAt = now;
  }

  /** The thread died at `now`: when the next may start. */
  died(now: number): void {
    this.deaths = now - this.startedAt >= kMaxWaitMs ? 1 : this.deaths + 1;
    this.notBefore = this.deaths === 1 ? now : now + Math.min(kMaxWaitMs, 1000 * 2 ** (this.deaths - 2));
  }

  /** Whole seconds until a thread may start at `now`; 0: it may now. */
  waitSeconds(now: number): number {
    return Math.max(0, Math.ceil((this.notBefore - now) / 1000));
  }
}

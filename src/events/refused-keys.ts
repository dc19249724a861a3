// The client keys a front-end thread refuses before it reads their batches: once its events thread's
// rate refused a key's project (event-rate.ts), until the time that thread would read that project's
// next batch, the key's batches are answered 429 from their headers, with no body read, no key
// authenticated and no message to the thread: a flood's bodies received on the front end's thread
// before the thread refused them pushed another project's evaluations' p99 far past its quiet figure
// (bench/RESULTS.md, events.bench).
//
// Keyed by the client key's secret as sent (a map look-up: no hash, no store read on the way in), and
// filled only from batches the key authenticated and the rate refused, so a key that names no project
// never enters it; held to kMaxRefusedKeys whatever clients do. Forgetting a key costs only speed: its
// next batch goes to the thread, which refuses it as before.

/** The most keys held: past it, the expired go, then the oldest (their next batch reaches the thread). */
export const kMaxRefusedKeys = 1000;

export class RefusedKeys {
  /** The secret's refusal ends at this time (ms); in the order they were refused. */
  private readonly until = new Map<string, number>();

  constructor(private readonly max = kMaxRefusedKeys) {}

  /** How many keys are held now. */
  get size(): number {
    return this.until.size;
  }

  /** The seconds of Retry-After for a batch sent with `secret` at `now`; 0 unless it is refused. */
  retryAfter(secret: string, now: number): number {
    const until = this.until.get(secret);
    if (until === undefined) return 0;
    if (until <= now) {
      this.until.delete(secret);
      return 0;
    }
    // As EventRate words its wait: whole seconds, at least one, never before the bucket holds the batch.
    return Math.max(1, Math.ceil((until - now) / 1000));
  }

  /** `secret`'s project was refused by the rate until `until` (ms), at `now`. */
  refuse(secret: string, until: number, now: number): void {
    this.until.delete(secret);
    if (this.until.size >= this.max) this.evict(now);
    this.until.set(secret, until);
  }

  /** A batch sent with `secret` passed the rate: its project may send again (its bucket needs one event). */
  admit(secret: string): void {
    this.until.delete(secret);
  }

  private evict(now: number): void {
    for (const [secret, until] of this.until) if (until <= now) this.until.delete(secret);
    if (this.until.size < this.max) return;
    const oldest = this.until.keys().next().value as string;
    this.until.delete(oldest);
  }
}

// Failed-authentication lockout (spec: Limits): per IP, a fixed 60 s window from the first failure;
// past `limit` failures every request from that IP is refused until the window ends, valid token or
// not. Only requests with no token, a malformed token or an unknown token count.
//
// Memory is bounded: at most `maxEntries` (100,000) addresses are tracked, about 80 bytes each with
// their table entry. Table and counts are in shared memory, under the table's lock, so every front-end
// thread counts into the same ones (one process is one server instance; src/http/address-table.ts). The AddressTable keeps them in order of window start (an address that fails again
// after its window ended moves to the back), so ended windows are at the front and each recorded
// failure drops up to two of them there: O(1), no pause (a scan of the whole table once a minute
// stalled the event loop for up to 0.3 s at 100,000 entries). When the table is full, the address
// whose window started first is evicted, with its count and any lockout: freeing one lockout that way
// takes failures from 100,000 other addresses within a minute.
import { FlagwireError } from '../errors.js';
import { AddressCounters, type AddressCountersState } from './address-counters.js';
import type { AddressTable } from './address-table.js';

/** The lockout's shared memory and limit: cloned to every front-end thread, which attaches to it. */
export interface AuthFailuresState {
  readonly limit: number;
  /** The fixed window from the first failure (the spec's 60 s for the Management API). */
  readonly windowMs: number;
  /** Per address: the window's start (the time) and the failures counted in it. */
  readonly counters: AddressCountersState;
}

export class AuthFailures {
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly table: AddressTable;
  private readonly starts: Float64Array;
  private readonly counts: Uint32Array;

  /** A new lockout allowing `limit` failures per window, in new shared memory. */
  static create(limit: number, maxEntries = 100_000, windowMs = 60_000): AuthFailures {
    return new AuthFailures({ limit, windowMs, counters: AddressCounters.create(maxEntries, 1).state });
  }

  /** One more handle on a lockout's shared `state`. */
  constructor(readonly state: AuthFailuresState) {
    this.limit = this.state.limit;
    this.windowMs = this.state.windowMs;
    const counters = new AddressCounters(this.state.counters);
    this.table = counters.table;
    this.starts = counters.times;
    this.counts = counters.counts;
  }

  get size(): number {
    return this.table.size;
  }

  get maxEntries(): number {
    return this.table.maxEntries;
  }

  /** Throws the 429 while `ip` is locked out. */
  check(ip: string, now: number): void {
    if (this.isLocked(ip, now)) throw lockedOut();
  }

  private isLocked(key: string, now: number): boolean {
    return this.table.withLock(() => {
      const slot = this.table.slot(key);
      return slot !== undefined && now - this.starts[slot]! < this.windowMs && this.counts[slot]! >= this.limit;
    });
  }

  /**
   * Counts one failure; throws the 429 instead when the address had already reached the limit, which
   * another front-end thread's request can make happen between this request's check() and now: so
   * exactly `limit` failures are answered as failures, however requests interleave.
   */
  record(ip: string, now: number): void {
    if (this.reserve(ip, now) === null) throw lockedOut();
  }

  /**
   * Counts one attempt of `key` (an address, or any other key: the web console counts accounts too),
   * possibly before its outcome is known, and answers the start of the window it was counted in (for
   * giveBack), or null when `key` had already reached the limit. Counting first is what bounds the
   * attempts checked at once: check-then-count lets every concurrent attempt through.
   */
  reserve(key: string, now: number): number | null {
    return this.table.withLock(() => this.recordLocked(key, now));
  }

  /**
   * Uncounts an attempt that reserve() counted and that turned out not to be a failure. Nothing when its
   * window has ended since (the new window never counted it); the entry goes once nothing is counted in
   * it, so the next window starts at the next failure, as when nothing had been reserved.
   */
  giveBack(key: string, windowStart: number): void {
    this.table.withLock(() => {
      const slot = this.table.slot(key);
      if (slot === undefined || this.starts[slot] !== windowStart || this.counts[slot]! === 0) return;
      this.counts[slot]--;
      if (this.counts[slot] === 0) this.table.remove(slot);
    });
  }

  private recordLocked(ip: string, now: number): number | null {
    this.dropEnded(now);
    let slot = this.table.slot(ip);
    if (slot !== undefined && now - this.starts[slot]! < this.windowMs) {
      if (this.counts[slot]! >= this.limit) return null;
      this.counts[slot]++;
      return this.starts[slot]!;
    }
    if (slot === undefined) slot = this.table.add(ip);
    else this.table.touch(slot);
    this.starts[slot] = now;
    this.counts[slot] = 1;
    return now;
  }

  /** Drops up to two addresses whose window has ended, oldest window first. */
  private dropEnded(now: number): void {
    for (let n = 0; n < 2; n++) {
      const slot = this.table.first();
      if (slot === -1 || now - this.starts[slot]! < this.windowMs) return;
      this.table.remove(slot);
    }
  }
}

function lockedOut(): FlagwireError {
  return new FlagwireError(
    'TOO_MANY_AUTH_FAILURES',
    'Too many failed authentication attempts from this address; wait a minute before retrying.',
  );
}

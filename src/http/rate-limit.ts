// Per-IP request rate limit (spec: Limits, request rate). Each address has a ring of seven counters,
// one per 10-second bucket of the clock (bucket = floor(now / 10 s)). The same limiter, with a weight per
// request and a shorter window, is each credential's budget of evaluation body bytes (src/http/body.ts
// BodyBudgets): a request then counts its bytes, and the two upper bounds below hold for bytes as for
// requests.
//
//   counts:  [ c0 | c1 | c2 | c3 | c4 | c5 | c6 ]    admitted requests; bucket b lives in slot b % 7
//              └─ b-6 ─┘ └──────── b-5 … b ────────┘  b: the current bucket, partly elapsed
//
// A request is admitted when the current bucket and the five before it (the last 50-60 s) hold fewer
// than `limit`, and the current bucket and the six before it (the last 60-70 s) hold fewer than
// `burstLimit` = limit + ceil(limit / 6). Both checks are needed. The first alone lets `limit` sent at
// the very end of one bucket and `limit` more at the end of the sixth bucket after it through in one
// 60 s span (2x, the worst case of a one-counter sliding window too); the second alone would let a
// burst of 700 through, not 600, or, bounding 60-70 s at 600, refuse a steady client at 600/min.
// Together:
//   - at most `limit` requests are admitted in any 50 s span (any such span lies within b-5 … b of its
//     last request), so a burst is cut at `limit`: the 601st request of a burst is refused;
//   - at most `burstLimit` (700 for 600) in any 60 s span, which lies within b-6 … b; this is reached;
//   - a client sending at a steady `limit` per minute or slower is never refused (a 60 s span holds
//     at most `limit` of its requests, a 70 s span at most ceil(7 * limit / 6) counting the new one).
// After a refusal, waiting 60 s always succeeds: by then b-5 … b hold nothing the client sent.
// test/http/rate-limit.test.ts checks these bounds with adversarial bursts at bucket edges.
//
// O(1) per request, no allocation and no pause: one hash lookup, at most seven counters cleared, and at
// most two idle entries dropped. The rings live in two typed arrays indexed by the slot number an
// AddressTable gives each address, in shared memory like the table: every front-end thread counts into
// the same rings under the table's lock (address-table.ts), so the limit holds per process however the
// connections are spread (about 110 bytes per tracked address with its table entry; the pages are
// committed as addresses arrive, bench/rate-limit.bench.ts). The table keeps addresses in order of
// last activity: an address moves to the back when its bucket moves on (at most once per 10 s). So
// idle entries (seven buckets without a request: only zeros) are at the front, and each request
// drops up to two of them there; a periodic scan of the whole table instead stalled the event loop
// for up to 0.3 s per 100,000 entries. Memory is bounded: at most `maxEntries` addresses are tracked;
// when the table is full, the least recently active address is evicted and starts afresh.
import { AddressCounters, type AddressCountersState } from './address-counters.js';
import type { AddressTable } from './address-table.js';

const kSlots = 7;
/** Per slot in `counts`: the seven buckets, then their sum. */
const kStride = 8;
const kSum = 7;

export interface RateLimiterOptions {
  limit: number;
  /** The window `limit` applies to; buckets are a sixth of it. */
  windowMs?: number;
  maxEntries?: number;
}

/** A limiter's shared memory and settings: cloned to every front-end thread, which attaches to it. */
export interface RateLimiterState {
  readonly limit: number;
  readonly windowMs: number;
  /** Per address: the newest bucket counted (the time), and the ring of counts with their sum. */
  readonly counters: AddressCountersState;
}

export class RateLimiter {
  readonly limit: number;
  /** The most admitted in any one window: limit + ceil(limit / 6). */
  readonly burstLimit: number;
  readonly windowMs: number;
  readonly bucketMs: number;
  private readonly table: AddressTable;
  /** The newest bucket counted in each slot's ring. */
  private readonly buckets: Float64Array;
  private readonly counts: Uint32Array;

  /** A new limiter, in new shared memory. */
  static create(options: RateLimiterOptions): RateLimiter {
    const counters = AddressCounters.create(options.maxEntries ?? 100_000, kStride).state;
    return new RateLimiter({ limit: options.limit, windowMs: options.windowMs ?? 60_000, counters });
  }

  /** One more handle on a limiter's shared `state`. */
  constructor(readonly state: RateLimiterState) {
    this.limit = this.state.limit;
    this.burstLimit = this.limit + Math.ceil(this.limit / 6);
    this.windowMs = this.state.windowMs;
    this.bucketMs = this.windowMs / 6;
    const counters = new AddressCounters(this.state.counters);
    this.table = counters.table;
    this.buckets = counters.times;
    this.counts = counters.counts;
  }

  get size(): number {
    return this.table.size;
  }

  get maxEntries(): number {
    return this.table.maxEntries;
  }

  /** Counts one request of `weight` (1, or its bytes) from `key`; false when it is over the limit (and then it is not counted). */
  take(key: string, now: number, weight = 1): boolean {
    return this.table.withLock(() => this.takeLocked(key, now, weight));
  }

  private takeLocked(key: string, now: number, weight: number): boolean {
    const bucket = Math.floor(now / this.bucketMs);
    this.dropIdle(bucket);
    let slot = this.table.slot(key);
    if (slot === undefined) {
      slot = this.table.add(key);
      const base = slot * kStride;
      this.counts.fill(0, base, base + kStride);
      this.buckets[slot] = bucket;
      return this.admit(base, bucket, weight);
    }
    const base = slot * kStride;
    const newest = this.buckets[slot]!;
    if (bucket > newest) {
      // Clear the buckets that went by without a request, at most the whole ring.
      const counts = this.counts;
      const last = Math.min(bucket, newest + kSlots);
      for (let b = newest + 1; b <= last; b++) {
        const i = base + (b % kSlots);
        counts[base + kSum] -= counts[i]!;
        counts[i] = 0;
      }
      this.buckets[slot] = bucket;
      this.table.touch(slot);
      return this.admit(base, bucket, weight);
    }
    // A clock that stepped back counts into the newest bucket seen, so the ring never runs backwards.
    return this.admit(base, newest, weight);
  }

  private admit(base: number, bucket: number, weight: number): boolean {
    const counts = this.counts;
    const inSeven = counts[base + kSum]!;
    // The slot of bucket b - 6 is (b + 1) % 7.
    const inSix = inSeven - counts[base + ((bucket + 1) % kSlots)]!;
    // For a weight of 1: inSix >= limit or inSeven >= burstLimit, as the bounds above say.
    if (inSix + weight > this.limit || inSeven + weight > this.burstLimit) return false;
    counts[base + (bucket % kSlots)] += weight;
    counts[base + kSum] = inSeven + weight;
    return true;
  }

  /** Drops up to two addresses idle for seven buckets, least recently active first. */
  private dropIdle(bucket: number): void {
    for (let n = 0; n < 2; n++) {
      const slot = this.table.first();
      if (slot === -1 || this.buckets[slot]! > bucket - kSlots) return;
      this.table.remove(slot);
    }
  }
}

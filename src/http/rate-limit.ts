// Per-IP request rate limit (spec: Limits, request rate). Each address has a ring of seven counters,
// one per 10-second bucket of the clock (bucket = floor(now / 10 s)):
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
// O(1) per request: one Map lookup, at most seven counters cleared when time moves on, no allocation.
// The rings live in two typed arrays indexed by a slot number the Map gives each address (the slab
// grows by doubling up to `maxEntries`), about 40 bytes per address beside its Map entry
// (bench/rate-limit.bench.ts). Memory is bounded: at most `maxEntries` addresses are tracked. Entries
// idle for seven buckets hold only zeros and are swept every window, their slots reused; when the table
// is full, the longest-tracked entry is evicted (Map keeps insertion order, so that is the first key:
// O(1)). An evicted address starts afresh.

const kSlots = 7;
/** Per slot in `counts`: the seven buckets, then their sum. */
const kStride = 8;
const kSum = 7;
const kInitialSlots = 256;

export interface RateLimiterOptions {
  limit: number;
  /** The window `limit` applies to; buckets are a sixth of it. */
  windowMs?: number;
  maxEntries?: number;
}

export class RateLimiter {
  readonly limit: number;
  /** The most admitted in any one window: limit + ceil(limit / 6). */
  readonly burstLimit: number;
  readonly windowMs: number;
  readonly bucketMs: number;
  readonly maxEntries: number;
  private readonly slotOf = new Map<string, number>();
  /** The newest bucket counted in each slot's ring. */
  private buckets: Float64Array;
  private counts: Uint32Array;
  private readonly freeSlots: number[] = [];
  private usedSlots = 0;
  private lastSweep = 0;

  constructor(options: RateLimiterOptions) {
    this.limit = options.limit;
    this.burstLimit = options.limit + Math.ceil(options.limit / 6);
    this.windowMs = options.windowMs ?? 60_000;
    this.bucketMs = this.windowMs / 6;
    this.maxEntries = options.maxEntries ?? 100_000;
    const slots = Math.min(kInitialSlots, this.maxEntries);
    this.buckets = new Float64Array(slots);
    this.counts = new Uint32Array(slots * kStride);
  }

  get size(): number {
    return this.slotOf.size;
  }

  /** Counts one request from `key`; false when it is over the limit (and then it is not counted). */
  take(key: string, now: number): boolean {
    if (now - this.lastSweep >= this.windowMs) this.sweep(now);
    const bucket = Math.floor(now / this.bucketMs);
    const counts = this.counts;
    let slot = this.slotOf.get(key);
    let base: number;
    if (slot === undefined) {
      slot = this.newSlot();
      this.slotOf.set(key, slot);
      base = slot * kStride;
      this.counts.fill(0, base, base + kStride);
      this.buckets[slot] = bucket;
      return this.admit(this.counts, base, bucket);
    }
    base = slot * kStride;
    const newest = this.buckets[slot]!;
    if (bucket > newest) {
      // Clear the buckets that went by without a request, at most the whole ring.
      const last = Math.min(bucket, newest + kSlots);
      for (let b = newest + 1; b <= last; b++) {
        const i = base + (b % kSlots);
        counts[base + kSum] -= counts[i]!;
        counts[i] = 0;
      }
      this.buckets[slot] = bucket;
      return this.admit(counts, base, bucket);
    }
    // A clock that stepped back counts into the newest bucket seen, so the ring never runs backwards.
    return this.admit(counts, base, newest);
  }

  private admit(counts: Uint32Array, base: number, bucket: number): boolean {
    const inSeven = counts[base + kSum]!;
    // The slot of bucket b - 6 is (b + 1) % 7.
    const inSix = inSeven - counts[base + ((bucket + 1) % kSlots)]!;
    if (inSix >= this.limit || inSeven >= this.burstLimit) return false;
    counts[base + (bucket % kSlots)]++;
    counts[base + kSum] = inSeven + 1;
    return true;
  }

  private newSlot(): number {
    if (this.slotOf.size >= this.maxEntries) {
      const [oldest, slot] = this.slotOf.entries().next().value!;
      this.slotOf.delete(oldest);
      return slot;
    }
    const reused = this.freeSlots.pop();
    if (reused !== undefined) return reused;
    if (this.usedSlots === this.buckets.length) this.grow();
    return this.usedSlots++;
  }

  private grow(): void {
    const slots = Math.min(this.buckets.length * 2, this.maxEntries);
    const buckets = new Float64Array(slots);
    buckets.set(this.buckets);
    const counts = new Uint32Array(slots * kStride);
    counts.set(this.counts);
    this.buckets = buckets;
    this.counts = counts;
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    const stale = Math.floor(now / this.bucketMs) - kSlots;
    for (const [key, slot] of this.slotOf) {
      if (this.buckets[slot]! <= stale) {
        this.slotOf.delete(key);
        this.freeSlots.push(slot);
      }
    }
  }
}

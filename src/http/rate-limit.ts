// Per-IP request rate limit (spec: Limits, request rate), as a sliding-window counter: the count of
// the current fixed minute plus the previous minute's count weighted by how much of it still lies
// inside the last 60 s. O(1) per request, three numbers per address, never more than `limit`
// requests in any minute that starts at a window boundary, and close to that for any other minute.
//
// Memory is bounded: at most `maxEntries` addresses are tracked. Entries idle for two windows are
// swept every window; when the table is full, the longest-tracked entry is evicted (Map keeps
// insertion order, so that is the first key: O(1)). An evicted address starts afresh.

interface Window {
  start: number;
  current: number;
  previous: number;
}

export interface RateLimiterOptions {
  limit: number;
  windowMs?: number;
  maxEntries?: number;
}

export class RateLimiter {
  readonly limit: number;
  readonly windowMs: number;
  readonly maxEntries: number;
  private readonly windows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(options: RateLimiterOptions) {
    this.limit = options.limit;
    this.windowMs = options.windowMs ?? 60_000;
    this.maxEntries = options.maxEntries ?? 100_000;
  }

  get size(): number {
    return this.windows.size;
  }

  /** Counts one request from `key`; false when it is over the limit (and then it is not counted). */
  take(key: string, now: number): boolean {
    if (now - this.lastSweep >= this.windowMs) this.sweep(now);
    let w = this.windows.get(key);
    if (w === undefined) {
      if (this.windows.size >= this.maxEntries) this.windows.delete(this.windows.keys().next().value!);
      w = { start: now - (now % this.windowMs), current: 0, previous: 0 };
      this.windows.set(key, w);
    } else if (now - w.start >= this.windowMs) {
      const elapsedWindows = Math.floor((now - w.start) / this.windowMs);
      w.previous = elapsedWindows === 1 ? w.current : 0;
      w.current = 0;
      w.start += elapsedWindows * this.windowMs;
    }
    const weight = 1 - (now - w.start) / this.windowMs;
    if (w.previous * weight + w.current >= this.limit) return false;
    w.current++;
    return true;
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, w] of this.windows) {
      if (now - w.start >= 2 * this.windowMs) this.windows.delete(key);
    }
  }
}

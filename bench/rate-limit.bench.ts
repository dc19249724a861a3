// Micro-benchmark: what the per-IP rate limiter costs per request, and its memory per address. The
// ring of 10-second buckets (src/http/rate-limit.ts) runs beside the one-counter sliding window it
// replaced (copied below as the baseline), on the same request streams in alternating rounds; medians
// of 9. Two streams: one address sending everything (the table holds one entry), and requests spread
// over 100,000 addresses (a full table, each lookup a miss in the CPU caches): if the cost per request
// does not grow with the table, `take` is O(1) in the number of tracked addresses. Then one round of
// a flood: 250,000 addresses never seen before, so past 100,000 every request evicts one; the
// baseline evicted the first key of a Map, which V8 finds by walking past the holes earlier
// deletions left (src/http/address-table.ts), so its cost per request grows with the flood.
// Run: npx tsc -p . && node --expose-gc dist/bench/rate-limit.bench.js
import { RateLimiter } from '../src/http/rate-limit.js';
import { median } from './stats.js';

/** The previous limiter: the current fixed minute's count plus the previous one's, weighted. */
class SlidingWindowCounter {
  private readonly windows = new Map<string, { start: number; current: number; previous: number }>();
  private lastSweep = 0;
  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
    private readonly maxEntries = 100_000,
  ) {}
  get size(): number {
    return this.windows.size;
  }
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
    for (const [key, w] of this.windows) if (now - w.start >= 2 * this.windowMs) this.windows.delete(key);
  }
}

interface Limiter {
  take(key: string, now: number): boolean;
  readonly size: number;
}

const kRequests = 2_000_000;
const kAddresses = 100_000;
const addresses = Array.from({ length: kAddresses }, (_, i) => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`);
const one = ['203.0.113.7'];
let sink = 0;

/** ns per request: `kRequests` requests 30 µs apart (≈ 33,000 req/s, two minutes of clock), keys in turn. */
function round(make: () => Limiter, keys: readonly string[]): number {
  const limiter = make();
  const start = 1_700_000_000_000;
  const began = process.hrtime.bigint();
  for (let i = 0; i < kRequests; i++) if (limiter.take(keys[i % keys.length]!, start + i * 0.03)) sink++;
  return Number(process.hrtime.bigint() - began) / kRequests;
}

const variants: Record<string, () => Limiter> = {
  ring: () => RateLimiter.create({ limit: 600 }),
  'sliding counter': () => new SlidingWindowCounter(600),
};
const results: Record<string, Record<string, number[]>> = {};
function record(variant: string, stream: string, nsPerTake: number): void {
  results[variant] ??= {};
  const streams = results[variant];
  streams[stream] ??= [];
  streams[stream].push(nsPerTake);
}
for (let r = 0; r < 9; r++) {
  const order = r % 2 === 0 ? Object.keys(variants) : Object.keys(variants).reverse();
  for (const [streamName, keys] of [
    ['1 address', one],
    ['100,000 addresses', addresses],
  ] as const) {
    for (const name of order) record(name, streamName, round(variants[name]!, keys));
  }
}
const kFlood = 250_000;
const flood = Array.from({ length: kFlood }, (_, i) => `172.${16 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`);
for (const [name, make] of Object.entries(variants)) {
  const limiter = make();
  const start = 1_700_000_000_000;
  const began = process.hrtime.bigint();
  for (let i = 0; i < kFlood; i++) if (limiter.take(flood[i]!, start + i * 0.03)) sink++;
  record(name, `flood of ${kFlood.toLocaleString('en')} new addresses`, Number(process.hrtime.bigint() - began) / kFlood);
}
for (const [name, streams] of Object.entries(results)) {
  console.log(
    `${name.padEnd(16)} ${Object.entries(streams)
      .map(([s, ns]) => `${s}: ${median(ns).toFixed(1)} ns/request`)
      .join(', ')}`,
  );
}

/** Bytes per tracked address, table full: the JS heap plus typed-array memory, which lives outside it. */
function bytesPerEntry(make: () => Limiter): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return Number.NaN;
  gc();
  const used = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  const before = used();
  const limiter = make();
  for (let i = 0; i < kAddresses; i++) limiter.take(addresses[i]!, 1_700_000_000_000 + i / 10);
  gc();
  const bytes = used() - before;
  if (limiter.size !== kAddresses) throw new Error('table not full');
  return bytes / kAddresses;
}
for (const [name, make] of Object.entries(variants)) {
  const bytes = bytesPerEntry(make);
  console.log(
    `${name.padEnd(16)} ${Number.isNaN(bytes) ? 'memory: run with --expose-gc' : `${bytes.toFixed(0)} bytes per address, ${((bytes * kAddresses) / 2 ** 20).toFixed(1)} MiB for a full table of ${kAddresses.toLocaleString('en')}`} (address strings not included)`,
  );
}
if (sink === 42) console.log('');

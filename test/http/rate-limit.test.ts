import t from 'tap';
import { RateLimiter } from '../../src/http/rate-limit.js';

t.test('allows `limit` requests per window, then refuses without counting', async (t) => {
  const rl = RateLimiter.create({ limit: 3 });
  const at = 60_000 * 1000;
  t.same(
    [1, 2, 3, 4, 5].map(() => rl.take('a', at)),
    [true, true, true, false, false],
  );
  t.equal(rl.take('b', at), true, 'other addresses have their own count');
});

t.test('weighted takes (bytes): a take that would pass the limit is refused whole and counts nothing', async (t) => {
  // The evaluation body budget's shape: bytes per 1.2 s window, so `limit` in any second.
  const rl = RateLimiter.create({ limit: 1000, windowMs: 1200 });
  const at = 1_000_000;
  t.equal(rl.take('k', at, 600), true);
  t.equal(rl.take('k', at, 500), false, '600 + 500 is past 1000: refused');
  t.equal(rl.take('k', at, 400), true, 'the refused take was not counted: 600 + 400 fits');
  t.equal(rl.take('k', at, 1), false, 'the limit is reached');
  t.equal(rl.take('other', at, 1000), true, 'another key has its own bytes');
  t.equal(rl.take('k', at + 1199, 1), false, 'still within the window');
  t.equal(rl.take('k', at + 1200, 1000), false, 'a second later only a sixth more (the burst bound) is taken');
  t.equal(rl.take('k', at + 1200, 167), true);
  t.equal(rl.take('k', at + 2600, 1000), true, "once those bytes are a window old, a whole second's share again");
});

t.test('the previous window still weighs on the next one (sliding window)', async (t) => {
  const rl = RateLimiter.create({ limit: 10 });
  for (let i = 0; i < 10; i++) t.equal(rl.take('a', 59_000), true);
  t.equal(rl.take('a', 60_000), false, 'right after the minute boundary the full previous count still counts');
  t.equal(rl.take('a', 109_999), false, 'it counts until its 10 s bucket is six buckets old');
  t.equal(rl.take('a', 110_000), true, 'then it has slid out');
  t.equal(rl.take('a', 59_000 + 10 * 60_000), true, 'long after, it starts afresh');
});

t.test('memory stays bounded under a flood of distinct addresses', async (t) => {
  const rl = RateLimiter.create({ limit: 600, maxEntries: 1000 });
  for (let i = 0; i < 200_000; i++) rl.take(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, 1_000_000 + i);
  t.ok(rl.size <= 1000, `tracked ${rl.size} addresses`);
  const late = 1_000_000 + 10 * 60_000;
  rl.take('late', late);
  t.ok(rl.size >= 998, 'one request drops at most two idle entries: no pause to scan the table');
  for (let i = 1; i <= 500; i++) rl.take('late', late + i);
  t.equal(rl.size, 1, 'idle entries are swept');
});

t.test('at the default bound of 100,000 addresses', async (t) => {
  const rl = RateLimiter.create({ limit: 600 });
  t.equal(rl.maxEntries, 100_000);
  const start = 1_700_000_000_000;
  for (let i = 0; i < 250_000; i++) rl.take(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, start + i / 10);
  t.equal(rl.size, 100_000, 'a flood of 250,000 addresses in 25 s leaves 100,000 tracked');
});

t.test('a flood past the bound costs the same per request as filling the table', async (t) => {
  // Evicting the first key of a Map costs O(deleted entries) in V8 (src/http/address-table.ts): the
  // limiter this replaced took ~30 s for this flood, most of it in the last third.
  const rl = RateLimiter.create({ limit: 600 });
  const start = 1_700_000_000_000;
  const third = (from: number) => {
    const began = performance.now();
    for (let i = from; i < from + 100_000; i++) rl.take(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, start + i / 10);
    return performance.now() - began;
  };
  const filling = third(0);
  third(100_000);
  const evicting = third(200_000);
  t.equal(rl.size, 100_000);
  t.ok(evicting < 5 * filling + 200, `100,000 evictions took ${evicting.toFixed(0)} ms, filling the table ${filling.toFixed(0)} ms`);
});

t.test('a full table evicts the least recently active address, not a busy one', async (t) => {
  const rl = RateLimiter.create({ limit: 2, maxEntries: 3 });
  const start = 1_700_000_000_000;
  rl.take('busy', start);
  rl.take('idle-1', start);
  rl.take('idle-2', start);
  rl.take('busy', start + 10_000);
  t.equal(rl.take('busy', start + 10_000), false, 'busy is at its limit');
  rl.take('newcomer', start + 10_000);
  t.equal(rl.size, 3);
  t.equal(rl.take('busy', start + 10_000), false, 'busy kept its count: idle-1 was evicted');
  t.equal(rl.take('idle-1', start + 10_000), true, 'idle-1 starts afresh');
});

/** Times (ms) admitted out of `attempts` (sorted), one address. */
function admitted(rl: RateLimiter, attempts: readonly number[]): number[] {
  return attempts.filter((at) => rl.take('x', at));
}

/** The most admitted times in any half-open span [a, a + spanMs). */
function maxInSpan(times: readonly number[], spanMs: number): number {
  let best = 0;
  for (let lo = 0, hi = 0; hi < times.length; hi++) {
    while (times[hi]! - times[lo]! >= spanMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

/** `n` attempts at `at`. */
const burst = (at: number, n: number): number[] => Array.from({ length: n }, () => at);

// A small deterministic generator, so a failure names a reproducible case.
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
  };
}

t.test('the documented bound: at most limit + ceil(limit / 6) in any 60 s, at most limit in any 50 s', async (t) => {
  const limit = 600;
  const start = 1_700_000_000_000 - (1_700_000_000_000 % 10_000);
  t.equal(RateLimiter.create({ limit }).burstLimit, 700);

  // The worst case, built by hand: 100 at the last instant of one 10 s bucket, 500 at the first of the
  // next, 100 at the end of the sixth bucket after it: 700 inside one 60 s span.
  const edge = admitted(RateLimiter.create({ limit }), [
    ...burst(start + 9_999, 100),
    ...burst(start + 10_000, 500),
    ...burst(start + 69_998, 1000),
  ]);
  t.equal(maxInSpan(edge, 60_000), 700, 'the bound is reached, so it is the exact worst case');
  t.equal(maxInSpan(edge, 50_000), 600);

  // A one-counter sliding window lets about 2x through here: a full burst at the end of one bucket,
  // then another at the end of the sixth bucket after it, less than 60 s on.
  const twice = admitted(RateLimiter.create({ limit }), [...burst(start + 9_999, 1000), ...burst(start + 69_998, 1000)]);
  t.equal(maxInSpan(twice, 60_000), 700, 'two full bursts 60 s apart add up to 700, not 1,200');

  // Adversarial bursts at bucket edges: for ten minutes, each bucket gets bursts of random size at
  // its first and last milliseconds and at a random moment, many seeds.
  let worst60 = 0;
  let worst50 = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const next = random(seed);
    const attempts: number[] = [];
    for (let b = 0; b < 60; b++) {
      const at = start + b * 10_000;
      for (const offset of [0, 1 + Math.floor(next() * 9_998), 9_999]) {
        if (next() < 0.5) attempts.push(...burst(at + offset, Math.floor(next() * 700)));
      }
    }
    const times = admitted(RateLimiter.create({ limit }), attempts);
    worst60 = Math.max(worst60, maxInSpan(times, 60_000));
    worst50 = Math.max(worst50, maxInSpan(times, 50_000));
  }
  t.ok(worst60 <= 700, `at most 700 admitted in any 60 s span (worst seen: ${worst60})`);
  t.ok(worst50 <= 600, `at most 600 admitted in any 50 s span (worst seen: ${worst50})`);

  // Other limits, including ones not divisible by 6: the same bounds.
  for (const small of [1, 5, 7, 20, 601]) {
    const rl = RateLimiter.create({ limit: small });
    const next = random(small);
    const attempts: number[] = [];
    for (let b = 0; b < 60; b++) {
      for (const offset of [0, 9_999]) attempts.push(...burst(start + b * 10_000 + offset, Math.floor(next() * 2 * small)));
    }
    const times = admitted(rl, attempts);
    t.ok(maxInSpan(times, 60_000) <= small + Math.ceil(small / 6), `limit ${small}: 60 s bound`);
    t.ok(maxInSpan(times, 50_000) <= small, `limit ${small}: 50 s bound`);
  }
});

t.test('a steady client at exactly the limit per minute is never refused', async (t) => {
  for (const limit of [600, 5, 7, 1, 601]) {
    for (const phase of [0, 1, 37, 4_999, 9_999]) {
      const rl = RateLimiter.create({ limit });
      const start = 1_700_000_000_000 + phase;
      let refused = 0;
      // Ten minutes at `limit` per minute, evenly spaced (whole milliseconds, as a clock gives them).
      for (let k = 0; k < 10 * limit; k++) if (!rl.take('steady', start + Math.floor((k * 60_000) / limit))) refused++;
      t.equal(refused, 0, `limit ${limit}, phase ${phase} ms`);
    }
  }
  const rl = RateLimiter.create({ limit: 600 });
  const start = 1_700_000_000_000;
  for (let k = 0; k < 600; k++) rl.take('fast', start + k * 90);
  t.equal(rl.take('fast', start + 600 * 90), false, 'faster than the limit is refused');
});

t.test('after a refusal, waiting 60 s is always enough', async (t) => {
  for (const offset of [0, 1, 5_000, 9_999]) {
    const rl = RateLimiter.create({ limit: 600 });
    const at = 1_700_000_000_000 + offset;
    for (let i = 0; i < 600; i++) rl.take('x', at + i);
    t.equal(rl.take('x', at + 600), false);
    t.equal(rl.take('x', at + 600 + 60_000), true, `refused ${offset} ms into a bucket`);
  }
});

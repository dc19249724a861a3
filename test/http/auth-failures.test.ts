import t from 'tap';
import { AuthFailures } from '../../src/http/auth-failures.js';

const address = (i: number) => `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`;

t.test('auth failures: fixed window from the first failure, then locked out until it ends', async (t) => {
  const af = AuthFailures.create(2);
  const ip = '1.2.3.4';
  af.check(ip, 0);
  af.record(ip, 0);
  af.record(ip, 30_000);
  t.throws(() => af.check(ip, 30_001), { code: 'TOO_MANY_AUTH_FAILURES' });
  t.throws(() => af.check(ip, 59_999), { code: 'TOO_MANY_AUTH_FAILURES' });
  t.doesNotThrow(() => af.check(ip, 60_000), 'the window is 60 s from the first failure');
  t.doesNotThrow(() => af.check('5.6.7.8', 30_001), 'per address');
});

t.test('a flood of distinct addresses: at most 100,000 tracked, the newest kept', async (t) => {
  const af = AuthFailures.create(20);
  t.equal(af.maxEntries, 100_000, 'the documented default bound');
  const start = 1_700_000_000_000;
  // 250,000 addresses failing once each within 25 s: all inside one window, none has ended.
  for (let i = 0; i < 250_000; i++) af.record(address(i), start + i / 10);
  t.equal(af.size, 100_000);
  // The newest stay counted: one more failure away from the limit, 19 more lock the address out.
  const newest = address(249_999);
  for (let i = 0; i < 19; i++) af.record(newest, start + 25_000);
  t.throws(() => af.check(newest, start + 25_000), { code: 'TOO_MANY_AUTH_FAILURES' });
  // The oldest were evicted and start afresh.
  for (let i = 0; i < 19; i++) af.record(address(0), start + 25_000);
  t.doesNotThrow(() => af.check(address(0), start + 25_000), 'an evicted address has lost its count');
});

t.test('a flood past the bound costs the same per failure as filling the table', async (t) => {
  // Evicting the first key of a Map costs O(deleted entries) in V8 (src/http/address-table.ts): the
  // table this replaced took ~30 s for this flood, most of it in the last third.
  const af = AuthFailures.create(20);
  const start = 1_700_000_000_000;
  const third = (from: number) => {
    const began = performance.now();
    for (let i = from; i < from + 100_000; i++) af.record(address(i), start + i / 10);
    return performance.now() - began;
  };
  const filling = third(0);
  third(100_000);
  const evicting = third(200_000);
  t.equal(af.size, 100_000);
  t.ok(evicting < 5 * filling + 200, `100,000 evictions took ${evicting.toFixed(0)} ms, filling the table ${filling.toFixed(0)} ms`);
});

t.test('ended windows are dropped a few per failure, never in one long pause', async (t) => {
  // A limit above the 50,001 failures of 'late' below: this is about the sweep, not the lockout.
  const af = AuthFailures.create(100_000);
  const start = 1_700_000_000_000;
  for (let i = 0; i < 100_000; i++) af.record(address(i), start + i / 10);
  const later = start + 10 * 60_000;
  af.record('late', later);
  t.ok(af.size >= 99_999, 'one failure drops at most two ended windows');
  for (let i = 1; i <= 50_000; i++) af.record('late', later);
  t.equal(af.size, 1, 'every ended window is gone after as many failures as half the table');
});

t.test('an address failing again after its window moves behind newer windows', async (t) => {
  const af = AuthFailures.create(1, 2);
  af.record('a', 0);
  af.record('b', 30_000);
  af.record('a', 61_000);
  t.throws(() => af.check('a', 61_000), { code: 'TOO_MANY_AUTH_FAILURES' }, 'a has a new window');
  af.record('c', 62_000);
  t.throws(() => af.check('a', 62_000), { code: 'TOO_MANY_AUTH_FAILURES' }, 'a was not evicted: b, whose window is older, was');
  t.equal(af.size, 2);
});

t.test('a failure recorded once the address is at its limit answers with the lockout, and is not counted', async (t) => {
  const af = AuthFailures.create(2);
  af.record('x', 0);
  af.record('x', 1);
  t.throws(() => af.record('x', 2), { code: 'TOO_MANY_AUTH_FAILURES' }, 'the third, raced past check(), is the lockout');
  t.throws(() => af.check('x', 3), { code: 'TOO_MANY_AUTH_FAILURES' });
  t.doesNotThrow(() => af.check('x', 60_001), 'the window still ends a minute after its first failure');
});

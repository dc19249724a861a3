import t from 'tap';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { AuthFailures } from '../../src/api/auth-failures.js';

t.test('allows `limit` requests per window, then refuses without counting', async (t) => {
  const rl = new RateLimiter({ limit: 3 });
  const at = 60_000 * 1000;
  t.same([1, 2, 3, 4, 5].map(() => rl.take('a', at)), [true, true, true, false, false]);
  t.equal(rl.take('b', at), true, 'other addresses have their own count');
});

t.test('the previous window still weighs on the next one (sliding window)', async (t) => {
  const rl = new RateLimiter({ limit: 10, windowMs: 1000 });
  for (let i = 0; i < 10; i++) t.equal(rl.take('a', 5000), true);
  t.equal(rl.take('a', 6000), false, 'right after the boundary the full previous count still counts');
  t.equal(rl.take('a', 6500), true, 'halfway through, half of it has slid out');
  t.equal(rl.take('a', 8000), true, 'two windows later it starts afresh');
});

t.test('memory stays bounded under a flood of distinct addresses', async (t) => {
  const rl = new RateLimiter({ limit: 600, maxEntries: 1000 });
  for (let i = 0; i < 200_000; i++) rl.take(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, 1_000_000 + i);
  t.ok(rl.size <= 1000, `tracked ${rl.size} addresses`);
  rl.take('late', 1_000_000 + 10 * 60_000);
  t.equal(rl.size, 1, 'idle entries are swept');
});

t.test('auth failures: fixed window from the first failure, then locked out until it ends', async (t) => {
  const af = new AuthFailures(2);
  const ip = '1.2.3.4';
  af.check(ip, 0);
  af.record(ip, 0);
  af.record(ip, 30_000);
  t.throws(() => af.check(ip, 30_001), { code: 'TOO_MANY_AUTH_FAILURES' });
  t.throws(() => af.check(ip, 59_999), { code: 'TOO_MANY_AUTH_FAILURES' });
  t.doesNotThrow(() => af.check(ip, 60_000), 'the window is 60 s from the first failure');
  t.doesNotThrow(() => af.check('5.6.7.8', 30_001), 'per address');
});

// Merging flag usage (src/model/flags.ts): the one rule the eval workers, the main thread's pending
// flush and the writer's stored totals all use.
import t from 'tap';
import { addUsage, type FlagUsage, mergeUsage } from '../../src/model/flags.js';

t.test('mergeUsage: evaluations add up, the latest time wins, nothing is changed in place', async (t) => {
  const count: FlagUsage = { flagId: 'f1', evaluations: 3, lastEvaluatedAt: 100 };
  const first = mergeUsage(undefined, count);
  t.strictSame(first, count, 'no usage yet: the count itself');
  t.not(first, count, 'a copy');
  const total: FlagUsage = { flagId: 'f1', evaluations: 10, lastEvaluatedAt: 200 };
  t.strictSame(mergeUsage(total, count), { flagId: 'f1', evaluations: 13, lastEvaluatedAt: 200 }, 'an older count keeps the later time');
  t.strictSame(mergeUsage(count, total), { flagId: 'f1', evaluations: 13, lastEvaluatedAt: 200 }, 'order does not matter');
  t.strictSame(total, { flagId: 'f1', evaluations: 10, lastEvaluatedAt: 200 }, 'total unchanged');
  t.strictSame(count, { flagId: 'f1', evaluations: 3, lastEvaluatedAt: 100 }, 'count unchanged');
});

t.test('addUsage: totals by flag', async (t) => {
  const totals = new Map<string, FlagUsage>();
  const given: FlagUsage = { flagId: 'a', evaluations: 1, lastEvaluatedAt: 5 };
  addUsage(totals, given);
  addUsage(totals, { flagId: 'b', evaluations: 2, lastEvaluatedAt: 7 });
  addUsage(totals, { flagId: 'a', evaluations: 4, lastEvaluatedAt: 6 });
  t.strictSame(Object.fromEntries(totals), {
    a: { flagId: 'a', evaluations: 5, lastEvaluatedAt: 6 },
    b: { flagId: 'b', evaluations: 2, lastEvaluatedAt: 7 },
  });
  t.strictSame(given, { flagId: 'a', evaluations: 1, lastEvaluatedAt: 5 }, 'the count given is not the stored total');
});

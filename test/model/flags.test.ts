// Merging flag usage (src/model/flags.ts): the one rule the eval workers, the main thread's pending
// flush and the writer's stored totals all use.
import t from 'tap';
import { addCount, type FlagUsage, mergeUsage, type UsageCount } from '../../src/model/flags.js';

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

t.test('addCount: pending counts summed by flag, environment and hour', async (t) => {
  const hour = 3600 * 1000;
  const pending = new Map<string, UsageCount>();
  const given: UsageCount = { flagId: 'a', environment: 'prod', evaluations: 1, lastEvaluatedAt: 5 };
  addCount(pending, given);
  addCount(pending, { flagId: 'b', environment: 'prod', evaluations: 2, lastEvaluatedAt: 7 });
  addCount(pending, { flagId: 'a', environment: 'prod', evaluations: 4, lastEvaluatedAt: 6 });
  addCount(pending, { flagId: 'a', environment: 'dev', evaluations: 8, lastEvaluatedAt: 6 });
  addCount(pending, { flagId: 'a', environment: 'prod', evaluations: 16, lastEvaluatedAt: hour });
  t.strictSame(
    [...pending.values()],
    [
      { flagId: 'a', environment: 'prod', evaluations: 5, lastEvaluatedAt: 6 },
      { flagId: 'b', environment: 'prod', evaluations: 2, lastEvaluatedAt: 7 },
      { flagId: 'a', environment: 'dev', evaluations: 8, lastEvaluatedAt: 6 },
      { flagId: 'a', environment: 'prod', evaluations: 16, lastEvaluatedAt: hour },
    ],
    'another environment or another hour is another count',
  );
  t.strictSame(given, { flagId: 'a', environment: 'prod', evaluations: 1, lastEvaluatedAt: 5 }, 'the count given is not the one held');
});

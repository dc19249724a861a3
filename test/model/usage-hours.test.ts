// Evaluations per hour (src/model/flags.ts): the writer adds each flush's count to its hour, keeps a
// week, takes a late count from another node into its own hour while kept; the console reads the last
// n hours up to now; a recorded count updates both the totals and the hours.
import t from 'tap';
import { addToHours, hourlySeries, kUsageHours, recordedUsage } from '../../src/model/flags.js';

const kHour = 3_600_000;
const at = (hour: number, minute = 0) => hour * kHour + minute * 60_000;

t.test('addToHours: the same hour adds up, a later one moves on with zeros between', async (t) => {
  let hours = addToHours(undefined, 5, at(1000, 10));
  t.same(hours, { lastHour: 1000, counts: [5] });
  hours = addToHours(hours, 2, at(1000, 59));
  t.same(hours, { lastHour: 1000, counts: [7] });
  hours = addToHours(hours, 1, at(1003));
  t.same(hours, { lastHour: 1003, counts: [7, 0, 0, 1] });
  const before = hours;
  hours = addToHours(hours, 4, at(1001, 30));
  t.same(hours, { lastHour: 1003, counts: [7, 4, 0, 1] }, 'a late count (another node flushed after) goes to its own hour');
  t.same(before, { lastHour: 1003, counts: [7, 0, 0, 1] }, 'a new record: the one given is not changed');
});

t.test('addToHours: never more than a week of hours; a count older than that is dropped', async (t) => {
  let hours = addToHours(undefined, 1, at(0));
  for (let h = 1; h < 500; h++) hours = addToHours(hours, 1, at(h));
  t.equal(hours.counts.length, kUsageHours);
  t.equal(hours.lastHour, 499);
  t.same(addToHours(hours, 9, at(499 - kUsageHours)), hours, 'older than the week kept');
  t.same(addToHours(hours, 1, at(10_000)).counts, [...new Array(kUsageHours - 1).fill(0), 1], 'a long silence: only the new hour');
});

t.test('hourlySeries: the last n hours up to now, oldest first, zeros where none', async (t) => {
  const hours = { lastHour: 1003, counts: [7, 4, 0, 1] };
  t.same(hourlySeries(hours, at(1003, 30), 6), [0, 0, 7, 4, 0, 1]);
  t.same(hourlySeries(hours, at(1005), 3), [1, 0, 0], 'two hours on: the last count two hours back');
  t.same(hourlySeries(undefined, at(5), 3), [0, 0, 0]);
  t.same(hourlySeries(hours, at(2000), 24), new Array(24).fill(0), 'all older than the window');
});

t.test("recordedUsage: a count merged into a flag's stored totals, and into its hour", async (t) => {
  const first = recordedUsage(undefined, { flagId: 'f', evaluations: 5, lastEvaluatedAt: at(1000, 10) });
  t.same(first, { flagId: 'f', evaluations: 5, lastEvaluatedAt: at(1000, 10), hours: { lastHour: 1000, counts: [5] } });
  const next = recordedUsage(first, { flagId: 'f', evaluations: 3, lastEvaluatedAt: at(1002) });
  t.same(next, { flagId: 'f', evaluations: 8, lastEvaluatedAt: at(1002), hours: { lastHour: 1002, counts: [5, 0, 3] } });
  const late = recordedUsage(next, { flagId: 'f', evaluations: 1, lastEvaluatedAt: at(1001) });
  t.same(
    late,
    { flagId: 'f', evaluations: 9, lastEvaluatedAt: at(1002), hours: { lastHour: 1002, counts: [5, 1, 3] } },
    'the latest time kept',
  );
});

t.test('addToHours: two flushes give the same record in either order, an hour before the first included', async (t) => {
  const a = (hours: Parameters<typeof addToHours>[0]) => addToHours(hours, 4, at(1000, 59));
  const b = (hours: Parameters<typeof addToHours>[0]) => addToHours(hours, 3, at(999, 59));
  t.same(b(a(undefined)), { lastHour: 1000, counts: [3, 4] }, 'the earlier hour flushed second is kept');
  t.same(a(b(undefined)), b(a(undefined)), 'either order');
  const edge = (hours: Parameters<typeof addToHours>[0]) => addToHours(hours, 2, at(1000 - kUsageHours + 1));
  t.same(edge(a(undefined)), a(edge(undefined)), 'the oldest hour of the week, either order');
  t.equal(edge(a(undefined)).counts.length, kUsageHours);
});

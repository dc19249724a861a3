// Whether a flag's usage count is all its use (src/model/flags.ts usageKnown, issue 99 item 3): not when a
// flag set serves it and may have been read (stock flagd providers report nothing); and a flag whose
// usage is not known is never unused, however long its count says it was not evaluated.
import t from 'tap';
import { isStale, isUnused, usageKnown } from '../../src/model/flags.js';

const kDay = 24 * 3600 * 1000;
const flag = { createdAt: 0 };
const before = 100 * kDay;

t.test('usage is known unless a flag set that may have been read serves the flag', async (t) => {
  t.equal(usageKnown({ servedByFlagSet: false, flagSetRead: true }), true, 'no flag set serves it');
  t.equal(usageKnown({ servedByFlagSet: true, flagSetRead: false }), true, 'no flag set of the project was read');
  t.equal(usageKnown({ servedByFlagSet: true, flagSetRead: true }), false);
});

t.test('never unused on missing data', async (t) => {
  const usage = { flagId: 'f', evaluations: 3, lastEvaluatedAt: kDay };
  t.ok(isStale(flag, usage, before), 'stale by its count');
  t.equal(isUnused(flag, usage, before, { servedByFlagSet: true, flagSetRead: true }), false, 'a path that does not report may use it');
  t.equal(isUnused(flag, undefined, before, { servedByFlagSet: true, flagSetRead: true }), false, 'never evaluated by what reports');
  t.equal(isUnused(flag, usage, before, { servedByFlagSet: false, flagSetRead: true }), true, 'known: unused');
  t.equal(isUnused(flag, { ...usage, lastEvaluatedAt: before + 1 }, before, { servedByFlagSet: false, flagSetRead: false }), false);
});

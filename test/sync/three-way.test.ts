// OFREP over HTTP, the Flagwire provider and the stock flagd provider agree (issue 44, item 5) on
// generated flags and contexts against one real server (three-way.ts says what is compared). The
// million contexts of the issue are bench/three-way.bench.ts: here a few thousand answers per path.
import t from 'tap';
import { threeWay } from './three-way.js';

t.setTimeout(600_000);

t.test('zero differences between OFREP, the Flagwire provider and the stock flagd provider', async (t) => {
  const tally = await threeWay({ flags: 40, contexts: 150, seed: 44 });
  t.same(tally.mismatches, [], 'no differences');
  t.equal(tally.mismatchCount, 0);
  t.equal(tally.flagwireCompared, 40 * 150, 'every flag asked of the Flagwire provider for every context');
  t.ok(
    tally.omitted > 0 && tally.omitted < tally.flags,
    `some flags left out of the set (${tally.omitted} of ${tally.flags}), most served`,
  );
  t.ok(tally.flagdCompared > 1000, `${tally.flagdCompared} flagd answers compared (${tally.flagdSkipped} without a key on a split)`);
  t.ok(tally.flagdExposures > 0, `${tally.flagdExposures} of them exposures, marked where OFREP says inExperiment`);
});

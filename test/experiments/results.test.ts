// The results of an experiment from its statistics view (src/experiments/results.ts): the view's exact
// decimals read back to the tally's integers, each treatment compared with the control on each metric,
// the sample-ratio check over all arms, and the sentence each comparison leads with.
import t from 'tap';
import { exactDecimal } from '../../src/events/statistics.js';
import { experimentResults, kDefaultAnalysis, parseExactDecimal } from '../../src/experiments/results.js';
import type { VerdictStage } from '../../src/experiments/verdict.js';
import { evenArms, evenPlan, Random, statisticsOf } from './simulate.js';

/** A running experiment whose primary metric is checkout: its sentences say what to do. */
const running: VerdictStage = { primaryMetric: 'checkout', status: 'running', flag: { id: 'flg_1', environment: null, typed: false } };

const plan = evenPlan(
  [
    { metric: 'checkout', kind: 'conversion' },
    { metric: 'checkout', kind: 'mean' },
  ],
  20_000,
);

/** Two arms of `subjects` each: a purchase with probability `rate` (`lift` more in "on"), worth 10 ± 3, the covariate its twin. */
function arms(seed: number, subjects: number, rate: number, lift: number) {
  const random = new Random(seed);
  const tally = evenArms(['checkout']);
  for (const [variant, a] of tally) {
    a.subjects = subjects;
    const p = variant === 'on' ? rate * (1 + lift) : rate;
    for (let s = 0; s < subjects; s++) {
      const before = random.uniform() < p ? Math.round((10 + 3 * random.normal()) * 100) : 0;
      const after = random.uniform() < p ? Math.round((10 + 3 * random.normal()) * 100) : 0;
      a.metrics.get('checkout')!.add(after, after === 0 ? 0 : 1, before, before === 0 ? 0 : 1);
    }
  }
  return tally;
}

t.test('exact decimals read back to the integers they were written from', async (t) => {
  for (const n of [0n, 1n, -1n, 999_999n, 1_000_000n, -123_456_789_012n, 10n ** 30n + 7n]) {
    t.equal(parseExactDecimal(exactDecimal(n, 1), 1), n, `${n} millionths`);
    t.equal(parseExactDecimal(exactDecimal(n, 2), 2), n, `${n} millionths²`);
  }
});

t.test('a treatment that raises the metric: the lift, its interval, and "you can stop"', async (t) => {
  const results = experimentResults(statisticsOf(arms(1, 10_000, 0.2, 0.15), 10_000n), plan, kDefaultAnalysis, running);
  t.equal(results.comparisons.length, 2, 'one comparison per treatment and metric');
  const [conversion, mean] = results.comparisons;
  t.equal(conversion.kind, 'conversion');
  t.ok(Math.abs(conversion.control.mean - 0.2) < 0.015, `the control converts at ${conversion.control.mean}`);
  t.equal(conversion.cuped, null, 'a conversion has no covariate to adjust by');
  for (const c of [conversion, mean]) {
    t.equal(c.decision, 'higher', `${c.kind}: the interval lies above 0`);
    t.ok(c.relative!.lower > 0 && c.relative!.lower < c.relative!.estimate && c.relative!.estimate < c.relative!.upper);
    t.ok(c.bayes!.chanceToBeatControl > 0.99, `${c.kind}: chance to beat control ${c.bayes!.chanceToBeatControl}`);
    t.match(c.verdict, /^on raises checkout by \d+\.\d% \(\d+\.\d% to \d+\.\d%\); you can stop\.$/, c.verdict);
  }
  const lift = (conversion.relative!.estimate * 100).toFixed(1);
  t.ok(conversion.verdict.includes(`by ${lift}%`), 'the sentence gives the estimate as computed');
  // The covariate is independent of the outcome here: CUPED removes next to nothing, and never adds.
  t.ok(mean.cuped!.varianceReduction > -0.01 && mean.cuped!.varianceReduction < 0.01, `reduction ${mean.cuped!.varianceReduction}`);
  // An exact 10,000/10,000 is no evidence of a mismatch, but 20,000 subjects cannot yet tell 50/50 from 50.5/49.5.
  t.equal(results.srm.verdict, 'not-enough-data');
  t.equal(results.srm.pValue, 1);
  t.same(results.srm.variants, ['off', 'on']);
});

t.test('a treatment that lowers it, and one that changes nothing yet', async (t) => {
  const lower = experimentResults(statisticsOf(arms(2, 10_000, 0.2, -0.15), 10_000n), plan, kDefaultAnalysis, running).comparisons[0];
  t.equal(lower.decision, 'lower');
  t.match(lower.verdict, /^on lowers checkout by \d+\.\d% \(\d+\.\d% to \d+\.\d%\); you can stop\.$/, lower.verdict);
  const none = experimentResults(statisticsOf(arms(3, 2_000, 0.2, 0), 10_000n), plan, kDefaultAnalysis, running).comparisons[0];
  t.equal(none.decision, 'inconclusive');
  t.match(
    none.verdict,
    /^No difference detected between on and the control on checkout yet \(-\d+\.\d% to \d+\.\d%\); keep it running: 4,000 of 20,000 planned subjects\.$/,
    none.verdict,
  );
  // At the planned size an interval that holds 0 still holds effects either side of it: said so, never "none".
  const done = experimentResults(
    statisticsOf(arms(3, 2_000, 0.2, 0), 10_000n),
    { ...plan, plannedSubjects: 4_000 },
    kDefaultAnalysis,
    running,
  ).comparisons[0];
  t.match(
    done.verdict,
    /^No difference detected between on and the control on checkout at the planned 4,000 subjects \(-\d+\.\d% to \d+\.\d%\): the data cannot tell its effect from 0, nor rule out one as large as either end; the planned size is reached: you can stop, or keep it running to narrow the interval\.$/,
    done.verdict,
  );
});

t.test('a sample-ratio mismatch overrides every verdict', async (t) => {
  const tally = arms(4, 10_000, 0.2, 0.15);
  tally.get('on')!.subjects = 11_000;
  const results = experimentResults(statisticsOf(tally, 10_000n), plan);
  t.equal(results.srm.verdict, 'mismatch');
  for (const c of results.comparisons)
    t.match(c.verdict, /^The arms' subjects do not match the planned split \(p = .+\): on's results on checkout cannot be trusted/);
});

t.test('subjects in a variant outside the plan are a mismatch', async (t) => {
  const statistics = statisticsOf(arms(5, 10_000, 0.2, 0), 10_000n);
  const results = experimentResults(
    { ...statistics, variants: [...statistics.variants, { variant: 'legacy', subjects: 3, metrics: [] }] },
    plan,
  );
  t.same(results.srm.variants, ['off', 'on', 'legacy']);
  t.same(results.srm.planned, [0.5, 0.5, 0]);
  t.equal(results.srm.pValue, 0);
  t.equal(results.srm.verdict, 'mismatch');
  const none = experimentResults(
    { ...statistics, variants: [...statistics.variants, { variant: 'legacy', subjects: 0, metrics: [] }] },
    plan,
  );
  t.equal(none.srm.pValue, 1, 'an unplanned variant with no one in it changes nothing');
});

t.test('an experiment with nothing counted yet says so, and divides by nothing', async (t) => {
  const results = experimentResults({ experiment: 'x', environment: null, variants: [] }, plan, kDefaultAnalysis, running);
  t.equal(results.srm.verdict, 'not-enough-data');
  for (const c of results.comparisons) {
    t.equal(c.decision, 'inconclusive');
    t.equal(c.relative, null, 'no lift over a control mean of 0');
    t.equal(c.bayes, null);
    t.same(c.cuped, c.kind === 'mean' ? { theta: 0, varianceReduction: 0 } : null, 'no reduction to report, and no NaN');
    t.equal(c.verdict, 'Not enough subjects yet to compare on with the control on checkout; keep it running.');
  }
});

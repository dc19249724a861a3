// Experiment guards' rules in process (issue 59, item 4): which way is worse decides a breach, the
// treatment that fares worst is the one read, too few subjects is a healthy "not enough data", the
// sample ratio breaches on a mismatch the results' looks already kept; and in the writer, a guard whose
// experiment was deleted since the rollout started breaches at its next reading, saying why.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { statisticsView } from '../../src/events/statistics.js';
import { jsonBody } from '../../src/model/request-body.js';
import { judgeExperimentReading } from '../../src/release-plans/experiment-guards.js';
import { storedGuard } from '../../src/release-plans/guards.js';
import type { MetricSums } from '../../src/events/tally/tally-file.js';
import { experimentPlan, experimentRecord } from '../helpers/experiment-plan.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

/** A conversion's sums: `converted` subjects with one event of value 1 each. */
function converted(n: number): MetricSums {
  const c = BigInt(n);
  return {
    events: n,
    subjects: n,
    sum: c * 1_000_000n,
    sumOfSquares: c * 1_000_000_000_000n,
    covariateEvents: 0,
    covariateSubjects: 0,
    covariateSum: 0n,
    covariateSumOfSquares: 0n,
    sumOfProducts: 0n,
  };
}
/** The statistics of arms given as [variant, subjects, converted]. */
const statistics = (...arms: [string, number, number][]) =>
  statisticsView('exp', null, {
    arms: arms.map(([variant, subjects]) => ({ variant, subjects })),
    sums: arms.map(([variant, , n]) => ({ variant, metric: 'errors', sums: converted(n) })),
  });

const experiment = experimentRecord({
  key: 'exp',
  variants: [
    { variant: 'a', weight: 1 },
    { variant: 'b', weight: 1 },
    { variant: 'c', weight: 1 },
  ],
  control: 'a',
  metrics: [{ metric: 'errors', kind: 'conversion' }],
  plannedSubjects: 3000,
});

t.test('which way is worse decides; the worst treatment is read', async (t) => {
  // b's errors rise from 10% to 30%; c's stay near the control's.
  const rising = statistics(['a', 1000, 100], ['b', 1000, 300], ['c', 1000, 105]);
  const higherIsWorse = storedGuard({ experiment: 'exp', metric: 'errors', worse: 'higher' });
  const reading = judgeExperimentReading(higherIsWorse, experiment, rising, 7);
  t.match(reading, { at: 7, breached: true, note: /^b is worse than a on errors with confidence: lift 200% \(/ });
  t.match(reading.figures, {
    treatment: { variant: 'b', subjects: 1000, mean: 0.3 },
    control: { variant: 'a', mean: 0.1 },
    effect: 'relative',
  });
  t.ok(Math.abs(reading.value! - 2) < 1e-12, `the value is the lift: ${reading.value}`);
  const lowerIsWorse = storedGuard({ experiment: 'exp', metric: 'errors', worse: 'lower' });
  t.match(judgeExperimentReading(lowerIsWorse, experiment, rising, 7), { breached: false, note: /^b against a on errors: lift 200%/ });
  // A control of no conversions has no lift: the difference is read.
  const fromNone = judgeExperimentReading(higherIsWorse, experiment, statistics(['a', 1000, 0], ['b', 1000, 200], ['c', 1000, 0]), 7);
  t.match(fromNone, { breached: true, figures: { effect: 'absolute', estimate: 0.2 } });
});

t.test('too few subjects is healthy: not enough data yet', async (t) => {
  const guard = storedGuard({ experiment: 'exp', metric: 'errors', worse: 'higher' });
  const reading = judgeExperimentReading(guard, experiment, statistics(['a', 1, 0], ['b', 1, 1]), 7);
  t.match(reading, { breached: false, value: null, note: /^not enough data yet in experiment exp/, figures: { lower: null, upper: null } });
});

t.test('the sample ratio: a mismatch breaches, and so does one the results already found', async (t) => {
  const guard = storedGuard({ experiment: 'exp', sampleRatio: true });
  const even = statistics(['a', 1000, 0], ['b', 1010, 0], ['c', 990, 0]);
  t.match(judgeExperimentReading(guard, experiment, even, 7), { breached: false, note: /^no sample ratio mismatch found/ });
  const kept = judgeExperimentReading(guard, { ...experiment, lowestSrmPValue: 0.01 }, even, 7);
  t.match(kept, { breached: true, figures: { pValue: 0.01, alpha: 0.05 } }, "the results' lowest p-value is the check's");
  const skewed = judgeExperimentReading(guard, experiment, statistics(['a', 1000, 0], ['b', 1400, 0], ['c', 600, 0]), 7);
  t.match(skewed, { breached: true, note: /^sample ratio mismatch in experiment exp: Bayes factor .* planned a 33.3%, b 33.3%, c 33.3%$/ });
  t.ok(skewed.figures !== undefined && 'bayesFactor' in skewed.figures && skewed.figures.bayesFactor! >= 20, 'past 1/alpha');
});

t.test('in the writer: an experiment deleted since the rollout started breaches at the next reading', async (t) => {
  const world = buildWorld(tempDataDir());
  t.teardown(() => world.store.close());
  const { ids } = world;
  const single = { principal: kOperator, projectId: ids.single, env: null };
  world.run('experimentCreate', { ...single, received: jsonBody(JSON.stringify(experimentPlan(ids.flag, 1000))) });
  const guard = { experiment: 'checkout-2026', metric: 'purchase', worse: 'lower', intervalMs: 1000 };
  const steps = [{ trafficPercentage: 10, holdMs: 3_600_000 }, { trafficPercentage: 100 }];
  const now = Date.now();
  const plan = world.run(
    'rolloutStart',
    { principal: kOperator, flagId: ids.flag, env: null, body: { steps, guard }, guardMetrics: null },
    now,
  );
  const empty = { statistics: statisticsView('checkout-2026', null, { arms: [], sums: [] }) };
  const healthy = world.run('rolloutGuardRecord', { rolloutId: plan.id, dueAt: now, reading: empty }, now + 1)!;
  t.match(healthy, { status: 'running', guardReading: { breached: false, note: /not enough data yet/ }, guardNextAt: now + 1001 });
  world.run('experimentDelete', { ...single, key: 'checkout-2026' });
  const paused = world.run('rolloutGuardRecord', { rolloutId: plan.id, dueAt: now + 1001, reading: empty }, now + 1001)!;
  t.match(paused, {
    status: 'paused',
    pausedReason: 'guard breached: the guard cannot be read: guard.experiment: no experiment "checkout-2026" in this project',
  });
});

// CUPED, simulated: a covariate x of known correlation ρ with the outcome y removes 1 − ρ² of the
// difference's variance (Deng et al. 2013). Each subject's x and y are drawn one by one (seeded) as a
// bivariate normal, x = 100 + 30 z₁ and y = 50 + 20 (ρ z₁ + √(1 − ρ²) z₂), rounded to the cent (the
// tally counts millionths; cents keep the simulated sums exact in doubles), and summed into the stored
// statistics. Read three ways, each within 5% of 1 − ρ²: the variance of the adjusted difference over
// the unadjusted one as the results report it, in one large experiment and on average over many; and
// the spread of the estimates themselves across 4,000 A/A experiments, where what CUPED promises is seen.
import t, { type Test } from 'tap';
import { experimentResults } from '../../src/experiments/results.js';
import { evenArms, evenPlan, Random, statisticsOf } from './simulate.js';

const kRho = 0.6;
const kExpected = 1 - kRho * kRho;

function experiment(random: Random, subjects: number) {
  const arms = evenArms(['revenue']);
  for (let s = 0; s < subjects; s++) {
    const a = arms.get(random.uniform() < 0.5 ? 'off' : 'on')!;
    a.subjects++;
    const z1 = random.normal();
    const z2 = random.normal();
    const x = Math.round((100 + 30 * z1) * 100);
    const y = Math.round((50 + 20 * (kRho * z1 + Math.sqrt(1 - kRho * kRho) * z2)) * 100);
    a.metrics.get('revenue')!.add(y, 1, x, 1);
  }
  return experimentResults(statisticsOf(arms, 10_000n), evenPlan([{ metric: 'revenue', kind: 'mean' }], subjects)).comparisons[0];
}

function within5(t: Test, ratio: number, what: string) {
  t.ok(Math.abs(ratio / kExpected - 1) <= 0.05, `${what}: ${ratio.toFixed(4)} against 1 − ρ² = ${kExpected.toFixed(4)}`);
}

t.test('one large experiment reports 1 − ρ² of the variance left', async (t) => {
  const c = experiment(new Random(1), 200_000);
  within5(t, 1 - c.cuped!.varianceReduction, 'reported share of variance left');
  t.ok(Math.abs(c.cuped!.theta - (kRho * 20) / 30) < 0.01, `θ ${c.cuped!.theta} ≈ ρ σ_y / σ_x = 0.4`);
});

t.test('across 4,000 A/A experiments the adjusted estimates spread by 1 − ρ² of the plain ones', async (t) => {
  const random = new Random(2);
  const kExperiments = 4000;
  let reportedLeft = 0;
  let plainSquares = 0;
  let adjustedSquares = 0;
  let adjustedSum = 0;
  for (let e = 0; e < kExperiments; e++) {
    const c = experiment(random, 1000);
    // The plain difference of means, from the arms' unadjusted means; A/A, so its expectation is 0.
    const plain = c.treatment.mean - c.control.mean;
    plainSquares += plain * plain;
    adjustedSquares += c.absolute.estimate ** 2;
    adjustedSum += c.absolute.estimate;
    reportedLeft += 1 - c.cuped!.varianceReduction;
  }
  within5(t, reportedLeft / kExperiments, 'mean reported share left');
  within5(t, adjustedSquares / plainSquares, 'variance of adjusted estimates over plain ones');
  const sd = Math.sqrt(adjustedSquares / kExperiments);
  t.ok(
    Math.abs(adjustedSum / kExperiments) < (3 * sd) / Math.sqrt(kExperiments),
    'the adjusted estimate is unbiased (A/A: mean within 3 SE of 0)',
  );
});

// Each formula of the statistics engine (src/experiments) against reference values. The references were
// computed in Python (numpy 2.4, scipy 1.17) from GrowthBook's gbstats as written (models/statistics.py
// SampleMeanStatistic, compute_covariance, compute_theta; utils.py variance_of_ratios; models/tests.py
// frequentist_variance_relative_cuped; frequentist/tests.py sequential_rho, sequential_interval_halfwidth,
// SequentialTwoSidedTTest.p_value; bayesian/tests.py EffectBayesianABTest), and, for the sample-ratio
// check, from Lindon & Malek's Bayes factor with scipy.special.gammaln. The script's inputs are the sums
// below; its outputs are the literals.
import t, { type Test } from 'tap';
import { posterior } from '../../src/experiments/bayes.js';
import { cupedTheta } from '../../src/experiments/cuped.js';
import { absoluteEffect, relativeEffect } from '../../src/experiments/effect.js';
import { armMoments, armSums } from '../../src/experiments/moments.js';
import { normalCdf, normalQuantile } from '../../src/experiments/normal.js';
import { mixtureRho, sequentialInterval } from '../../src/experiments/sequential.js';
import { logGamma, srmCheck, srmConcentration, srmLogBayesFactor } from '../../src/experiments/srm.js';
import type { MetricSums } from '../../src/events/tally/tally-file.js';

const M = 1_000_000n;

/** Stored sums of y and x given in the metric's units (the tally keeps millionths, squares in millionths²). */
function stored(y: number, yy: number, x: number, xx: number, xy: number): MetricSums {
  return {
    events: 0,
    subjects: 0,
    sum: BigInt(y) * M,
    sumOfSquares: BigInt(yy) * M * M,
    covariateEvents: 0,
    covariateSubjects: 0,
    covariateSum: BigInt(x) * M,
    covariateSumOfSquares: BigInt(xx) * M * M,
    sumOfProducts: BigInt(xy) * M * M,
  };
}

/** |actual − expected| within `relative` of |expected|. */
function close(t: Test, actual: number, expected: number, relative: number, what: string) {
  t.ok(Math.abs(actual - expected) <= relative * Math.abs(expected), `${what}: ${actual} ≈ ${expected}`);
}

// Control: 1,000 subjects, Σy 2,500, Σy² 12,000, Σx 2,000, Σx² 9,000, Σxy 7,000.
// Treatment: 1,100 subjects, Σy 3,000, Σy² 14,500, Σx 2,200, Σx² 9,800, Σxy 8,100 (the same x̄ as the
// control, where this lift's delta method and gbstats' frequentist_variance_relative_cuped agree).
const controlSums = armSums('mean', 1000, stored(2500, 12000, 2000, 9000, 7000));
const treatmentSums = armSums('mean', 1100, stored(3000, 14500, 2200, 9800, 8100));
const control = armMoments(controlSums);
const treatment = armMoments(treatmentSums);

t.test('the normal distribution', async (t) => {
  // scipy.stats.norm.cdf and .ppf.
  close(t, normalCdf(1.96), 0.9750021048517795, 1e-14, 'Φ(1.96)');
  close(t, normalCdf(-3), 0.0013498980316300933, 1e-12, 'Φ(−3)');
  // Hart's algorithm is exact to about 1e-15 absolute; far in the tail that is not 1e-15 relative.
  t.ok(Math.abs(normalCdf(-8.5) - 9.47953482220325e-18) < 1e-15, 'Φ(−8.5) to 1e-15');
  close(t, normalCdf(0.3), 0.6179114221889526, 1e-14, 'Φ(0.3)');
  close(t, normalQuantile(0.975), 1.959963984540054, 1e-13, 'Φ⁻¹(0.975)');
  close(t, normalQuantile(0.001), -3.090232306167813, 1e-13, 'Φ⁻¹(0.001)');
  close(t, normalQuantile(1e-10), -6.361340902404056, 1e-9, 'Φ⁻¹(1e-10), where Φ is exact to 1e-15 absolute');
  close(t, normalQuantile(0.6), 0.2533471031357997, 1e-13, 'Φ⁻¹(0.6)');
  t.throws(() => normalQuantile(1), RangeError);
});

t.test('moments from the stored sums', async (t) => {
  // SampleMeanStatistic: mean Σy/n, variance (Σy² − (Σy)²/n)/(n − 1); compute_covariance likewise.
  t.equal(control.mean, 2.5);
  close(t, control.variance, 5.7557557557557555, 1e-15, 'var(y)');
  close(t, control.covariate!.variance, 5.005005005005005, 1e-15, 'var(x)');
  close(t, control.covariate!.covariance, 2.002002002002002, 1e-15, 'cov(x, y)');
  // A conversion reads the subjects with an event: 287 of 1,204 converted, variance n/(n − 1) p(1 − p).
  const conversion = armMoments(armSums('conversion', 1204, { ...stored(17120, 2901233, 2210, 180900, 51200), subjects: 287 }));
  close(t, conversion.mean, 287 / 1204, 1e-15, 'rate');
  close(t, conversion.variance, (1204 / 1203) * (287 / 1204) * (1 - 287 / 1204), 1e-14, 'rate variance');
  t.equal(conversion.covariate, null, 'a conversion has no covariate the sums can give');
  // Exact where doubles are not: 10 million subjects, each total 1e9 + 0.000001 but one at 1e9: the
  // variance is 1e-12 · (1 − 1/n) / (n − 1) · n ≈ 1e-19; Σy²/n − ȳ² in doubles says 0 or worse.
  const n = 10_000_000n;
  const y = 1_000_000_000n * M + 1n;
  const huge = armMoments({ n: 10_000_000, scale: 1e6, sum: n * y - 1n, sumOfSquares: (n - 1n) * y * y + (y - 1n) ** 2n, covariate: null });
  close(t, huge.variance, 1e-12 / 10_000_000, 1e-6, 'variance of near-equal totals');
  // No subjects: nothing is known, and nothing divides by zero.
  const empty = armMoments(armSums('mean', 0, undefined));
  t.same([empty.mean, empty.variance], [0, 0]);
});

t.test('the difference, the lift and CUPED', async (t) => {
  const plain = absoluteEffect(control, treatment, 0);
  close(t, plain.estimate, 0.22727272727272707, 1e-13, 'difference');
  close(t, plain.standardError, 0.10479572932551387, 1e-13, 'difference SE');
  // variance_of_ratios(ȳ_t, V_t/n_t, ȳ_c, V_c/n_c, 0).
  const lift = relativeEffect(control, treatment, 0)!;
  close(t, lift.estimate, 0.09090909090909083, 1e-13, 'lift');
  close(t, lift.standardError, 0.043956731745212946, 1e-13, 'lift SE');
  // compute_theta: the joint covariance over the joint variance of x, both arms pooled.
  const theta = cupedTheta(controlSums, treatmentSums);
  close(t, theta, 0.3942307692307692, 1e-14, 'θ');
  const adjusted = absoluteEffect(control, treatment, theta);
  close(t, adjusted.estimate, 0.22727272727272707, 1e-13, 'adjusted difference (equal x̄)');
  close(t, adjusted.standardError, 0.09749919422465089, 1e-13, 'adjusted difference SE');
  close(t, 1 - (adjusted.standardError / plain.standardError) ** 2, 0.13440471109101837, 1e-12, 'variance removed');
  const adjustedLift = relativeEffect(control, treatment, theta)!;
  close(t, adjustedLift.standardError, 0.04090312850009106, 1e-13, 'adjusted lift SE (frequentist_variance_relative_cuped)');
  t.equal(relativeEffect(armMoments(armSums('mean', 10, undefined)), treatment, 0), null, 'no lift over a control mean of 0');
  t.equal(cupedTheta(armSums('mean', 10, undefined), armSums('mean', 10, undefined)), 0, 'no adjustment by a covariate that does not vary');
  t.equal(
    absoluteEffect(armMoments(armSums('mean', 1, undefined)), treatment, 0).standardError,
    Number.POSITIVE_INFINITY,
    'one subject says nothing of spread',
  );
});

t.test('the confidence sequence', async (t) => {
  // sequential_rho(0.05, 5000) = √((−2 ln 0.05 + ln(−2 ln 0.05 + 1)) / 5000).
  const rho = mixtureRho(0.05, 5000);
  close(t, rho, 0.03984006677137368, 1e-14, 'ρ');
  const n = 2100;
  const plain = sequentialInterval(absoluteEffect(control, treatment, 0), n, 0.05, rho);
  close(t, plain.lower, -0.0990309046922288, 1e-12, 'lower');
  close(t, plain.upper, 0.553576359237683, 1e-12, 'upper');
  close(t, plain.pValue, 0.34102089686277104, 1e-12, 'p');
  const theta = cupedTheta(controlSums, treatmentSums);
  const adjusted = sequentialInterval(absoluteEffect(control, treatment, theta), n, 0.05, rho);
  close(t, adjusted.lower, -0.07631160191629283, 1e-12, 'adjusted lower');
  close(t, adjusted.upper, 0.530857056461747, 1e-12, 'adjusted upper');
  close(t, adjusted.pValue, 0.25750993078272283, 1e-12, 'adjusted p');
  // The interval excludes 0 exactly when p ≤ α: at the boundary both flip together.
  for (const estimate of [0.1, 0.3, 0.35, 0.4, 0.5, 1]) {
    const s = sequentialInterval({ estimate, standardError: 0.1 }, n, 0.05, rho);
    t.equal(s.lower > 0, s.pValue < 0.05, `estimate ${estimate}: excludes 0 iff p < α`);
  }
  // Wider than the fixed-horizon interval at every n: the price of looking at will.
  for (const m of [100, 5000, 1_000_000]) {
    const s = sequentialInterval({ estimate: 0, standardError: 1 }, m, 0.05, rho);
    t.ok(s.upper > 1.96, `n ${m}: half-width ${s.upper} > 1.96`);
  }
  t.equal(sequentialInterval({ estimate: 50, standardError: 0.01 }, n, 0.05, rho).pValue, 0, 'a huge effect: p 0, no overflow');
  t.same(sequentialInterval({ estimate: 1, standardError: 0 }, n, 0.05, rho), { lower: -Infinity, upper: Infinity, pValue: 1 });
});

t.test('the Bayesian view', async (t) => {
  const lift = relativeEffect(control, treatment, 0)!;
  // Flat prior: P(lift > 0) = norm.sf(0, lift, SE).
  close(t, posterior(lift, null, 0.05)!.chanceToBeatControl, 0.9806870143734338, 1e-12, 'chance to beat, flat');
  // GrowthBook's proper prior N(0, 0.3²) on the lift.
  const proper = posterior(lift, 0.3, 0.05)!;
  close(t, proper.mean, 0.0889983998224764, 1e-12, 'posterior mean');
  close(t, proper.sd, 0.04349234617433615, 1e-12, 'posterior sd');
  close(t, proper.chanceToBeatControl, 0.9796365815341516, 1e-12, 'chance to beat, proper');
  close(t, proper.lower, 0.0037549677176291207, 1e-9, 'credible lower');
  close(t, proper.upper, 0.17424183192732368, 1e-12, 'credible upper');
  t.equal(posterior({ estimate: 0, standardError: Number.POSITIVE_INFINITY }, null, 0.05), null, 'no data, flat prior: nothing');
  t.equal(posterior({ estimate: 0, standardError: Number.POSITIVE_INFINITY }, 0.3, 0.05)!.chanceToBeatControl, 0.5, 'no data: the prior');
});

t.test('the sample-ratio check', async (t) => {
  // scipy.special.gammaln.
  close(t, logGamma(0.5), 0.5723649429247, 1e-13, 'ln Γ(0.5)');
  close(t, logGamma(3.7), 1.428072326665388, 1e-14, 'ln Γ(3.7)');
  close(t, logGamma(12.5), 18.73434751193645, 1e-15, 'ln Γ(12.5)');
  close(t, logGamma(1e7 + 0.25), 151180953.3989978, 1e-15, 'ln Γ(1e7 + 0.25)');
  const k = srmConcentration(0.05, 100_000);
  close(t, k, 12599.560979256341, 1e-14, 'k tuned to 100,000');
  // ln BF = gammaln(k) − gammaln(k + n) + Σ(gammaln(k p_i + x_i) − gammaln(k p_i)) − Σ x_i ln p_i.
  close(t, srmLogBayesFactor([50000, 50000], [0.5, 0.5], k), -1.0951055448531406, 1e-9, 'ln BF, even');
  close(t, srmLogBayesFactor([50500, 49500], [0.5, 0.5], k), 3.3455069167976035, 1e-9, 'ln BF, 50.5/49.5');
  close(t, srmLogBayesFactor([50800, 49200], [0.5, 0.5], k), 10.273095505588572, 1e-9, 'ln BF, 50.8/49.2');
  close(t, srmLogBayesFactor([33500, 33000, 33500], [1 / 3, 1 / 3, 1 / 3], k), 0.03337250236654654, 1e-7, 'ln BF, three arms');
  const options = { alpha: 0.05, plannedSubjects: 100_000, tolerance: 0.01 };
  const skewed = srmCheck([50500, 49500], [1, 1], options);
  close(t, skewed.pValue, 0.035242345691812456, 1e-8, 'p, 50.5/49.5');
  t.equal(skewed.verdict, 'mismatch');
  t.equal(srmCheck([50000, 50000], [50, 50], options).verdict, 'no-mismatch', '100,000 subjects split evenly rule a mismatch out');
  t.equal(srmCheck([510, 490], [50, 50], options).verdict, 'not-enough-data', '1,000 subjects cannot');
  t.equal(srmCheck([0, 0], [50, 50], options).verdict, 'not-enough-data', 'nor can none');
  t.equal(
    srmCheck([50000, 50000], [50, 50], { ...options, previousPValue: 0.01 }).pValue,
    0.01,
    'the running minimum keeps an earlier look',
  );
  // Planned 90/10: 50/50 is a mismatch. The 10% arm's share is known to within 1% of itself (±0.1
  // point) only from about a million subjects: at 100,000 the truth is that it cannot be told yet.
  t.equal(srmCheck([90000, 10000], [90, 10], options).verdict, 'not-enough-data');
  t.equal(srmCheck([1_800_000, 200_000], [90, 10], options).verdict, 'no-mismatch');
  t.equal(srmCheck([50000, 50000], [90, 10], options).verdict, 'mismatch');
});

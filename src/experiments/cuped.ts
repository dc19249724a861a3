// CUPED (Deng, Xu, Kohavi & Walker, "Improving the sensitivity of online controlled experiments by
// utilizing pre-experiment data", WSDM 2013): each subject's y is read as y − θ(x − x̄), x its total of
// the same metric before its exposure. With θ = cov(x, y) / var(x) the adjusted mean keeps its
// expectation (x is fixed before the variant is) and its variance shrinks by the share of y's variance
// x explains, 1 − ρ² of it. θ is pooled over the two arms compared, as GrowthBook's gbstats does
// (models/statistics.py compute_theta), so both arms are adjusted by the same slope.
import { type ArmMoments, type ArmSums, centredProducts, pooledSums } from './moments.js';

/**
 * θ = cov(x, y) / var(x) over the control's and the treatment's subjects together, from the exact sums;
 * 0 (no adjustment) where there is no covariate, or it does not vary.
 */
export function cupedTheta(control: ArmSums, treatment: ArmSums): number {
  const pooled = pooledSums(control, treatment);
  const x = pooled.covariate;
  if (x === null) return 0;
  const xx = centredProducts(pooled.n, x.sumOfSquares, x.sum, x.sum);
  if (xx <= 0n) return 0;
  // The n(n − 1) and scale² of the covariance and the variance cancel: a ratio of two exact integers.
  return Number(centredProducts(pooled.n, x.sumOfProducts, x.sum, pooled.sum)) / Number(xx);
}

/** The arm's mean of y − θx (the constant θx̄ of the pooled mean cancels in every difference of arms). */
export function adjustedMean(m: ArmMoments, theta: number): number {
  return theta === 0 || m.covariate === null ? m.mean : m.mean - theta * m.covariate.mean;
}

/** The variance of y − θx per subject: var(y) + θ² var(x) − 2θ cov(x, y). */
export function adjustedVariance(m: ArmMoments, theta: number): number {
  if (theta === 0 || m.covariate === null) return m.variance;
  const v = m.variance + theta * theta * m.covariate.variance - 2 * theta * m.covariate.covariance;
  // Rounding can leave a hair below zero when x explains y entirely.
  return Math.max(v, 0);
}

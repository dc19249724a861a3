// A treatment's effect on a metric against the control: the difference of means and the relative lift,
// each with its standard error, CUPED-adjusted by θ (0: unadjusted). As in GrowthBook's statistical
// details (docs.growthbook.io/statistics/details): the absolute effect's variance is the sum of the arms'
// variances of their means; the lift divides by the control's unadjusted mean, and its variance is the
// delta method's.
import { adjustedMean, adjustedVariance } from './cuped.js';
import type { ArmMoments } from './moments.js';

/** An estimate and its standard error. */
export interface Estimate {
  readonly estimate: number;
  readonly standardError: number;
}

/** The variance of an arm's mean: infinite below 2 subjects, where nothing is known of its spread yet. */
function varianceOfMean(variance: number, n: number): number {
  return n < 2 ? Number.POSITIVE_INFINITY : variance / n;
}

/** The difference of means, treatment minus control: Δ = Ā_t − Ā_c, Var = V_t/n_t + V_c/n_c (A, V: adjusted by θ). */
export function absoluteEffect(control: ArmMoments, treatment: ArmMoments, theta: number): Estimate {
  return {
    estimate: adjustedMean(treatment, theta) - adjustedMean(control, theta),
    standardError: Math.sqrt(
      varianceOfMean(adjustedVariance(treatment, theta), treatment.n) + varianceOfMean(adjustedVariance(control, theta), control.n),
    ),
  };
}

/**
 * The relative lift Δ / ȳ_c, ȳ_c the control's unadjusted mean; null where ȳ_c is 0 (no lift is defined).
 * Write the lift as f = (Ā_t + θx̄_c) / ȳ_c − 1. The delta method gives
 *   Var = V_t / (n_t ȳ_c²) + (c² var(y_c) / ȳ_c⁴ − 2cθ cov_c / ȳ_c³ + θ² var(x_c) / ȳ_c²) / n_c,  c = Ā_t + θx̄_c,
 * which is gbstats' frequentist_variance_relative_cuped where x̄_t = x̄_c, and with θ = 0 its
 * variance_of_ratios: V_t / (n_t ȳ_c²) + ȳ_t² var(y_c) / (n_c ȳ_c⁴).
 */
export function relativeEffect(control: ArmMoments, treatment: ArmMoments, theta: number): Estimate | null {
  const base = control.mean;
  if (base === 0) return null;
  const absolute = adjustedMean(treatment, theta) - adjustedMean(control, theta);
  const c = absolute + base;
  const x = control.covariate;
  const controlPart =
    theta === 0 || x === null
      ? (c * c * control.variance) / base ** 4
      : (c * c * control.variance) / base ** 4 - (2 * c * theta * x.covariance) / base ** 3 + (theta * theta * x.variance) / base ** 2;
  const variance = varianceOfMean(adjustedVariance(treatment, theta), treatment.n) / (base * base) + varianceOfMean(controlPart, control.n);
  return { estimate: absolute / Math.abs(base), standardError: Math.sqrt(Math.max(variance, 0)) };
}

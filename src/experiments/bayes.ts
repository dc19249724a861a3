// The Bayesian lens: how likely the treatment beats the control, given the data. As GrowthBook's
// Bayesian engine does it (docs.growthbook.io/statistics/details, "Bayesian"; gbstats bayesian/tests.py,
// EffectBayesianABTest): the effect's likelihood is normal, N(estimate, SE²); with a flat (improper)
// prior the posterior is that normal itself, and with a proper prior N(0, τ²) on the effect it is the
// precision-weighted normal. The chance to beat control is the posterior's mass above 0.
import type { Estimate } from './effect.js';
import { normalCdf, normalQuantile } from './normal.js';

export interface Posterior {
  readonly mean: number;
  readonly sd: number;
  /** P(effect > 0 | data): for a metric where lower is better, read 1 minus it. */
  readonly chanceToBeatControl: number;
  /** The central 1 − α credible interval. */
  readonly lower: number;
  readonly upper: number;
}

/**
 * The posterior of the effect. `priorSd` null: flat prior (GrowthBook's default); a number τ: N(0, τ²)
 * (GrowthBook's proper prior on the lift is τ = 0.3), precision 1/SE² + 1/τ², mean (estimate/SE²) / precision.
 * Null where neither the data nor the prior say anything (SE 0 under a flat prior).
 */
export function posterior(effect: Estimate, priorSd: number | null, alpha: number): Posterior | null {
  const dataPrecision = effect.standardError > 0 ? 1 / effect.standardError ** 2 : 0;
  const precision = dataPrecision + (priorSd === null ? 0 : 1 / priorSd ** 2);
  if (precision === 0 || !Number.isFinite(precision)) return null;
  const mean = (effect.estimate * dataPrecision) / precision;
  const sd = Math.sqrt(1 / precision);
  const z = normalQuantile(1 - alpha / 2);
  return { mean, sd, chanceToBeatControl: normalCdf(mean / sd), lower: mean - z * sd, upper: mean + z * sd };
}

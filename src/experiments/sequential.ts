// Always-valid confidence sequences: intervals that hold at every look at once, so an experiment may be
// read every day and stopped on the first interval that excludes zero with its error rate kept. This is
// the two-sided normal-mixture sequence GrowthBook's frequentist engine uses (docs.growthbook.io/statistics/
// sequential; gbstats frequentist/tests.py, SequentialTwoSidedTTest and sequential_rho), from Waudby-Smith,
// Arnold, Wu, Ramdas & Howard, "Time-uniform central limit theory and asymptotic confidence sequences"
// (arXiv:2103.06476; eq. 9 for the width, eq. 155 for the e-value, eq. 161 for the tuning), the
// asymptotic version of Howard, Ramdas, McAuliffe & Sekhon, "Time-uniform, nonparametric, nonasymptotic
// confidence sequences", Annals of Statistics 2021.
import type { Estimate } from './effect.js';

/**
 * The mixture's ρ, tuned so the sequence is tightest when `plannedSubjects` subjects (all arms) are in:
 * ρ = √((−2 ln α + ln(−2 ln α + 1)) / N*) (eq. 161; gbstats' sequential_rho, two-sided).
 */
export function mixtureRho(alpha: number, plannedSubjects: number): number {
  const l = -2 * Math.log(alpha);
  return Math.sqrt((l + Math.log(l + 1)) / plannedSubjects);
}

/** A confidence sequence's interval at one look, and its anytime-valid p-value. */
export interface SequentialInterval {
  readonly lower: number;
  readonly upper: number;
  /** The smallest α whose sequence excludes 0 now: min(1, 1/E), E the mixture's e-value. */
  readonly pValue: number;
}

/**
 * The sequence's interval around `effect` at a look with `n` subjects in the two arms compared:
 * estimate ± √(s²) √(2(nρ² + 1) ln(√(nρ² + 1) / α) / (n²ρ²)), s² = SE² · n (eq. 9). Its p-value is
 * 1/E, E = exp(ρ² S / (2(nρ² + 1))) / √(nρ² + 1), S = n (estimate / SE)² (eq. 155): E ≥ 1/α exactly
 * when the interval excludes 0. A look with no spread (SE 0, or fewer than 2 subjects) says nothing:
 * the whole line, p = 1.
 */
export function sequentialInterval(effect: Estimate, n: number, alpha: number, rho: number): SequentialInterval {
  const { estimate, standardError } = effect;
  if (!(standardError > 0) || n < 2) return { lower: Number.NEGATIVE_INFINITY, upper: Number.POSITIVE_INFINITY, pValue: 1 };
  const nr2 = n * rho * rho + 1;
  const halfWidth = standardError * Math.sqrt((2 * nr2 * Math.log(Math.sqrt(nr2) / alpha)) / (n * rho * rho));
  const z = estimate / standardError;
  // In logs: for a large z the e-value overflows a double long before 1/E stops being 0.
  const logE = (rho * rho * n * z * z) / (2 * nr2) - Math.log(nr2) / 2;
  return { lower: estimate - halfWidth, upper: estimate + halfWidth, pValue: Math.min(1, Math.exp(-logE)) };
}

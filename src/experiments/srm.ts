// The sample-ratio check: do the arms' subjects match the planned allocation? A sequential test, so it
// may be read at every look: Lindon & Malek, "Anytime-valid inference for multinomial count data",
// NeurIPS 2022 (arXiv:2011.03567), the Dirichlet-multinomial Bayes factor against the planned
// multinomial. Under the plan the factor is a nonnegative martingale, so by Ville's inequality it passes
// 1/α with probability at most α ever; its p-value min over looks of 1/BF is anytime-valid.
import { mixtureRho, sequentialInterval } from './sequential.js';

/** ln Γ(x) for x > 0: Stirling's series from 15 (five terms: the next is below 3e-16), the recurrence Γ(x + 1) = xΓ(x) below. */
export function logGamma(x: number): number {
  let shift = 0;
  let product = 1;
  while (x + shift < 15) {
    product *= x + shift;
    shift++;
  }
  const y = x + shift;
  const y2 = y * y;
  const y4 = y2 * y2;
  const series = 1 / (12 * y) - 1 / (360 * y * y2) + 1 / (1260 * y * y4) - 1 / (1680 * y * y4 * y2) + 1 / (1188 * y * y4 * y4);
  return (y - 0.5) * Math.log(y) - y + 0.5 * Math.log(2 * Math.PI) + series - Math.log(product);
}

/**
 * The Dirichlet prior's concentration k (prior α_i = k·p_i), tuned as the confidence sequences are
 * (sequential.ts mixtureRho): under the normal approximation the Dirichlet's spread around the plan is a
 * normal mixture of ρ² = 1/(k + 1), so k = N* / (−2 ln α + ln(−2 ln α + 1)) − 1, at least 1.
 */
export function srmConcentration(alpha: number, plannedSubjects: number): number {
  const l = -2 * Math.log(alpha);
  return Math.max(1, plannedSubjects / (l + Math.log(l + 1)) - 1);
}

/**
 * ln BF of the counts x against the plan p, prior Dirichlet(k·p) (Lindon & Malek, eq. for the
 * Dirichlet-multinomial marginal over the multinomial's likelihood; the multinomial coefficient cancels):
 *   ln BF = ln Γ(k) − ln Γ(k + n) + Σ (ln Γ(k p_i + x_i) − ln Γ(k p_i)) − Σ x_i ln p_i.
 */
export function srmLogBayesFactor(counts: readonly number[], plan: readonly number[], concentration: number): number {
  let n = 0;
  let log = 0;
  for (let i = 0; i < counts.length; i++) {
    // An arm planned to get no one: any subject in it is a mismatch beyond doubt, and none adds nothing.
    if (plan[i] === 0) {
      if (counts[i] > 0) return Number.POSITIVE_INFINITY;
      continue;
    }
    const a = concentration * plan[i];
    n += counts[i];
    log += logGamma(a + counts[i]) - logGamma(a) - counts[i] * Math.log(plan[i]);
  }
  return log + logGamma(concentration) - logGamma(concentration + n);
}

/** What the check says: a mismatch; no mismatch larger than the tolerance; or too few subjects yet to tell. */
export type SrmVerdict = 'mismatch' | 'no-mismatch' | 'not-enough-data';

export interface SrmResult {
  /** Anytime-valid: min(previous looks' p, 1/BF now). */
  readonly pValue: number;
  readonly bayesFactor: number;
  readonly verdict: SrmVerdict;
  /** Each arm's share of the subjects, as counted. */
  readonly observed: readonly number[];
  /** Each arm's planned share. */
  readonly planned: readonly number[];
  /**
   * What the check can tell at the planned size (or at the subjects in, once past it): the smallest
   * departure from an arm's planned share, relative to it, it can rule out there when none is seen.
   */
  readonly resolution: number;
  /** The subjects it takes to rule out a departure of the tolerance, the least that says "no mismatch". */
  readonly subjectsToRuleOut: number;
}

export interface SrmOptions {
  readonly alpha: number;
  readonly plannedSubjects: number;
  /**
   * The largest departure from an arm's planned share, relative to it, that counts as no mismatch (0.01:
   * 50/50 read as 49.5/50.5 is still no mismatch).
   */
  readonly tolerance: number;
  /** The p-value of the previous look, for the running minimum (1 at the first). */
  readonly previousPValue?: number;
}

/**
 * The smallest departure from the plan, relative to an arm's share, the check rules out at `n` subjects
 * where the counts match the plan exactly: the widest arm's confidence sequence half-width over its share.
 */
function resolutionAt(planned: readonly number[], n: number, alpha: number, rho: number): number {
  let widest = 0;
  for (const p of planned) {
    if (p === 0) continue;
    const { upper } = sequentialInterval({ estimate: p, standardError: Math.sqrt((p * (1 - p)) / n) }, n, alpha, rho);
    widest = Math.max(widest, (upper - p) / p);
  }
  return widest;
}

/** The fewest subjects at which resolutionAt is within `tolerance`: the width shrinks as n grows, so a bisection finds it. */
function subjectsFor(planned: readonly number[], tolerance: number, alpha: number, rho: number): number {
  let low = 2;
  let high = 2;
  while (resolutionAt(planned, high, alpha, rho) > tolerance && high < 1e18) high *= 2;
  // To a millionth of the answer: past 2^53 subjects a double cannot bisect down to one.
  while (high - low > Math.max(1, high * 1e-6)) {
    const mid = Math.floor((low + high) / 2);
    if (resolutionAt(planned, mid, alpha, rho) > tolerance) low = mid;
    else high = mid;
  }
  return high;
}

/**
 * The sequential sample-ratio check of `counts` (subjects per arm) against `weights` (the planned
 * allocation, any scale; 0 for an arm that should get no one, as a variant outside the plan). A mismatch where p ≤ α. Otherwise the test cannot prove the split
 * right, only fail to find it wrong, so "no mismatch" is said only where the data could have seen one:
 * where each arm's always-valid confidence sequence for its share (sequential.ts, the arm against the
 * rest, at the same α and tuning) lies within the tolerance of its plan. Until then: not enough data
 * to rule out a mismatch.
 */
export function srmCheck(counts: readonly number[], weights: readonly number[], options: SrmOptions): SrmResult {
  const totalWeight = weights.reduce((a, b) => a + b, 0);
  const planned = weights.map((w) => w / totalWeight);
  const n = counts.reduce((a, b) => a + b, 0);
  const observed = counts.map((c) => (n === 0 ? 0 : c / n));
  const logBf = srmLogBayesFactor(counts, planned, srmConcentration(options.alpha, options.plannedSubjects));
  const pValue = Math.min(options.previousPValue ?? 1, 1, Math.exp(-logBf));
  const rho = mixtureRho(options.alpha, options.plannedSubjects);
  let verdict: SrmVerdict;
  if (pValue <= options.alpha) verdict = 'mismatch';
  else {
    // An arm planned to get no one has none here (or the check found a mismatch): nothing to bound.
    const within = planned.every((p, i) => {
      if (p === 0) return true;
      const { lower, upper } = sequentialInterval(
        { estimate: observed[i], standardError: Math.sqrt((p * (1 - p)) / n) },
        n,
        options.alpha,
        rho,
      );
      return lower >= p * (1 - options.tolerance) && upper <= p * (1 + options.tolerance);
    });
    verdict = within ? 'no-mismatch' : 'not-enough-data';
  }
  return {
    pValue,
    bayesFactor: Math.exp(logBf),
    verdict,
    observed,
    planned,
    resolution: resolutionAt(planned, Math.max(n, options.plannedSubjects, 2), options.alpha, rho),
    subjectsToRuleOut: subjectsFor(planned, options.tolerance, options.alpha, rho),
  };
}

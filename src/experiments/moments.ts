// One arm's metric as exact sums, and its means, variances and covariance from them. The sums stay
// integers (BigInt) through every subtraction that could cancel (n·Σy² − (Σy)² is exact however large the
// sums), and become doubles only at the last division: a variance of ten million subjects' totals is
// then as precise as a double can say it, where Σy²/n − mean² in doubles could lose every digit.
import type { MetricSums } from '../events/tally/tally-file.js';

/**
 * How a metric reads a subject's total: `conversion`, whether the subject had the event at all (0 or 1);
 * `mean`, the subject's total of the event's values (0 for a subject without one).
 */
export type MetricKind = 'conversion' | 'mean';

/** The covariate's sums (each subject's total before its exposure, x): Σx, Σx², Σxy. */
export interface CovariateSums {
  readonly sum: bigint;
  readonly sumOfSquares: bigint;
  readonly sumOfProducts: bigint;
}

/**
 * An arm's metric over its n subjects as integers: y of each subject is `sum`'s unit times 1/`scale`
 * (squares and products 1/scale²). `covariate` is null where the stored sums cannot give Σxy of the
 * values the metric reads (a conversion's 0/1 is not the total the stored Σxy multiplies).
 */
export interface ArmSums {
  readonly n: number;
  readonly scale: number;
  readonly sum: bigint;
  readonly sumOfSquares: bigint;
  readonly covariate: CovariateSums | null;
}

/** An arm's moments, in the metric's own units: mean and sample variance of y, of x, and their covariance. */
export interface ArmMoments {
  readonly n: number;
  readonly mean: number;
  readonly variance: number;
  /** Null where the arm has no covariate (see ArmSums). */
  readonly covariate: { readonly mean: number; readonly variance: number; readonly covariance: number } | null;
}

const kMillionths = 1e6;

/**
 * An arm's sums of a metric from what the tally stores: `subjects` exposed to the arm, `sums` its
 * MetricSums (undefined where none of them had an event). A conversion's y is 1 for each subject with an
 * event, so Σy = Σy² = the subjects with one; a mean's y is the subject's total, in millionths.
 */
export function armSums(kind: MetricKind, subjects: number, sums: MetricSums | undefined): ArmSums {
  if (kind === 'conversion') {
    const converted = BigInt(sums?.subjects ?? 0);
    return { n: subjects, scale: 1, sum: converted, sumOfSquares: converted, covariate: null };
  }
  return {
    n: subjects,
    scale: kMillionths,
    sum: sums?.sum ?? 0n,
    sumOfSquares: sums?.sumOfSquares ?? 0n,
    covariate: {
      sum: sums?.covariateSum ?? 0n,
      sumOfSquares: sums?.covariateSumOfSquares ?? 0n,
      sumOfProducts: sums?.sumOfProducts ?? 0n,
    },
  };
}

/** The sums of two arms' subjects taken together (CUPED's pooled slope reads them). */
export function pooledSums(a: ArmSums, b: ArmSums): ArmSums {
  const covariate =
    a.covariate !== null && b.covariate !== null
      ? {
          sum: a.covariate.sum + b.covariate.sum,
          sumOfSquares: a.covariate.sumOfSquares + b.covariate.sumOfSquares,
          sumOfProducts: a.covariate.sumOfProducts + b.covariate.sumOfProducts,
        }
      : null;
  return { n: a.n + b.n, scale: a.scale, sum: a.sum + b.sum, sumOfSquares: a.sumOfSquares + b.sumOfSquares, covariate };
}

/**
 * n·Σuv − Σu·Σv, exact: n(n−1) times the sample covariance of u and v (their variance when u = v), in
 * units of 1/scale².
 */
export function centredProducts(n: number, sumOfProducts: bigint, sumU: bigint, sumV: bigint): bigint {
  return BigInt(n) * sumOfProducts - sumU * sumV;
}

/** The sample covariance (n − 1 in the denominator) from its exact centred products; 0 for fewer than 2 subjects. */
function sampleCovariance(n: number, scale: number, centred: bigint): number {
  if (n < 2) return 0;
  return Number(centred) / (n * (n - 1)) / (scale * scale);
}

/** An arm's moments from its sums: each an exact integer until the one division that makes it a double. */
export function armMoments(s: ArmSums): ArmMoments {
  const mean = s.n === 0 ? 0 : Number(s.sum) / s.scale / s.n;
  const variance = sampleCovariance(s.n, s.scale, centredProducts(s.n, s.sumOfSquares, s.sum, s.sum));
  if (s.covariate === null) return { n: s.n, mean, variance, covariate: null };
  const x = s.covariate;
  return {
    n: s.n,
    mean,
    variance,
    covariate: {
      mean: s.n === 0 ? 0 : Number(x.sum) / s.scale / s.n,
      variance: sampleCovariance(s.n, s.scale, centredProducts(s.n, x.sumOfSquares, x.sum, x.sum)),
      covariance: sampleCovariance(s.n, s.scale, centredProducts(s.n, x.sumOfProducts, x.sum, s.sum)),
    },
  };
}

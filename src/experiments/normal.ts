// The standard normal distribution's CDF and quantile, which the intervals, the Bayesian view and the
// sample-ratio check are read through. Node has no erf; these are the published double-precision
// algorithms, written out with their sources.

const kSqrt2Pi = Math.sqrt(2 * Math.PI);

/** c₀xⁿ + c₁xⁿ⁻¹ + … + cₙ. */
function horner(coefficients: readonly number[], x: number): number {
  let v = 0;
  for (const c of coefficients) v = v * x + c;
  return v;
}

const kHartNumerator = [
  3.52624965998911e-2, 0.700383064443688, 6.37396220353165, 33.912866078383, 112.079291497871, 221.213596169931, 220.206867912376,
];
const kHartDenominator = [
  8.83883476483184e-2, 1.75566716318264, 16.064177579207, 86.7807322029461, 296.564248779674, 637.333633378831, 793.826512519948,
  440.413735824752,
];

/**
 * P(Z <= z) for a standard normal Z: Hart's algorithm 5666 as given by G. West, "Better approximations to
 * cumulative normal functions", Wilmott Magazine (2005), figure 2: about 1e-15 absolute across the line.
 */
export function normalCdf(z: number): number {
  const x = Math.abs(z);
  let tail: number;
  if (x > 37) tail = 0;
  else {
    const e = Math.exp((-x * x) / 2);
    if (x < 7.07106781186547) tail = (e * horner(kHartNumerator, x)) / horner(kHartDenominator, x);
    else {
      let f = x + 0.65;
      f = x + 4 / f;
      f = x + 3 / f;
      f = x + 2 / f;
      f = x + 1 / f;
      tail = e / f / kSqrt2Pi;
    }
  }
  return z > 0 ? 1 - tail : tail;
}

const kA = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
const kB = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572, 1];
const kC = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const kD = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416, 1];
const kLowTail = 0.02425;

/**
 * z with P(Z <= z) = p, for 0 < p < 1: P. J. Acklam's rational approximation (relative error 1.15e-9),
 * then one step of Halley's method on normalCdf, which brings it to double precision.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must lie strictly between 0 and 1, got ${p}`);
  let z: number;
  if (p < kLowTail || p > 1 - kLowTail) {
    const q = Math.sqrt(-2 * Math.log(p < kLowTail ? p : 1 - p));
    z = horner(kC, q) / horner(kD, q);
    if (p > kLowTail) z = -z;
  } else {
    const q = p - 0.5;
    const r = q * q;
    z = (horner(kA, r) * q) / horner(kB, r);
  }
  const u = (normalCdf(z) - p) * kSqrt2Pi * Math.exp((z * z) / 2);
  return z - u / (1 + (z * u) / 2);
}

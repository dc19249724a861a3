// What the simulation tests share: a small seeded generator, and arms whose subjects' outcomes are
// summed as the tally sums them, then served as the statistics view (src/events/statistics.ts) the
// results are computed from. Each subject's values are drawn one by one; the sums are kept as integers
// of a unit of the test's choosing (exact in a double below 2^53, checked) and become the tally's
// millionths when the view is made, so the engine reads exactly what the store would hold.
import { type ExperimentStatistics, statisticsView } from '../../src/events/statistics.js';
import type { ExperimentPlan } from '../../src/experiments/results.js';
import { logGamma } from '../../src/experiments/srm.js';
import type { MetricSums } from '../../src/events/tally/tally-file.js';

/** xoshiro128** (Blackman & Vigna), seeded through splitmix32: fast, and the same stream on every machine. */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spare: number | null = null;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
  }

  private uint32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform on [0, 1). */
  uniform(): number {
    return this.uint32() / 4294967296;
  }

  /** A standard normal (Marsaglia's polar method; the second of each pair kept for the next call). */
  normal(): number {
    if (this.spare !== null) {
      const z = this.spare;
      this.spare = null;
      return z;
    }
    for (;;) {
      const u = 2 * this.uniform() - 1;
      const v = 2 * this.uniform() - 1;
      const s = u * u + v * v;
      if (s > 0 && s < 1) {
        const f = Math.sqrt((-2 * Math.log(s)) / s);
        this.spare = v * f;
        return u * f;
      }
    }
  }
}

/**
 * A draw of Binomial(n, p), exactly (up to a double's rounding of the probabilities): inversion over the
 * outcomes taken from the mode outwards, each probability from its neighbour's (pmf(k + 1) / pmf(k) =
 * (n − k) / (k + 1) · p / (1 − p)), so a draw costs a few standard deviations of steps, not n.
 */
export function binomial(random: Random, n: number, p: number): number {
  const mode = Math.floor((n + 1) * p);
  const atMode = Math.exp(logGamma(n + 1) - logGamma(mode + 1) - logGamma(n - mode + 1) + mode * Math.log(p) + (n - mode) * Math.log1p(-p));
  const odds = p / (1 - p);
  let u = random.uniform() - atMode;
  let up = mode;
  let down = mode;
  let pUp = atMode;
  let pDown = atMode;
  while (u >= 0 && (up < n || down > 0)) {
    if (up < n) {
      pUp *= ((n - up) / (up + 1)) * odds;
      up++;
      u -= pUp;
      if (u < 0) return up;
    }
    if (down > 0) {
      pDown *= down / (n - down + 1) / odds;
      down--;
      u -= pDown;
      if (u < 0) return down;
    }
  }
  // u < 0 at the mode, or every outcome taken and u, by rounding, a hair above 0: the mode, the likeliest.
  return mode;
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** One arm's sums of one metric, as the tally keeps them, in integers of the test's unit. */
export class MetricTally {
  events = 0;
  subjects = 0;
  sum = 0;
  sumOfSquares = 0;
  covariateEvents = 0;
  covariateSubjects = 0;
  covariateSum = 0;
  covariateSumOfSquares = 0;
  sumOfProducts = 0;

  /** A subject's totals after (y) and before (x) exposure, integers of the unit, with its events' counts. */
  add(y: number, events: number, x = 0, covariateEvents = 0): void {
    this.events += events;
    this.subjects += events > 0 ? 1 : 0;
    this.sum += y;
    this.sumOfSquares += y * y;
    this.covariateEvents += covariateEvents;
    this.covariateSubjects += covariateEvents > 0 ? 1 : 0;
    this.covariateSum += x;
    this.covariateSumOfSquares += x * x;
    this.sumOfProducts += x * y;
  }

  /** `count` subjects alike, each with the totals `add` takes: what `count` calls of it would sum. */
  addAlike(count: number, y: number, events: number, x = 0, covariateEvents = 0): void {
    this.events += count * events;
    this.subjects += events > 0 ? count : 0;
    this.sum += count * y;
    this.sumOfSquares += count * y * y;
    this.covariateEvents += count * covariateEvents;
    this.covariateSubjects += covariateEvents > 0 ? count : 0;
    this.covariateSum += count * x;
    this.covariateSumOfSquares += count * x * x;
    this.sumOfProducts += count * x * y;
  }

  /** As the tally stores them: millionths (squares in millionths²), `unit` millionths to the test's unit. */
  stored(unit: bigint): MetricSums {
    const exact = (n: number) => {
      if (!Number.isSafeInteger(n)) throw new Error(`a simulated sum left a double's exact integers: ${n}`);
      return BigInt(n);
    };
    return {
      events: this.events,
      subjects: this.subjects,
      sum: exact(this.sum) * unit,
      sumOfSquares: exact(this.sumOfSquares) * unit * unit,
      covariateEvents: this.covariateEvents,
      covariateSubjects: this.covariateSubjects,
      covariateSum: exact(this.covariateSum) * unit,
      covariateSumOfSquares: exact(this.covariateSumOfSquares) * unit * unit,
      sumOfProducts: exact(this.sumOfProducts) * unit * unit,
    };
  }
}

/** An arm as the tally keeps it: its subjects, and its sums per metric. */
export interface ArmTally {
  subjects: number;
  readonly metrics: Map<string, MetricTally>;
}

function arm(metrics: readonly string[]): ArmTally {
  return { subjects: 0, metrics: new Map(metrics.map((m) => [m, new MetricTally()])) };
}

/** The statistics view of the arms, as GET /api/v1/experiments/{key}/statistics would serve it. */
export function statisticsOf(arms: ReadonlyMap<string, ArmTally>, unit: bigint): ExperimentStatistics {
  const tally = {
    arms: [...arms].map(([variant, a]) => ({ variant, subjects: a.subjects })),
    sums: [...arms].flatMap(([variant, a]) => [...a.metrics].map(([metric, m]) => ({ variant, metric, sums: m.stored(unit) }))),
  };
  return statisticsView('simulated', null, tally);
}

/** The plan of an even A/B test of "off" (the control) against "on". */
export function evenPlan(metrics: ExperimentPlan['metrics'], plannedSubjects: number): ExperimentPlan {
  return {
    control: 'off',
    allocation: [
      { variant: 'off', weight: 1 },
      { variant: 'on', weight: 1 },
    ],
    metrics,
    plannedSubjects,
  };
}

/** Fresh arms "off" and "on", each with the metrics named. */
export function evenArms(metrics: readonly string[]): Map<string, ArmTally> {
  return new Map([
    ['off', arm(metrics)],
    ['on', arm(metrics)],
  ]);
}

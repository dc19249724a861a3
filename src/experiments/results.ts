// An experiment's results from its statistics as Flagwire serves them (src/events/statistics.ts): per
// treatment and metric the effect with its always-valid intervals, CUPED's share of variance removed,
// the Bayesian chance to beat control, and a sentence; and the sample-ratio check over every arm. Pure
// and O(arms × metrics): the sums are the whole input, however many subjects they count.
import type { ExperimentStatistics } from '../events/statistics.js';
import type { MetricSums } from '../events/tally/tally-file.js';
import { posterior } from './bayes.js';
import { cupedTheta } from './cuped.js';
import { absoluteEffect, type Estimate, relativeEffect } from './effect.js';
import { armMoments, armSums, type MetricKind } from './moments.js';
import { mixtureRho, sequentialInterval } from './sequential.js';
import { type SrmResult, srmCheck } from './srm.js';
import { metricVerdict, srmSentence, type VerdictStage } from './verdict.js';
import type { EffectResult, MetricComparison } from './comparison.js';

/** What the results are computed against: the experiment's plan. */
export interface ExperimentPlan {
  readonly control: string;
  /** Every arm with its planned weight (positive, any scale), the control's included. */
  readonly allocation: readonly { readonly variant: string; readonly weight: number }[];
  readonly metrics: readonly { readonly metric: string; readonly kind: MetricKind }[];
  /** Subjects planned over all arms (at least 1): the confidence sequences and the sample-ratio check are tuned to it. */
  readonly plannedSubjects: number;
}

/** The choices of the analysis, each with the default docs/statistics.md gives reasons for. */
export interface AnalysisOptions {
  /** The error rate of every interval and test, strictly between 0 and 1 (the caller checks it). */
  readonly alpha: number;
  /** The Bayesian lens's prior on the effect: null flat; τ for N(0, τ²). */
  readonly priorSd: number | null;
  /** The sample-ratio check's tolerance, relative to each arm's planned share. */
  readonly srmTolerance: number;
  /** The sample-ratio check's p-value at the previous look, for its running minimum. */
  readonly previousSrmPValue: number;
}

export const kDefaultAnalysis: AnalysisOptions = { alpha: 0.05, priorSd: null, srmTolerance: 0.01, previousSrmPValue: 1 };

export interface ExperimentResults {
  /** The check over the plan's arms, then any variant outside the plan that the statistics hold. */
  readonly srm: SrmResult & { readonly variants: readonly string[]; readonly sentence: string };
  readonly comparisons: readonly MetricComparison[];
}

/** An exact decimal of the statistics view as integer millionths (`power` 2: millionths squared). */
export function parseExactDecimal(text: string, power: 1 | 2): bigint {
  const scale = 6 * power;
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = (negative ? text.slice(1) : text).split('.');
  const n = BigInt(whole + fraction.padEnd(scale, '0'));
  return negative ? -n : n;
}

type MetricStatistics = ExperimentStatistics['variants'][number]['metrics'][number];

function storedSums(m: MetricStatistics): MetricSums {
  return {
    events: m.events,
    subjects: m.subjects,
    sum: parseExactDecimal(m.sum, 1),
    sumOfSquares: parseExactDecimal(m.sumOfSquares, 2),
    covariateEvents: m.covariate.events,
    covariateSubjects: m.covariate.subjects,
    covariateSum: parseExactDecimal(m.covariate.sum, 1),
    covariateSumOfSquares: parseExactDecimal(m.covariate.sumOfSquares, 2),
    sumOfProducts: parseExactDecimal(m.sumOfProducts, 2),
  };
}

function withInterval(effect: Estimate, n: number, alpha: number, rho: number): EffectResult {
  return { ...effect, ...sequentialInterval(effect, n, alpha, rho) };
}

/** Which side of 0 an always-valid interval lies on, if it lies on one. */
function sideOf(e: EffectResult): MetricComparison['decision'] {
  return e.lower > 0 ? 'higher' : e.upper < 0 ? 'lower' : 'inconclusive';
}

/**
 * The results of an experiment from its statistics view, against its plan; `stage` (where the experiment
 * stands) lets the primary metric's sentences say what to do, and without it they say only what is shown.
 */
export function experimentResults(
  statistics: ExperimentStatistics,
  plan: ExperimentPlan,
  options: AnalysisOptions = kDefaultAnalysis,
  stage?: VerdictStage,
): ExperimentResults {
  const byVariant = new Map(statistics.variants.map((v) => [v.variant, v]));
  const subjectsOf = (variant: string) => byVariant.get(variant)?.subjects ?? 0;
  const sumsOf = (variant: string, metric: string) => {
    const m = byVariant.get(variant)?.metrics.find((s) => s.metric === metric);
    return m === undefined ? undefined : storedSums(m);
  };
  const variants = plan.allocation.map((a) => a.variant);
  // A variant the plan does not name that got subjects anyway counts in the check as an arm planned none.
  const planned = new Set(variants);
  const unplanned = statistics.variants.filter((v) => !planned.has(v.variant)).map((v) => v.variant);
  const srm = srmCheck([...variants, ...unplanned].map(subjectsOf), [...plan.allocation.map((a) => a.weight), ...unplanned.map(() => 0)], {
    alpha: options.alpha,
    plannedSubjects: plan.plannedSubjects,
    tolerance: options.srmTolerance,
    previousPValue: options.previousSrmPValue,
  });
  const subjects = variants.reduce((total, v) => total + subjectsOf(v), 0);
  const rho = mixtureRho(options.alpha, plan.plannedSubjects);
  const comparisons: MetricComparison[] = [];
  for (const { metric, kind } of plan.metrics) {
    const controlSums = armSums(kind, subjectsOf(plan.control), sumsOf(plan.control, metric));
    const control = armMoments(controlSums);
    for (const variant of variants) {
      if (variant === plan.control) continue;
      const treatmentSums = armSums(kind, subjectsOf(variant), sumsOf(variant, metric));
      const treatment = armMoments(treatmentSums);
      const n = control.n + treatment.n;
      const theta = cupedTheta(controlSums, treatmentSums);
      const absolute = withInterval(absoluteEffect(control, treatment, theta), n, options.alpha, rho);
      const lift = relativeEffect(control, treatment, theta);
      const relative = lift === null ? null : withInterval(lift, n, options.alpha, rho);
      const unadjustedSe = absoluteEffect(control, treatment, 0).standardError;
      const cuped =
        controlSums.covariate === null
          ? null
          : {
              theta,
              // Nothing to reduce where the spread is 0 or not known yet (an arm of fewer than 2 subjects).
              varianceReduction: unadjustedSe > 0 && Number.isFinite(unadjustedSe) ? 1 - (absolute.standardError / unadjustedSe) ** 2 : 0,
            };
      const read = relative ?? absolute;
      // Decided only where the lift and the difference agree: a page showing both never contradicts itself.
      const decision = relative === null || sideOf(relative) === sideOf(absolute) ? sideOf(read) : 'inconclusive';
      const comparison = {
        metric,
        kind,
        variant,
        control: { subjects: control.n, mean: control.mean },
        treatment: { subjects: treatment.n, mean: treatment.mean },
        absolute,
        relative,
        cuped,
        bayes: posterior(read, options.priorSd, options.alpha),
        decision,
      } as const;
      comparisons.push({
        ...comparison,
        verdict: metricVerdict(comparison, {
          srm,
          control: plan.control,
          alpha: options.alpha,
          subjects,
          plannedSubjects: plan.plannedSubjects,
          stage,
        }),
      });
    }
  }
  const sentence = srmSentence(srm, subjects, plan.plannedSubjects, options.srmTolerance);
  return { srm: { ...srm, variants: [...variants, ...unplanned], sentence }, comparisons };
}

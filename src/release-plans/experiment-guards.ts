// A rollout's guard on an experiment (issue 59, item 4): what makes one valid against the experiment it
// names, and what a reading of the experiment's stored statistics means. Pure rules beside guards.ts:
// the writer checks a guard with experimentGuardProblems when a rollout starts, and judges each reading
// with judgeExperimentReading in the transaction that records it, against the experiment as it is then.
//
// The guard is read at every interval, so it decides only by what stays valid however often it looks:
// a metric by the always-valid confidence sequence at the experiment's alpha (never a fixed-horizon
// test, which read every interval would fire on noise), the sample ratio by the sequential Bayes factor.
import type { ExperimentStatistics } from '../events/statistics.js';
import type { Experiment } from '../experiments/records.js';
import type { MetricComparison } from '../experiments/comparison.js';
import { experimentResults, kDefaultAnalysis } from '../experiments/results.js';
import type { ExperimentGuardInput } from './experiment-guard-shape.js';
import { numberFormatOnUse } from '../load-on-use.js';
import type { GuardReading, MetricGuardFigures, RolloutGuard, SampleRatioGuardFigures } from './rollouts.js';

/**
 * What is wrong with an experiment guard against the experiment it names, looked up in the rollout's
 * project and environment (undefined: none there): it must run on the rollout's flag, and a metric
 * guard's metric must be one of its metrics.
 */
export function experimentGuardProblems(
  guard: ExperimentGuardInput,
  experiment: Experiment | undefined,
  flagId: string,
  env: string | null,
): string[] {
  const key = guard.experiment!;
  const where = env === null ? 'this project' : `environment ${env}`;
  if (experiment === undefined) return [`guard.experiment: no experiment "${key}" in ${where}`];
  if (experiment.flagId !== flagId)
    return [`guard.experiment: experiment "${key}" runs on flag ${experiment.flagId}, not on the flag this rollout drives (${flagId})`];
  if (guard.metric !== undefined && !experiment.metrics.some((m) => m.metric === guard.metric))
    return [
      `guard.metric: "${guard.metric}" is not a metric of experiment "${key}" (${experiment.metrics.map((m) => m.metric).join(', ')})`,
    ];
  return [];
}

const kFigure = numberFormatOnUse({ maximumSignificantDigits: 3 });

function finite(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/** A Bayes factor as people read it: 3 significant digits, in powers of ten once it is past a million. */
function bayesFactorText(factor: number | null): string {
  if (factor === null) return 'infinite';
  return factor < 1e6 ? kFigure.format(factor) : factor.toPrecision(3);
}

/** An effect as people read it: a lift in %, a difference as it is. */
function effectText(value: number, effect: 'relative' | 'absolute'): string {
  return effect === 'relative' ? `${kFigure.format(value * 100)}%` : kFigure.format(value);
}

/**
 * A reading of the experiment's statistics, judged: the analysis of src/experiments at the experiment's
 * alpha, given the lowest sample-ratio p-value its looks have kept. A metric breaches where a treatment is
 * worse than the control with confidence, by the direction the guard names; the sample ratio where its
 * check finds a mismatch (the Bayes factor at 1/alpha or past it, at this look or an earlier one).
 */
export function judgeExperimentReading(
  guard: RolloutGuard,
  experiment: Experiment,
  statistics: ExperimentStatistics,
  at: number,
): GuardReading {
  const metrics = guard.sampleRatio ? [] : experiment.metrics.filter((m) => m.metric === guard.metric);
  const results = experimentResults(
    statistics,
    { control: experiment.control, allocation: experiment.variants, metrics, plannedSubjects: experiment.plannedSubjects },
    { ...kDefaultAnalysis, alpha: experiment.alpha, previousSrmPValue: experiment.lowestSrmPValue },
  );
  if (guard.sampleRatio) {
    const { srm } = results;
    const figures: SampleRatioGuardFigures = {
      experiment: experiment.key,
      bayesFactor: finite(srm.bayesFactor),
      pValue: srm.pValue,
      alpha: experiment.alpha,
      arms: srm.variants.map((variant, i) => ({
        variant,
        subjects: statistics.variants.find((v) => v.variant === variant)?.subjects ?? 0,
        planned: srm.planned[i]!,
        observed: srm.observed[i]!,
      })),
    };
    const breached = srm.verdict === 'mismatch';
    const split = figures.arms.map((a) => `${a.variant} ${a.subjects}`).join(', ');
    const planned = figures.arms.map((a) => `${a.variant} ${kFigure.format(a.planned * 100)}%`).join(', ');
    const factor = bayesFactorText(figures.bayesFactor);
    const note = breached
      ? `sample ratio mismatch in experiment ${experiment.key}: Bayes factor ${factor} (p = ${srm.pValue.toPrecision(2)}, at most alpha ${experiment.alpha}) for ${split}; planned ${planned}`
      : `no sample ratio mismatch found: Bayes factor ${factor} for ${split}`;
    return { at, value: figures.bayesFactor, breached, note, failures: 0, figures };
  }
  const worse = (c: MetricComparison) => {
    const read = c.relative ?? c.absolute;
    return guard.worse === 'lower' ? read.upper < 0 : read.lower > 0;
  };
  // The treatment that fares worst: one worse with confidence, else the one nearest to it (lowest p-value).
  const [chosen] = [...results.comparisons].sort(
    (a, b) => Number(worse(b)) - Number(worse(a)) || (a.relative ?? a.absolute).pValue - (b.relative ?? b.absolute).pValue,
  );
  if (chosen === undefined)
    return { at, value: null, breached: false, note: `no data: experiment ${experiment.key} has no treatment`, failures: 0 };
  const effect = chosen.relative === null ? 'absolute' : 'relative';
  const read = chosen.relative ?? chosen.absolute;
  const figures: MetricGuardFigures = {
    experiment: experiment.key,
    metric: chosen.metric,
    control: { variant: experiment.control, ...chosen.control },
    treatment: { variant: chosen.variant, ...chosen.treatment },
    effect,
    estimate: read.estimate,
    lower: finite(read.lower),
    upper: finite(read.upper),
    pValue: read.pValue,
    alpha: experiment.alpha,
  };
  const subjects = `${chosen.variant} ${chosen.treatment.subjects}, ${experiment.control} ${chosen.control.subjects} subjects`;
  if (figures.lower === null || figures.upper === null)
    return {
      at,
      value: null,
      breached: false,
      note: `not enough data yet in experiment ${experiment.key} (${subjects})`,
      failures: 0,
      figures,
    };
  const interval = `${effectText(read.estimate, effect)} (${effectText(read.lower, effect)} to ${effectText(read.upper, effect)}, always valid at alpha ${experiment.alpha}; ${subjects})`;
  const breached = worse(chosen);
  const said = `${effect === 'relative' ? 'lift' : 'difference'} ${interval}`;
  const note = breached
    ? `${chosen.variant} is worse than ${experiment.control} on ${chosen.metric} with confidence: ${said}`
    : `${chosen.variant} against ${experiment.control} on ${chosen.metric}: ${said}`;
  return { at, value: read.estimate, breached, note, failures: 0, figures };
}

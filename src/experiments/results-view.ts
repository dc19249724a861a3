// An experiment's results as the API answers them (issue 59, item 3): the analysis of src/experiments
// against the experiment's plan, with the sample-ratio check given the lowest p-value seen so far, the
// primary metric's daily intervals kept so far, and every bound that is infinite (nothing known yet) as
// null, since JSON has no infinity.
import { FlagwireError } from '../errors.js';
import { effectiveState } from '../flags/records/flag-state.js';
import { getFlag } from '../flags/records/flag-store.js';
import type { StoreReader } from '../store/interfaces.js';
import type { ExperimentStatistics } from '../events/statistics.js';
import { compileValidator } from '../model/validation.js';
import { type ExperimentLook, experimentView, intervalPointDue } from './experiment-commands.js';
import { type Experiment, experimentStatus, type IntervalPoint, planOf } from './records.js';
import type { EffectResult, MetricComparison } from './comparison.js';
import { experimentResults, kDefaultAnalysis } from './results.js';
import { type ExperimentResultsBody, ExperimentPlanFields } from './schemas.js';

const kPlanValidator = compileValidator(ExperimentPlanFields, { quoteKeys: false });

type Comparison = ExperimentResultsBody['comparisons'][number];

/** A number the analysis may leave infinite or undefined, as JSON carries it: null where it is not finite. */
function finite(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

function effectView(e: EffectResult) {
  return { estimate: e.estimate, standardError: finite(e.standardError), lower: finite(e.lower), upper: finite(e.upper), pValue: e.pValue };
}

function comparisonView(c: MetricComparison): Comparison {
  return {
    metric: c.metric,
    kind: c.kind,
    variant: c.variant,
    control: { ...c.control },
    treatment: { ...c.treatment },
    absolute: effectView(c.absolute),
    relative: c.relative === null ? null : effectView(c.relative),
    cuped: c.cuped === null ? null : { ...c.cuped },
    bayes:
      c.bayes === null
        ? null
        : {
            mean: c.bayes.mean,
            sd: finite(c.bayes.sd),
            chanceToBeatControl: c.bayes.chanceToBeatControl,
            lower: finite(c.bayes.lower),
            upper: finite(c.bayes.upper),
          },
    decision: c.decision,
    verdict: c.verdict,
  };
}

/**
 * The results of `experiment` from its statistics now, against its plan and its sample-ratio history;
 * `typedFlag` whether its flag has typed variants there (the step that ships one differs).
 */
export function experimentResultsView(experiment: Experiment, statistics: ExperimentStatistics, typedFlag: boolean): ExperimentResultsBody {
  // A plan kept before its fields were bounded (an alpha of 1e-300) cannot be computed: said, not a 500.
  const problems = kPlanValidator.problems(planOf(experiment));
  if (problems.length > 0)
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Experiment "${experiment.key}" has a plan its results cannot be computed against (${problems.join('; ')}): stop it and change its plan (its statistics are kept).`,
    );
  const results = experimentResults(
    statistics,
    {
      control: experiment.control,
      allocation: experiment.variants,
      metrics: experiment.metrics,
      plannedSubjects: experiment.plannedSubjects,
    },
    { ...kDefaultAnalysis, alpha: experiment.alpha, previousSrmPValue: experiment.lowestSrmPValue },
    {
      primaryMetric: experiment.primaryMetric,
      status: experimentStatus(experiment),
      flag: { id: experiment.flagId, environment: experiment.environment, typed: typedFlag },
    },
  );
  const comparisons = results.comparisons.map(comparisonView);
  return {
    experiment: experimentView({ ...experiment, lowestSrmPValue: Math.min(experiment.lowestSrmPValue, results.srm.pValue) }),
    srm: {
      pValue: results.srm.pValue,
      bayesFactor: finite(results.srm.bayesFactor),
      verdict: results.srm.verdict,
      variants: [...results.srm.variants],
      observed: [...results.srm.observed],
      planned: [...results.srm.planned],
      resolution: results.srm.resolution,
      subjectsToRuleOut: results.srm.subjectsToRuleOut,
      sentence: results.srm.sentence,
    },
    primary: comparisons.filter((c) => c.metric === experiment.primaryMetric),
    comparisons,
    history: (experiment.intervals ?? []).filter((p) => p.metric === experiment.primaryMetric).map(copyPoint),
  };
}

/** Whether the experiment's flag has typed variants in its environment (false where the flag is gone). */
export function hasTypedVariants(r: Pick<StoreReader, 'getKeyed'>, experiment: Experiment): boolean {
  const flag = getFlag(r, experiment.flagId);
  return flag !== undefined && effectiveState(flag, experiment.environment).typed !== undefined;
}

function copyPoint(p: IntervalPoint): IntervalPoint {
  return { at: p.at, metric: p.metric, comparisons: p.comparisons.map((c) => ({ ...c })) };
}

/** The primary metric's intervals in `results`, as a point of its history at `at`. */
function intervalPoint(results: ExperimentResultsBody, at: number): IntervalPoint {
  return {
    at,
    metric: results.experiment.primaryMetric,
    comparisons: results.primary.map((c) => {
      const read = c.relative ?? c.absolute;
      return {
        variant: c.variant,
        scale: c.relative === null ? 'absolute' : 'relative',
        estimate: read.estimate,
        lower: read.lower,
        upper: read.upper,
      };
    }),
  };
}

/**
 * What a look at the results at `now` keeps: the sample-ratio check's p-value where it is the lowest yet,
 * and the primary metric's intervals where they are the day's first look (null: nothing to keep, no write).
 */
export function lookOf(experiment: Experiment, results: ExperimentResultsBody, now: number): ExperimentLook | null {
  const point = intervalPointDue(experiment, now) ? intervalPoint(results, now) : null;
  if (!(results.srm.pValue < experiment.lowestSrmPValue) && point === null) return null;
  const { projectId, environment, key } = experiment;
  return { projectId, environment, key, pValue: results.srm.pValue, point };
}

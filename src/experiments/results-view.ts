// An experiment's results as the API answers them (issue 59, item 3): the analysis of src/experiments
// against the experiment's plan, with the sample-ratio check given the lowest p-value seen so far, and
// every bound that is infinite (nothing known yet) as null, since JSON has no infinity.
import type { ExperimentStatistics } from '../events/statistics.js';
import { experimentView } from './experiment-commands.js';
import type { Experiment } from './experiment-records.js';
import { type EffectResult, experimentResults, kDefaultAnalysis, type MetricComparison } from './results.js';
import type { ExperimentResultsBody } from './schemas.js';

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

/** The results of `experiment` from its statistics now, against its plan and its sample-ratio history. */
export function experimentResultsView(experiment: Experiment, statistics: ExperimentStatistics): ExperimentResultsBody {
  const results = experimentResults(
    statistics,
    {
      control: experiment.control,
      allocation: experiment.variants,
      metrics: experiment.metrics,
      plannedSubjects: experiment.plannedSubjects,
    },
    { ...kDefaultAnalysis, alpha: experiment.alpha, previousSrmPValue: experiment.lowestSrmPValue },
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
    },
    primary: comparisons.filter((c) => c.metric === experiment.primaryMetric),
    comparisons,
  };
}

/** What a look at the results keeps: the sample-ratio check's p-value, where it is the lowest yet (null: nothing to keep). */
export function srmLookOf(experiment: Experiment, results: ExperimentResultsBody) {
  return results.srm.pValue < experiment.lowestSrmPValue
    ? { projectId: experiment.projectId, environment: experiment.environment, key: experiment.key, pValue: results.srm.pValue }
    : null;
}

// An experiment's statistics as stored (issue 58, item 4): per variant its subjects, and per metric the
// exact sums the results are computed from (issue 59). Sums are exact decimals written as strings (JSON
// numbers are doubles, and a sum of squares outgrows their 53 bits long before it stops being exact).
import type { ExperimentTally, MetricSums } from './tally/tally-file.js';
import { type Static, Type } from '../typebox.js';

const Exact = (description: string) => Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$', description: `${description}, an exact decimal` });

const Totals = {
  events: Type.Integer({ minimum: 0, description: 'Events counted' }),
  subjects: Type.Integer({ minimum: 0, description: 'Subjects with at least one event' }),
  sum: Exact("Σ of each subject's total"),
  sumOfSquares: Exact("Σ of each subject's total squared"),
};

export const MetricStatistics = Type.Object({
  metric: Type.String({ description: "The tracked event name (a track event's key)" }),
  ...Totals,
  covariate: Type.Object(Totals, { description: "The same of each subject's outcomes before its exposure (CUPED's covariate)" }),
  sumOfProducts: Exact("Σ of each subject's total before exposure times its total after"),
});

export const ExperimentStatistics = Type.Object(
  {
    experiment: Type.String(),
    environment: Type.Union([Type.String(), Type.Null()], { description: 'null: a project without environments' }),
    variants: Type.Array(
      Type.Object({
        variant: Type.String(),
        subjects: Type.Integer({ minimum: 0, description: 'Subjects exposed, each counted once, in the variant of its first exposure' }),
        metrics: Type.Array(MetricStatistics),
      }),
    ),
  },
  { description: "An experiment's exact sufficient statistics in one environment (docs/events.md: Statistics)" },
);
export type ExperimentStatistics = Static<typeof ExperimentStatistics>;

/** `n` millionths (to the power `power`: sums are millionths, squares and products millionths squared) as an exact decimal. */
export function exactDecimal(n: bigint, power: 1 | 2): string {
  const scale = 6 * power;
  const negative = n < 0n;
  const digits = (negative ? -n : n).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, -scale);
  const fraction = digits.slice(-scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

function metricView(metric: string, s: MetricSums): Static<typeof MetricStatistics> {
  return {
    metric,
    events: s.events,
    subjects: s.subjects,
    sum: exactDecimal(s.sum, 1),
    sumOfSquares: exactDecimal(s.sumOfSquares, 2),
    covariate: {
      events: s.covariateEvents,
      subjects: s.covariateSubjects,
      sum: exactDecimal(s.covariateSum, 1),
      sumOfSquares: exactDecimal(s.covariateSumOfSquares, 2),
    },
    sumOfProducts: exactDecimal(s.sumOfProducts, 2),
  };
}

/** The statistics of `experiment` in `environment` from what the tally file holds, variants and metrics in name order. */
export function statisticsView(experiment: string, environment: string | null, tally: ExperimentTally): ExperimentStatistics {
  return {
    experiment,
    environment,
    variants: tally.arms.map(({ variant, subjects }) => ({
      variant,
      subjects,
      metrics: tally.sums.filter((s) => s.variant === variant).map((s) => metricView(s.metric, s.sums)),
    })),
  };
}

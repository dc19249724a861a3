// The shapes experiments take and answer with (issue 59), as TypeBox values: the single source of their
// types and of the OpenAPI document's components.
import { type Static, Type } from '../typebox.js';
import { ExperimentKey } from '../model/schemas.js';

/** Arms an experiment may compare, the control's included. */
export const kMaxArms = 20;
/** Metrics an experiment may read. */
export const kMaxMetrics = 20;
/** Daily interval points an experiment keeps (its results' history): a quarter of a year of days, a few kilobytes. */
export const kMaxIntervalPoints = 90;
/**
 * The error rates a plan may take (docs/decisions.md: Experiment statistics). Below about 1e-16,
 * 1 − α/2 rounds to 1 and no quantile exists; the floor is far above that, where a sequence still
 * narrows within any plausible planned size.
 */
export const kMinAlpha = 0.001;
export const kMaxAlpha = 0.5;

const kVariantName = Type.String({
  minLength: 1,
  maxLength: 200,
  description: "A variant as the flag's answers name it (a boolean flag's `on` or `off`)",
});

const Arm = Type.Object(
  {
    variant: kVariantName,
    weight: Type.Number({
      // A floor, not just > 0: a weight that rounds to no share at all would plan the arm to get no one.
      minimum: 1e-6,
      maximum: 1e6,
      description: "The arm's planned share, any positive scale (50 and 50, or 1 and 1): what the sample-ratio check expects",
      'x-error': 'must be a positive number from 0.000001 to 1000000',
    }),
  },
  { additionalProperties: false },
);

const Metric = Type.Object(
  {
    metric: Type.String({ minLength: 1, maxLength: 200, description: "A tracked event's key (`track` events: docs/events.md)" }),
    kind: Type.Union([Type.Literal('conversion'), Type.Literal('mean')], {
      description:
        "How a subject's events count: `conversion`, whether the subject had the event at all; `mean`, the subject's total of the event's values (summed per subject, averaged over subjects)",
      'x-error': 'must be "conversion" or "mean"',
    }),
  },
  { additionalProperties: false },
);

const kFlagId = Type.String({ minLength: 1, maxLength: 200, description: 'The flag the experiment runs on (its id, `flg_…`)' });
const kPlannedSubjects = Type.Integer({
  minimum: 1,
  maximum: 1e12,
  description: 'Subjects planned over every arm: the confidence sequences and the sample-ratio check are tuned to it',
  'x-error': 'must be a whole number of subjects, at least 1',
});
const kAlpha = Type.Number({
  minimum: kMinAlpha,
  maximum: kMaxAlpha,
  description: `The error rate of every interval and test (default 0.05), from ${kMinAlpha} to ${kMaxAlpha}`,
  'x-error': `must be a number from ${kMinAlpha} to ${kMaxAlpha} (an error rate strictly between 0 and 1 that the statistics can be computed at)`,
});
const kArms = Type.Array(Arm, { minItems: 2, maxItems: kMaxArms, description: 'The arms compared, the control among them' });
const kMetrics = Type.Array(Metric, { minItems: 1, maxItems: kMaxMetrics, description: 'The metrics read' });
const kControl = Type.String({ minLength: 1, maxLength: 200, description: 'The arm the others are compared with' });
const kPrimary = Type.String({ minLength: 1, maxLength: 200, description: 'The metric the experiment decides on: one of metrics' });

/** An experiment's plan as a body gives it: what the API's create and a flag file's entry share. */
const kPlanFields = {
  variants: kArms,
  control: kControl,
  metrics: kMetrics,
  primaryMetric: kPrimary,
  plannedSubjects: kPlannedSubjects,
  alpha: Type.Optional(kAlpha),
};

/** An experiment's plan with its bounds: what a stored record is held to before its results are computed. */
export const ExperimentPlanFields = Type.Object({ ...kPlanFields, alpha: kAlpha }, { additionalProperties: false });

/** The body of POST /api/v1/experiments. */
export const ExperimentCreate = Type.Object({ key: ExperimentKey, flagId: kFlagId, ...kPlanFields }, { additionalProperties: false });
export type ExperimentCreate = Static<typeof ExperimentCreate>;

/**
 * An experiment as a flag file declares it (docs/flags-as-code.md: Experiments): the create body but that
 * the flag is named, not identified (a file names everything), and its key is the entry's. Whether it
 * runs is not written here: its flag state's `experiment` says it (docs/decisions.md).
 */
export const ExperimentInFile = Type.Object(
  {
    flag: Type.String({ minLength: 1, maxLength: 200, description: "The flag it runs on, by name: one of the file's flags" }),
    ...kPlanFields,
  },
  { additionalProperties: false },
);
export type ExperimentInFile = Static<typeof ExperimentInFile>;

/** The body of PATCH /api/v1/experiments/{key}: what it names changes, the rest stays. */
export const ExperimentUpdate = Type.Partial(Type.Omit(ExperimentCreate, ['key']), { additionalProperties: false });
export type ExperimentUpdate = Static<typeof ExperimentUpdate>;

const kTime = (what: string) => Type.Union([Type.Integer(), Type.Null()], { description: `${what} (Unix ms); null: not yet` });

export const ExperimentBody = Type.Object({
  key: Type.String(),
  environment: Type.Union([Type.String(), Type.Null()], { description: 'The environment; null in a single-environment project' }),
  flagId: Type.String(),
  variants: Type.Array(Type.Object({ variant: Type.String(), weight: Type.Number() })),
  control: Type.String(),
  metrics: Type.Array(Type.Object({ metric: Type.String(), kind: Type.Union([Type.Literal('conversion'), Type.Literal('mean')]) })),
  primaryMetric: Type.String(),
  plannedSubjects: Type.Integer(),
  alpha: Type.Number(),
  status: Type.Union([Type.Literal('draft'), Type.Literal('running'), Type.Literal('stopped')]),
  startedAt: kTime('When it last started'),
  stoppedAt: kTime('When it last stopped'),
  lowestSrmPValue: Type.Number({
    description: "The sample-ratio check's lowest p-value over every look at its results (1 before the first)",
  }),
  createdAt: Type.Integer({ description: 'Unix ms' }),
  updatedAt: Type.Integer({ description: 'Unix ms' }),
});
export type ExperimentBody = Static<typeof ExperimentBody>;

export const ExperimentList = Type.Object({
  experiments: Type.Array(ExperimentBody, { description: "The environment's experiments, by key" }),
});
export type ExperimentList = Static<typeof ExperimentList>;

export const ExperimentDeleted = Type.Object({ key: Type.String(), deleted: Type.Literal(true) });
export type ExperimentDeleted = Static<typeof ExperimentDeleted>;

/** A bound that may be infinite (nothing known yet): null then, as JSON has no infinity. */
const Bound = Type.Union([Type.Number(), Type.Null()], { description: 'null: unbounded (nothing known yet)' });

const Effect = Type.Object({
  estimate: Type.Number(),
  standardError: Bound,
  lower: Bound,
  upper: Bound,
  pValue: Type.Number({ description: 'Always valid: the smallest alpha whose sequence excludes 0 now' }),
});

const Comparison = Type.Object({
  metric: Type.String(),
  kind: Type.Union([Type.Literal('conversion'), Type.Literal('mean')]),
  variant: Type.String(),
  control: Type.Object({ subjects: Type.Integer(), mean: Type.Number() }),
  treatment: Type.Object({ subjects: Type.Integer(), mean: Type.Number() }),
  absolute: Effect,
  relative: Type.Union([Effect, Type.Null()], { description: "The lift relative to the control's mean; null where that mean is 0" }),
  cuped: Type.Union([Type.Object({ theta: Type.Number(), varianceReduction: Type.Number() }), Type.Null()]),
  bayes: Type.Union([
    Type.Object({ mean: Type.Number(), sd: Bound, chanceToBeatControl: Type.Number(), lower: Bound, upper: Bound }),
    Type.Null(),
  ]),
  decision: Type.Union([Type.Literal('higher'), Type.Literal('lower'), Type.Literal('inconclusive')]),
  verdict: Type.String(),
});

const IntervalPoint = Type.Object({
  at: Type.Integer({ description: 'When the look was (Unix ms)' }),
  metric: Type.String(),
  comparisons: Type.Array(
    Type.Object({
      variant: Type.String(),
      scale: Type.Union([Type.Literal('relative'), Type.Literal('absolute')], {
        description: "`relative`: the lift; `absolute`: the difference (the control's mean was 0)",
      }),
      estimate: Type.Number(),
      lower: Bound,
      upper: Bound,
    }),
  ),
});

/** GET /api/v1/experiments/{key}/results: the experiment, its statistics' subjects and the analysis (docs/statistics.md). */
export const ExperimentResultsBody = Type.Object(
  {
    experiment: ExperimentBody,
    srm: Type.Object({
      pValue: Type.Number({ description: 'Anytime valid: the lowest over every look' }),
      bayesFactor: Bound,
      verdict: Type.Union([Type.Literal('mismatch'), Type.Literal('no-mismatch'), Type.Literal('not-enough-data')]),
      variants: Type.Array(Type.String(), { description: "The plan's arms, then any variant outside the plan that got subjects" }),
      observed: Type.Array(Type.Number()),
      planned: Type.Array(Type.Number()),
      resolution: Type.Number({
        description:
          "The smallest departure from an arm's planned share, relative to it, the check can rule out at the planned size (or at the subjects in, once past it)",
      }),
      subjectsToRuleOut: Type.Number({
        description: "The subjects it takes to rule out a 1% departure, the least that says 'no mismatch'",
      }),
      sentence: Type.String({ description: 'The check in words: what it found, and what it can and cannot tell (docs/statistics.md)' }),
    }),
    primary: Type.Array(Comparison, { description: "The primary metric's comparisons, one per treatment" }),
    comparisons: Type.Array(Comparison, { description: 'Every metric and treatment' }),
    history: Type.Array(IntervalPoint, {
      maxItems: kMaxIntervalPoints,
      description:
        "The primary metric's intervals at the first look at the results on each UTC day the experiment ran, oldest first (at most 90): the statistics are cumulative, so past intervals are kept, not computed again",
    }),
  },
  { description: "An experiment's results against its plan (docs/statistics.md)" },
);
export type ExperimentResultsBody = Static<typeof ExperimentResultsBody>;

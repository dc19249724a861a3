// The shapes release plans answer with, as TypeBox values: the single source of their types and of
// the OpenAPI document's components.
import { type Static, Type } from '../typebox.js';
import type { RolloutPlan, RolloutStatus } from './rollouts.js';
import type { ScheduledChange } from './schedules.js';
import { kDefaultGuardIntervalMs, kMaxGuardExpressionLength, kMaxGuardIntervalMs, kMinGuardIntervalMs } from './guards.js';
import type { ProjectAccess } from '../console-route/project-access.js';
import { kExperimentKeyPattern } from '../model/schemas.js';

/** The body of POST /api/v1/flags/{id}/schedules: when, and the PATCH body to apply then. */
export const ScheduleCreate = Type.Object(
  {
    at: Type.Integer({
      minimum: 0,
      description: 'When to apply it, Unix ms (in the future)',
      'x-error': 'must be a time in Unix milliseconds',
    }),
    patch: Type.Record(Type.String(), Type.Unknown(), {
      description: 'What to change: a PATCH body of /api/v1/flags/{id} (any of its keys), checked now and again when it is applied',
      'x-error': 'must be a PATCH body (a JSON object)',
    }),
  },
  { additionalProperties: false },
);
export type ScheduleCreate = Static<typeof ScheduleCreate>;
export const ScheduledChangeBody = Type.Object({
  id: Type.String({ description: 'sch_…; the audit names the change it makes as actor plan:<id>' }),
  flagId: Type.String(),
  env: Type.Union([Type.String(), Type.Null()], { description: "A group flag's environment; null on a single flag" }),
  patch: Type.Record(Type.String(), Type.Unknown(), { description: 'The PATCH body applied when it falls due' }),
  at: Type.Integer({ description: 'When it falls due, Unix ms' }),
  createdAt: Type.Integer(),
  createdBy: Type.String({ description: 'The audit actor that scheduled it (token:<id>, console, user:<id>)' }),
  createdByName: Type.String(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('applied'), Type.Literal('failed'), Type.Literal('cancelled')]),
  doneAt: Type.Union([Type.Integer(), Type.Null()], { description: 'When it was applied, failed or cancelled; null while pending' }),
  outcome: Type.Union([Type.String(), Type.Null()], {
    description: '"changed", "no change", why it failed, or who cancelled it; null while pending',
  }),
});
export type ScheduledChangeBody = Static<typeof ScheduledChangeBody>;

/** Where the next page starts (`after`), or null on the last page. */
const NextPage = Type.Union([Type.String(), Type.Null()], {
  description: 'Where the next page starts: send it as ?after= (null: this is the last page)',
});

export const ScheduleList = Type.Object({
  schedules: Type.Array(ScheduledChangeBody, { description: "A page of the project's scheduled changes, by due time" }),
  next: NextPage,
});
export type ScheduleList = Static<typeof ScheduleList>;

/** A scheduled change as every answer shows it (the record, without its project: the token's). */
export function scheduleView(change: ScheduledChange): ScheduledChangeBody {
  const { projectId: _project, ...view } = change;
  return view;
}

const guardBound = (what: string) =>
  Type.Union([Type.Number(), Type.Null()], {
    description: `A reading ${what} this is a breach; null or absent: no bound`,
    'x-error': 'must be a number or null',
  });

/** A rollout's guard as a request gives it (src/release-plans/guards.ts says what makes one valid). */
export const RolloutGuardInput = Type.Object(
  {
    prometheus: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: kMaxGuardExpressionLength,
        description: 'A PromQL expression asked of the Prometheus server (FLAGWIRE_PROMETHEUS_URL); a number or an instant vector',
        'x-error': `must be a PromQL expression of 1 to ${kMaxGuardExpressionLength} characters`,
      }),
    ),
    flagwire: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          'A metric of the server reading it, as its GET /metrics serves it: name{label="value",...}; a counter is read as its rate per second',
        'x-error': 'must be a metric selector, e.g. flagwire_http_requests_total{status="500"}',
      }),
    ),
    experiment: Type.Optional(
      Type.String({
        pattern: kExperimentKeyPattern,
        description:
          "Instead: an experiment's key in the rollout's project and environment, on the flag the rollout drives: the guard reads its stored statistics (give metric and worse, or sampleRatio)",
        'x-error': 'must be an experiment key (a slug of 1 to 64 lowercase letters, digits, - and _, starting with a letter or digit)',
      }),
    ),
    metric: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "With experiment: one of its metrics; a breach where a treatment is worse than the control by its always-valid interval at the experiment's alpha",
        'x-error': "must be one of the experiment's metrics",
      }),
    ),
    worse: Type.Optional(
      Type.Union([Type.Literal('lower'), Type.Literal('higher')], {
        description: 'With metric: which way is worse, "lower" (a conversion, revenue) or "higher" (errors, latency)',
        'x-error': 'must be "lower" or "higher"',
      }),
    ),
    sampleRatio: Type.Optional(
      Type.Boolean({
        description:
          'With experiment, instead of metric: a breach where its sample-ratio check finds a mismatch (the Bayes factor reaches 1/alpha)',
        'x-error': 'must be true or false',
      }),
    ),
    max: Type.Optional(guardBound('above')),
    min: Type.Optional(guardBound('below')),
    intervalMs: Type.Optional(
      Type.Integer({
        minimum: kMinGuardIntervalMs,
        maximum: kMaxGuardIntervalMs,
        description: `How often it is read while the rollout runs (ms); default ${kDefaultGuardIntervalMs}`,
        'x-error': `must be a whole number of ms from ${kMinGuardIntervalMs} to ${kMaxGuardIntervalMs}`,
      }),
    ),
    onBreach: Type.Optional(
      Type.Union([Type.Literal('pause'), Type.Literal('rollback')], {
        description: 'What a breach does: pause the rollout (default) or roll it back',
        'x-error': 'must be "pause" or "rollback"',
      }),
    ),
  },
  {
    additionalProperties: false,
    'x-error':
      'must be an object: {prometheus or flagwire, max and/or min, intervalMs, onBreach} or {experiment, metric and worse or sampleRatio, intervalMs, onBreach}',
  },
);

export const RolloutGuardBody = Type.Object({
  prometheus: Type.Optional(Type.String()),
  flagwire: Type.Optional(Type.String()),
  experiment: Type.Optional(Type.String()),
  metric: Type.Optional(Type.String()),
  worse: Type.Optional(Type.Union([Type.Literal('lower'), Type.Literal('higher')])),
  sampleRatio: Type.Optional(Type.Literal(true)),
  max: Type.Union([Type.Number(), Type.Null()]),
  min: Type.Union([Type.Number(), Type.Null()]),
  intervalMs: Type.Integer(),
  onBreach: Type.Union([Type.Literal('pause'), Type.Literal('rollback')]),
});

const ArmFigures = Type.Object({ variant: Type.String(), subjects: Type.Integer(), mean: Type.Number() });
const MetricGuardFiguresBody = Type.Object({
  experiment: Type.String(),
  metric: Type.String(),
  control: ArmFigures,
  treatment: Type.Object(ArmFigures.properties, { description: 'The treatment that fared worst against the control' }),
  effect: Type.Union([Type.Literal('relative'), Type.Literal('absolute')], {
    description: "relative: the lift over the control's mean; absolute: the difference of means (where the control's mean is 0)",
  }),
  estimate: Type.Number(),
  lower: Type.Union([Type.Number(), Type.Null()], { description: 'The always-valid interval at alpha; null while unbounded' }),
  upper: Type.Union([Type.Number(), Type.Null()]),
  pValue: Type.Number({ description: "The confidence sequence's anytime-valid p-value" }),
  alpha: Type.Number(),
});
const SampleRatioGuardFiguresBody = Type.Object({
  experiment: Type.String(),
  bayesFactor: Type.Union([Type.Number(), Type.Null()], { description: 'The Bayes factor now; null where it is infinite' }),
  pValue: Type.Number({ description: "The check's anytime-valid p-value (the lowest 1/BF of every look)" }),
  alpha: Type.Number(),
  arms: Type.Array(Type.Object({ variant: Type.String(), subjects: Type.Integer(), planned: Type.Number(), observed: Type.Number() })),
});

export const GuardReadingBody = Type.Object({
  at: Type.Integer({ description: 'When it was read, Unix ms' }),
  value: Type.Union([Type.Number(), Type.Null()], { description: 'The number read; null when there was none' }),
  breached: Type.Boolean(),
  note: Type.Union([Type.String(), Type.Null()], { description: 'Why there is no value, or what the breach was' }),
  failures: Type.Integer({ description: 'Readings in a row that could not be taken' }),
  figures: Type.Optional(
    Type.Union([MetricGuardFiguresBody, SampleRatioGuardFiguresBody], {
      description: "An experiment guard's reading: the figures it was judged on",
    }),
  ),
});

const kHoldMs = Type.Optional(
  Type.Integer({
    minimum: 1000,
    description: 'How long the step is held (ms); absent on the last step',
    'x-error': 'must be at least 1000 ms',
  }),
);

/** A step of a rollout of the traffic percentage. */
const PercentageStep = Type.Object(
  {
    trafficPercentage: Type.Integer({ minimum: 0, maximum: 100, 'x-error': 'must be a whole number between 0 and 100' }),
    holdMs: kHoldMs,
  },
  { additionalProperties: false },
);

/** A step of a rollout by variant weights: the flag's targeting becomes flagd's `fractional` split of these. */
const WeightsStep = Type.Object(
  {
    variantWeights: Type.Record(Type.String(), Type.Integer({ minimum: 0, 'x-error': 'must be a whole number, 0 or more' }), {
      description:
        'Variant name -> weight: the step sets the flag\'s targeting to {"fractional": [[name, weight], ...]}, in this order (a leading bucketing expression of the rule it replaces is kept)',
      'x-error': 'must be an object of variant names to weights',
    }),
    holdMs: kHoldMs,
  },
  { additionalProperties: false },
);

/** The body of POST /api/v1/flags/{id}/rollouts: the steps, the first applied at once; every step of one kind. */
export const RolloutCreate = Type.Object(
  {
    steps: Type.Array(
      Type.Union([PercentageStep, WeightsStep], {
        'x-error': 'must be {trafficPercentage, holdMs} or {variantWeights, holdMs}: one of the two',
      }),
      { minItems: 1, 'x-error': 'must be a non-empty array of {trafficPercentage, holdMs} or of {variantWeights, holdMs}' },
    ),
    guard: Type.Optional(RolloutGuardInput),
  },
  { additionalProperties: false },
);
export type RolloutCreate = Static<typeof RolloutCreate>;

export const kRolloutActions = ['pause', 'resume', 'skip', 'rollback'] as const;
export type RolloutAction = (typeof kRolloutActions)[number];

/** The statuses each action may be taken from: rolloutAct's rule, and the buttons the web console offers. */
export const kRolloutActionFrom: Readonly<Record<RolloutAction, readonly RolloutStatus[]>> = {
  pause: ['running'],
  resume: ['paused'],
  skip: ['running', 'paused'],
  rollback: ['running', 'paused', 'completed'],
};

export const RolloutBody = Type.Object({
  id: Type.String({ description: 'rol_…; the audit names the changes it makes as actor plan:<id>' }),
  flagId: Type.String(),
  env: Type.Union([Type.String(), Type.Null()]),
  steps: RolloutCreate.properties.steps,
  initialPercentage: Type.Integer({
    description: 'The percentage before the first step: what a rollback of a percentage rollout restores',
  }),
  initialTargeting: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description: "A rollout by variant weights: the flag's targeting before the first step, what a rollback restores; null otherwise",
  }),
  current: Type.Integer({ description: 'The step applied last (0: the first)' }),
  appliedAt: Type.Optional(
    Type.Array(Type.Union([Type.Integer(), Type.Null()]), {
      description:
        'When each step up to `current` was applied, Unix ms (a resumed step: when it was set again); null where not known. Absent on rollouts started before these times were kept',
    }),
  ),
  nextAt: Type.Union([Type.Integer(), Type.Null()], { description: 'When the next step is due (Unix ms); null unless running' }),
  status: Type.Union([Type.Literal('running'), Type.Literal('paused'), Type.Literal('completed'), Type.Literal('rolled-back')]),
  pausedReason: Type.Union([Type.String(), Type.Null()], {
    description: 'Why it is paused or was rolled back: a person, a change made by hand, or its guard',
  }),
  guard: Type.Union([RolloutGuardBody, Type.Null()], { description: 'What it is guarded by; null: nothing' }),
  guardNextAt: Type.Union([Type.Integer(), Type.Null()], { description: 'When the guard is read next (Unix ms); null unless running' }),
  guardReading: Type.Union([GuardReadingBody, Type.Null()], { description: "The guard's last reading; null before the first" }),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
  createdBy: Type.String(),
  createdByName: Type.String(),
});
export type RolloutBody = Static<typeof RolloutBody>;

export const RolloutList = Type.Object({
  rollouts: Type.Array(RolloutBody, { description: "A page of the project's rollouts, oldest first" }),
  next: NextPage,
});

/** A rollout as every answer shows it (the record, without its project: the token's). */
export function rolloutView(plan: RolloutPlan): RolloutBody {
  const { projectId: _project, ...view } = plan;
  return {
    ...view,
    initialTargeting: plan.initialTargeting ?? null,
    guard: plan.guard ?? null,
    guardNextAt: plan.guardNextAt ?? null,
    guardReading: plan.guardReading ?? null,
  };
}

/** The buttons the page offers on a rollout: the actions its status allows (rolloutAct's rule), to a user who may change flags. */
export function offeredRolloutActions(access: ProjectAccess, plan: Pick<RolloutPlan, 'status'>): RolloutAction[] {
  return access.can.editFlags ? kRolloutActions.filter((action) => kRolloutActionFrom[action].includes(plan.status)) : [];
}

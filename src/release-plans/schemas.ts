// The shapes release plans answer with, as TypeBox values: the single source of their types and of
// the OpenAPI document's components.
import { type Static, Type } from '@sinclair/typebox';
import type { RolloutPlan, RolloutStatus } from '../model/rollouts.js';
import type { ScheduledChange } from '../model/schedules.js';

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

export const ScheduleList = Type.Object({
  schedules: Type.Array(ScheduledChangeBody, { description: "The project's scheduled changes, by due time" }),
});
export type ScheduleList = Static<typeof ScheduleList>;

/** A scheduled change as every answer shows it (the record, without its project: the token's). */
export function scheduleView(change: ScheduledChange): ScheduledChangeBody {
  const { projectId: _project, ...view } = change;
  return view;
}

/** The body of POST /api/v1/flags/{id}/rollouts: the steps, the first applied at once. */
export const RolloutCreate = Type.Object(
  {
    steps: Type.Array(
      Type.Object(
        {
          trafficPercentage: Type.Integer({ minimum: 0, maximum: 100, 'x-error': 'must be a whole number between 0 and 100' }),
          holdMs: Type.Optional(
            Type.Integer({
              minimum: 1000,
              description: 'How long the step is held (ms); absent on the last step',
              'x-error': 'must be at least 1000 ms',
            }),
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, 'x-error': 'must be a non-empty array of {trafficPercentage, holdMs}' },
    ),
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
  initialPercentage: Type.Integer({ description: 'The percentage before the first step: what a rollback restores' }),
  current: Type.Integer({ description: 'The step applied last (0: the first)' }),
  appliedAt: Type.Optional(
    Type.Array(Type.Union([Type.Integer(), Type.Null()]), {
      description:
        'When each step up to `current` was applied, Unix ms (a resumed step: when it was set again); null where not known. Absent on rollouts started before these times were kept',
    }),
  ),
  nextAt: Type.Union([Type.Integer(), Type.Null()], { description: 'When the next step is due (Unix ms); null unless running' }),
  status: Type.Union([Type.Literal('running'), Type.Literal('paused'), Type.Literal('completed'), Type.Literal('rolled-back')]),
  pausedReason: Type.Union([Type.String(), Type.Null()], { description: 'Why it is paused: a person, or a change made by hand' }),
  createdAt: Type.Integer(),
  updatedAt: Type.Integer(),
  createdBy: Type.String(),
  createdByName: Type.String(),
});
export type RolloutBody = Static<typeof RolloutBody>;

export const RolloutList = Type.Object({ rollouts: Type.Array(RolloutBody, { description: "The project's rollouts, oldest first" }) });

/** A rollout as every answer shows it (the record, without its project: the token's). */
export function rolloutView(plan: RolloutPlan): RolloutBody {
  const { projectId: _project, ...view } = plan;
  return view;
}

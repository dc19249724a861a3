// The shapes release plans answer with, as TypeBox values: the single source of their types and of
// the OpenAPI document's components.
import { type Static, Type } from '@sinclair/typebox';
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

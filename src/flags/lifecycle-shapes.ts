// The Management API's shapes of a flag's lifecycle (issue 99; docs/api.md: Flag lifecycle), each one
// TypeBox value with its Static type of the same name, as representation-shapes.ts.
import { Type, type Static } from '../typebox.js';
import { FlagTypeSchema, LifetimeDays, Owner } from '../model/schemas.js';
import { kLifecycleStages } from './lifecycle.js';

const Millis = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

/** Shown by GET and PATCH /api/v1/flags/{id}/lifecycle only (a list would carry every flag's week). */
const CountedHours = Type.Array(
  Type.Object({
    hour: Type.Number({ description: "The hour's start, Unix ms (UTC)" }),
    evaluations: Type.Integer({ minimum: 1 }),
  }),
  { description: 'The hours of the last week with evaluations, oldest first (each evaluation in the hour it was made)' },
);

const EnvironmentUsage = Type.Object({
  environment: Type.Union([Type.String(), Type.Null()], {
    description: "The environment evaluated; null: a single flag's one state (a single-environment project)",
  }),
  evaluations: Type.Integer({ minimum: 0 }),
  lastEvaluatedAt: Type.Number({ description: 'The latest evaluation counted there, Unix ms' }),
  hours: Type.Optional(CountedHours),
});

export const FlagLifecycle = Type.Object(
  {
    id: Type.String({ description: 'Flag id' }),
    name: Type.String(),
    type: FlagTypeSchema,
    owner: Type.Union([Owner, Type.Null()], { description: 'Who answers for the flag; null: nobody named' }),
    lifetimeDays: LifetimeDays,
    stage: Type.Union(
      kLifecycleStages.map((s) => Type.Literal(s)),
      { description: "Derived from the facts below and the flag's state (docs/api.md: Flag lifecycle)" },
    ),
    archivedAt: Millis('When the flag was archived, Unix ms; null: in service'),
    createdAt: Type.Number({ description: 'Unix time in milliseconds' }),
    lastEvaluatedAt: Millis('The latest evaluation reported, Unix ms; null: none'),
    usageKnown: Type.Boolean({
      description: 'Whether every path that evaluates the flag reports it; false: no flag is called unused for want of evaluations',
    }),
    codeReferences: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'References found in code by the latest scan; null: never scanned',
    }),
    evaluations: Type.Integer({ minimum: 0, description: 'Evaluations counted since the flag was created (up to a minute behind)' }),
    hours: Type.Optional(CountedHours),
    environments: Type.Array(EnvironmentUsage, {
      description:
        'Its evaluations per environment, each environment it was counted in (counted since per-environment usage was kept: the totals may hold more)',
    }),
  },
  { description: "A flag's lifecycle: its type, owner and lifetime (defaults resolved) and its stage" },
);
export type FlagLifecycle = Static<typeof FlagLifecycle>;

export const LifecycleList = Type.Object({ flags: Type.Array(FlagLifecycle) });
export type LifecycleList = Static<typeof LifecycleList>;

/** PATCH /api/v1/flags/{id}/lifecycle body: absent keeps a field, null returns it to its default. */
export const LifecyclePatch = Type.Object(
  {
    type: Type.Optional(Type.Union([FlagTypeSchema, Type.Null()])),
    owner: Type.Optional(Type.Union([Owner, Type.Null()])),
    lifetimeDays: Type.Optional(Type.Union([LifetimeDays, Type.Null()])),
  },
  { additionalProperties: false },
);
export type LifecyclePatch = Static<typeof LifecyclePatch>;

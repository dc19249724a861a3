// The spec's response shapes of flags (flag in flat and environments form, flag list, patch result), each
// one TypeBox value with its Static type of the same name: the value is the OpenAPI document's schema
// (src/openapi/document.ts), the type is what representation.ts returns, so the compiler refuses a
// representation that drifts from its published schema. Apart from the functions that make them, so the
// web console's browser code can name these types without the model checks those functions run.
import { CloneType, Type, type Static } from '../typebox.js';
import { FlagTypeSchema, kTypedProperties, LifetimeDays, Owner } from '../model/schemas.js';
import { UnleashModel } from '../model/unleash-model.js';

const Id = (description: string) => Type.String({ description });
const Millis = Type.Number({ description: 'Unix time in milliseconds' });
// Flag usage (docs/operations.md: Flag usage): written once a minute, so up to a minute behind.
const LastEvaluatedAt = Type.Union([Type.Number(), Type.Null()], {
  description:
    'Unix time in milliseconds of the latest evaluation counted (Evaluation API or OFREP; up to a minute behind); null if none yet',
});
// Shown only for a flag made with it (issue 44): every modulo flag's representation keeps the bytes it had.
const FractionalBucketing = Type.Optional(
  Type.Literal('fractional', {
    description:
      'Present only on a flag made with "bucketing": "fractional" (flagd\'s fractional point over design §2\'s hash); absent: "modulo", design §2\'s public bucket function. Fixed when the flag is made',
  }),
);
const Evaluations = Type.Integer({ minimum: 0, description: 'Evaluations counted since the flag was created (up to a minute behind)' });
/** What both forms say of a flag after its id, name and kind, in this order. */
const kFlagFacts = {
  bucketing: FractionalBucketing,
  // Issue 99: each only where the flag has it, so every other representation keeps the bytes it had;
  // GET /api/v1/flags/{id}/lifecycle shows them all, defaults resolved.
  type: Type.Optional(CloneType(FlagTypeSchema, { description: 'What the flag is for; absent: "release"' })),
  owner: Type.Optional(CloneType(Owner, { description: 'Who answers for the flag; absent: nobody named' })),
  lifetimeDays: Type.Optional(
    CloneType(LifetimeDays, { description: 'Expected lifetime in days, or "permanent"; absent: its type\'s default' }),
  ),
  archivedAt: Type.Optional(
    Type.Number({ description: 'When the flag was archived, Unix ms: it serves nothing until restored; absent: in service' }),
  ),
  description: Type.String(),
  tags: Type.Array(Type.String()),
  updatedAt: Millis,
  lastEvaluatedAt: LastEvaluatedAt,
  evaluations: Evaluations,
};

/** Shown only on a state that carries one: every other representation keeps the bytes it had. */
const Experiment = Type.Optional(
  Type.String({ description: "The experiment this state's answers belong to (issue 58; docs/api.md: Experiments); absent: none" }),
);

/** Shown only on a state that has one (issue 60): every other representation keeps the bytes it had. */
const Unleash = Type.Optional(
  CloneType(UnleashModel, {
    description:
      "Unleash's model of this state (issue 60; docs/api.md: Unleash's model), as stored: it decides the answer where the state is enabled; absent: none",
  }),
);

/** Shown only on a state whose Unleash model has parts that are never met: every other representation keeps its bytes. */
const UnleashWarnings = Type.Optional(
  Type.Array(Type.String(), {
    description:
      "The parts of this state's Unleash model that Unleash's SDKs, and so Flagwire, never meet (an unknown operator, a missing segment, an expression RE2 does not compile), each with where it is: stored and served as given, and named here (docs/api.md: Unleash's model); absent: none",
  }),
);

export const FlatFlag = Type.Object(
  {
    id: Id('Flag id'),
    name: Type.String(),
    kind: Type.Union([Type.Literal('flag'), Type.Literal('groupflag')]),
    ...kFlagFacts,
    enabled: Type.Boolean(),
    trafficPercentage: Type.Integer({ minimum: 0, maximum: 100 }),
    cohorts: Type.Array(Type.String(), { description: 'Effective cohort list (an environment override, else the flag-wide list)' }),
    audienceId: Type.Union([Type.String(), Type.Null()]),
    environment: Type.Optional(Type.String({ description: 'Set when a group flag is shown for one environment' })),
    ...kTypedProperties,
    experiment: Experiment,
    unleash: Unleash,
    unleashWarnings: UnleashWarnings,
  },
  { description: 'A flag in flat form: a single-environment flag, or one environment of a group flag' },
);
export type FlatFlag = Static<typeof FlatFlag>;

export const EnvironmentEntry = Type.Object({
  enabled: Type.Boolean(),
  trafficPercentage: Type.Integer({ minimum: 0, maximum: 100 }),
  cohorts: Type.Array(Type.String()),
  audienceId: Type.Union([Type.String(), Type.Null()]),
  updatedAt: Millis,
  ...kTypedProperties,
  experiment: Experiment,
  unleash: Unleash,
  unleashWarnings: UnleashWarnings,
});
export type EnvironmentEntry = Static<typeof EnvironmentEntry>;

export const EnvironmentsFlag = Type.Object(
  {
    id: Id('Flag id'),
    name: Type.String(),
    kind: Type.Literal('groupflag'),
    ...kFlagFacts,
    environments: Type.Record(Type.String(), EnvironmentEntry),
  },
  { description: 'A group flag without `env`: one entry per environment of the project' },
);
export type EnvironmentsFlag = Static<typeof EnvironmentsFlag>;

export const FlagRepresentation = Type.Union([FlatFlag, EnvironmentsFlag]);
export type FlagRepresentation = Static<typeof FlagRepresentation>;

export const FlagList = Type.Object({ flags: Type.Array(FlagRepresentation) });
export type FlagList = Static<typeof FlagList>;

export const PatchResult = Type.Object({
  changed: Type.Boolean({ description: 'false when the patch set every key to the value it had' }),
  flag: FlatFlag,
});
export type PatchResult = Static<typeof PatchResult>;

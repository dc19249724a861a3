// OFREP shapes (open-feature/protocol, service/openapi.yaml) as TypeBox values: the eval workers
// validate request bodies with them and the OpenAPI document (src/openapi) publishes them. One source.
import { Type, type Static } from '../typebox.js';

/** OFREP evaluation context. `cohort` and `env` are Flagwire's own keys; every other key is an attribute. */
export const OfrepContext = Type.Object(
  {
    targetingKey: Type.Optional(
      Type.String({
        description: "Sticky bucketing key (the Evaluation API's `targetingKey`). An empty string counts as absent.",
        'x-error': 'must be a string',
      }),
    ),
    cohort: Type.Optional(
      Type.String({
        description: "The caller's cohort: a listed cohort turns the flag on; without targetingKey it is also the bucketing key.",
        'x-error': 'must be a string',
      }),
    ),
    env: Type.Optional(
      Type.String({
        description: 'Environment name; required for flags of a multi-environment project, ignored otherwise.',
        'x-error': 'must be a string',
      }),
    ),
  },
  {
    additionalProperties: true,
    description:
      'Every other key is an attribute for audience matching: strings as they are, numbers and booleans as their JSON text ' +
      '(`true`, `42`); null, objects and arrays are not attributes (they never match a rule).',
    'x-error': 'must be a JSON object',
  },
);
export type OfrepContext = Static<typeof OfrepContext>;

/** POST /ofrep/v1/evaluate/flags/{key} and POST /ofrep/v1/evaluate/flags body. An empty body is `{}`. */
export const OfrepEvaluationRequest = Type.Object(
  { context: Type.Optional(OfrepContext) },
  { additionalProperties: true, description: 'Flag evaluation request' },
);
export type OfrepEvaluationRequest = Static<typeof OfrepEvaluationRequest>;

export const kOfrepReasons = ['STATIC', 'TARGETING_MATCH', 'SPLIT', 'DEFAULT', 'DISABLED'] as const;
export type OfrepReason = (typeof kOfrepReasons)[number];

/** What an answer of a flag state with an experiment adds to its metadata (issue 58; docs/api.md: Experiments). */
const kExperimentMetadata = {
  experimentKey: Type.Optional(Type.String({ description: 'Only while the flag (environment) runs an experiment: its key' })),
  inExperiment: Type.Optional(
    Type.Boolean({
      description:
        'With experimentKey: whether this answer is an exposure (the percentage split, or a rule choosing the variant); false for a disabled flag, a cohort override, an audience or static answer, and an error',
    }),
  ),
};

export const OfrepEvaluationSuccess = Type.Object(
  {
    key: Type.String({ description: "The key as asked: the flag's id, or its name (docs/decisions.md: OFREP, keys)" }),
    value: Type.Optional(
      Type.Unknown({
        description:
          "A boolean flag's value, or the variant's value (boolean, string, number or object) of a flag with typed variants. " +
          "Absent where the caller's own default applies (open-feature/protocol ADR-0006): a disabled variant flag, or one without a default variant",
      }),
    ),
    reason: Type.Union(
      kOfrepReasons.map((r) => Type.Literal(r)),
      { description: 'Which rule decided (docs/decisions.md: OFREP; docs/design.md §2b for typed variants)' },
    ),
    variant: Type.Optional(
      Type.String({ description: 'on or off for a boolean flag; the variant served by a flag with typed variants; absent with value' }),
    ),
    metadata: Type.Object({
      id: Type.String({ description: "The flag's id (never changes)" }),
      name: Type.String({ description: "The flag's name (unique in its project; a rename changes it)" }),
      ...kExperimentMetadata,
    }),
  },
  { description: 'Flag evaluation success response' },
);
export type OfrepEvaluationSuccess = Static<typeof OfrepEvaluationSuccess>;

export const kOfrepErrorCodes = ['PARSE_ERROR', 'TARGETING_KEY_MISSING', 'INVALID_CONTEXT', 'GENERAL'] as const;
export type OfrepErrorCode = (typeof kOfrepErrorCodes)[number] | 'FLAG_NOT_FOUND';

export const OfrepEvaluationFailure = Type.Object(
  {
    key: Type.String(),
    errorCode: Type.Union(kOfrepErrorCodes.map((c) => Type.Literal(c))),
    errorDetails: Type.String(),
    metadata: Type.Optional(
      Type.Object(kExperimentMetadata, {
        description: 'Only while the flag (environment) runs an experiment: it names it, never an exposure',
      }),
    ),
  },
  { description: 'Flag evaluation failure response' },
);

export const OfrepFlagNotFound = Type.Object(
  { key: Type.String(), errorCode: Type.Literal('FLAG_NOT_FOUND'), errorDetails: Type.String() },
  { description: 'Flag not found response' },
);

/** open-feature/protocol ADR-0008: a change-notification stream the provider may connect to. */
export const OfrepEventStream = Type.Object(
  {
    type: Type.Literal('sse'),
    endpoint: Type.Object({
      requestUri: Type.String({
        description: "GET /ofrep/v1/stream/project/{project_id}[?env=NAME], resolved against the provider's baseUrl",
      }),
    }),
    inactivityDelaySec: Type.Integer({ description: 'Seconds a hidden page may stay connected before the provider closes the stream' }),
  },
  { description: 'Server-Sent Events stream sending `refetchEvaluation` when the project (and environment) changes' },
);

export const OfrepBulkSuccess = Type.Object(
  {
    flags: Type.Array(Type.Union([OfrepEvaluationSuccess, OfrepEvaluationFailure])),
    eventStreams: Type.Array(OfrepEventStream),
  },
  { description: 'Every flag of the project, in creation order, each twice: under its id, then under its name' },
);

export const OfrepBulkFailure = Type.Object(
  {
    errorCode: Type.Union([...kOfrepErrorCodes.map((c) => Type.Literal(c))]),
    errorDetails: Type.String(),
  },
  { description: 'Bulk evaluation failure response' },
);

/** 413, 500 and 503 of both OFREP routes (`key` only on the single-flag route). */
export const OfrepGeneralError = Type.Object(
  { key: Type.Optional(Type.String()), errorCode: Type.Literal('GENERAL'), errorDetails: Type.String() },
  { description: 'A general error response' },
);

// Unleash's model as a rule type of a Flagwire flag state (issue 60, item 3): the strategies, variants
// and dependencies of one feature in one environment, in the shape of Unleash's client API
// (GET /api/client/features, version 2), plus the segments its strategies name. It is stored as given
// and served as given on the client API (src/unleash/client-features.ts), so a stock Unleash server SDK
// that evaluates it locally answers as Flagwire's server does (src/unleash/rules/feature.ts, state.ts).
//
//   "unleash": {
//     "strategies": [{
//       "name": "flexibleRollout",
//       "parameters": {"rollout": "50", "stickiness": "default", "groupId": "checkout"},
//       "constraints": [{"contextName": "appVersion", "operator": "SEMVER_GT", "value": "2.0.0"}],
//       "segments": [1],
//       "variants": [{"name": "blue", "weight": 1000, "stickiness": "default", "payload": {"type": "string", "value": "b"}}]
//     }],
//     "segments": [{"id": 1, "name": "beta", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["beta"]}]}],
//     "variants": [{"name": "a", "weight": 500}, {"name": "b", "weight": 500, "overrides": [{"contextName": "userId", "values": ["u1"]}]}],
//     "dependencies": [{"feature": "parent-flag", "enabled": true, "variants": ["on"]}]
//   }
//
// The shape is checked here; what a schema cannot say (known strategies and operators, a strategy's
// parameters, segments that exist, values that parse) is checked by src/unleash/rules/model-problems.ts.
import { type Static, Type, compiledOnUse } from '../typebox.js';

/** Every constraint operator of Unleash's client specification (6.1), REGEX and IN_CIDR included. */
export const kUnleashOperators = [
  'IN',
  'NOT_IN',
  'STR_CONTAINS',
  'STR_STARTS_WITH',
  'STR_ENDS_WITH',
  'NUM_EQ',
  'NUM_GT',
  'NUM_GTE',
  'NUM_LT',
  'NUM_LTE',
  'DATE_AFTER',
  'DATE_BEFORE',
  'SEMVER_EQ',
  'SEMVER_GT',
  'SEMVER_LT',
  'SEMVER_GTE',
  'SEMVER_LTE',
  'REGEX',
  'IN_CIDR',
] as const;
export type UnleashOperator = (typeof kUnleashOperators)[number];

/** Unleash's built-in strategies that a server SDK evaluates (applicationHostname reads the SDK's own host: not one). */
export const kUnleashStrategies = [
  'default',
  'flexibleRollout',
  'userWithId',
  'remoteAddress',
  'gradualRolloutUserId',
  'gradualRolloutSessionId',
  'gradualRolloutRandom',
] as const;

const kMaxItems = 1000;
const Text = Type.String({ maxLength: 10_000 });

export const UnleashConstraint = Type.Object(
  {
    contextName: Type.String({ minLength: 1, maxLength: 200 }),
    operator: Type.String({ minLength: 1, maxLength: 50 }),
    /** The operand of the single-value operators (NUM_*, DATE_*, SEMVER_*, REGEX). */
    value: Type.Optional(Text),
    /** The operands of the list operators (IN, NOT_IN, STR_*, IN_CIDR). */
    values: Type.Optional(Type.Array(Text, { maxItems: 10_000 })),
    inverted: Type.Optional(Type.Boolean()),
    caseInsensitive: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type UnleashConstraint = Static<typeof UnleashConstraint>;

export const UnleashPayload = Type.Object(
  {
    type: Type.Union([Type.Literal('string'), Type.Literal('json'), Type.Literal('csv'), Type.Literal('number')]),
    value: Type.String({ maxLength: 100_000 }),
  },
  { additionalProperties: false },
);
export type UnleashPayload = Static<typeof UnleashPayload>;

const VariantFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  weight: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  stickiness: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  payload: Type.Optional(UnleashPayload),
  /** Unleash's server says how it weighed the variant; SDKs read `weight` alone. */
  weightType: Type.Optional(Type.Union([Type.Literal('fix'), Type.Literal('variable')])),
};

export const UnleashStrategyVariant = Type.Object(VariantFields, { additionalProperties: false });
export type UnleashStrategyVariant = Static<typeof UnleashStrategyVariant>;

export const UnleashOverride = Type.Object(
  { contextName: Type.String({ minLength: 1, maxLength: 200 }), values: Type.Array(Text, { maxItems: 10_000 }) },
  { additionalProperties: false },
);

export const UnleashVariant = Type.Object(
  { ...VariantFields, overrides: Type.Optional(Type.Array(UnleashOverride, { maxItems: kMaxItems })) },
  { additionalProperties: false },
);
export type UnleashVariant = Static<typeof UnleashVariant>;

export const UnleashStrategy = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    /** Unleash's SDKs read parameters as text; numbers are taken as Unleash's server takes them. */
    parameters: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String({ maxLength: 100_000 }), Type.Number()]))),
    constraints: Type.Optional(Type.Array(UnleashConstraint, { maxItems: kMaxItems })),
    /** Ids of the model's segments, whose constraints apply after the strategy's own. */
    segments: Type.Optional(Type.Array(Type.Integer(), { maxItems: kMaxItems })),
    variants: Type.Optional(Type.Array(UnleashStrategyVariant, { maxItems: kMaxItems })),
  },
  { additionalProperties: false },
);
export type UnleashStrategy = Static<typeof UnleashStrategy>;

export const UnleashSegment = Type.Object(
  {
    id: Type.Integer(),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    constraints: Type.Array(UnleashConstraint, { maxItems: kMaxItems }),
  },
  { additionalProperties: false },
);
export type UnleashSegment = Static<typeof UnleashSegment>;

export const UnleashDependency = Type.Object(
  {
    /** The parent flag's name, in the same project. */
    feature: Type.String({ minLength: 1, maxLength: 200 }),
    /** Absent or true: the parent must be enabled; false: disabled. */
    enabled: Type.Optional(Type.Boolean()),
    /** With `enabled` not false: the parent's variant must be one of these (none: any). */
    variants: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: kMaxItems })),
  },
  { additionalProperties: false },
);
export type UnleashDependency = Static<typeof UnleashDependency>;

export const UnleashModel = Type.Object(
  {
    strategies: Type.Array(UnleashStrategy, { maxItems: kMaxItems }),
    variants: Type.Optional(Type.Array(UnleashVariant, { maxItems: kMaxItems })),
    dependencies: Type.Optional(Type.Array(UnleashDependency, { maxItems: kMaxItems })),
    segments: Type.Optional(Type.Array(UnleashSegment, { maxItems: kMaxItems })),
    impressionData: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type UnleashModel = Static<typeof UnleashModel>;

export const kUnleashModel = compiledOnUse(UnleashModel);

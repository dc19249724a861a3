// Request schemas of the Management API: the single source for validation, TypeScript types and
// the OpenAPI document. `x-error` is the text a failed check reports after the field's path.
import { CloneType, Type, type Static, type TSchema } from '../typebox.js';
import { FlagMetadata, Targeting as FlagdTargeting, VariantValue } from '../targeting/definition.js';
import { UnleashModel } from './unleash-model.js';
import { kFlagTypes, kMaxStaleDays } from './flags.js';

export const kLimits = {
  nameLength: 200,
  descriptionLength: 2000,
  tags: 50,
  tagLength: 64,
  cohorts: 10_000,
  cohortLength: 256,
  environmentNameLength: 64,
} as const;

export const Enabled = Type.Boolean({ 'x-error': 'must be true or false' });
export const TrafficPercentage = Type.Integer({
  minimum: 0,
  maximum: 100,
  'x-error': 'must be a whole number between 0 and 100',
});
export const Cohorts = Type.Array(
  Type.String({
    minLength: 1,
    maxLength: kLimits.cohortLength,
    'x-error': `must be a non-empty string of up to ${kLimits.cohortLength} characters`,
  }),
  {
    maxItems: kLimits.cohorts,
    'x-error': `must be an array of at most ${kLimits.cohorts} strings`,
  },
);
export const AudienceId = Type.Union([Type.String({ minLength: 1 }), Type.Null()], {
  'x-error': 'must be an audience id (string) or null',
});

// Typed variants (issue 25): flagd's flag definition fields. These schemas check the shape; what a schema
// cannot say (one type for every variant, a default variant that exists, a rule built from flagd's
// operators) is checked by src/targeting/parse.ts, through src/flags/variant-rules.ts.
// The value shapes are flagd's own (src/targeting/definition.ts); here they get the API's words. Present
// in a representation only on a flag (environment) that has typed variants (src/flags/representation.ts).
const Variants = Type.Record(
  Type.String(),
  CloneType(VariantValue, { 'x-error': 'must be a boolean, a string, a number or a JSON object' }),
  {
    description:
      'Variant name to value, all of one type (boolean, string, number or JSON object), as in a flagd flag definition; in a create or patch, {} makes the flag (environment) a boolean flag again',
    'x-error': 'must be an object of variant name to value',
  },
);
const DefaultVariant = Type.Union([Type.String(), Type.Null()], {
  description: "The variant served when no rule decides; null: the caller's own default value",
  'x-error': 'must be a variant name (string) or null',
});
const Targeting = CloneType(FlagdTargeting, {
  description: "A flagd targeting rule (JsonLogic with flagd's operators) choosing a variant from the evaluation context; {} is no rule",
  'x-error': 'must be a flagd targeting rule (a JSON object)',
});
const Metadata = CloneType(FlagMetadata, {
  description: "flagd's flag metadata, served with every OFREP answer beside the flag's id and name; in a create or patch, {} removes it",
  'x-error': 'must be an object of name to string, number or boolean',
});
export const kTypedProperties = {
  variants: Type.Optional(Variants),
  defaultVariant: Type.Optional(DefaultVariant),
  targeting: Type.Optional(Targeting),
  metadata: Type.Optional(Metadata),
};
/** The typed-variant keys alone, other keys allowed: to check them in a body that failed its schema elsewhere. */
export const TypedFields = Type.Object(kTypedProperties);
export type TypedFields = Static<typeof TypedFields>;
/** The typed-variant keys of a create body's state and of a patch. */
export const kVariantKeys = Object.keys(kTypedProperties) as (keyof typeof kTypedProperties)[];

/**
 * An experiment key (issue 58): while a flag state carries one, every answer for it names the experiment
 * and says whether it counts as an exposure (docs/api.md: Experiments). A short slug, so it reads the
 * same in a URL, a metric label and an event.
 */
export const kExperimentKeyPattern = '^[a-z0-9][a-z0-9_-]{0,63}$';
export const ExperimentKey = Type.String({
  pattern: kExperimentKeyPattern,
  description:
    "The experiment this state's answers belong to: every answer names it (OFREP metadata experimentKey, inExperiment); a slug of lowercase letters, digits, - and _",
  'x-error': 'must be a slug of 1 to 64 lowercase letters, digits, - and _, starting with a letter or digit',
});
const ExperimentPatch = Type.Union([ExperimentKey, Type.Null()], {
  description: 'An experiment key, or null to end the experiment',
  'x-error': 'must be an experiment key (a slug of 1 to 64 lowercase letters, digits, - and _, starting with a letter or digit) or null',
});

/**
 * Unleash's model of a state (issue 60; src/model/unleash-model.ts): the shape of one feature of Unleash's client
 * API in one environment. What the schema cannot say is checked by src/unleash/rules/model-problems.ts.
 */
const Unleash = CloneType(UnleashModel, {
  description:
    "Unleash's model of this state: {strategies, variants?, dependencies?, segments?} as Unleash's client API serves a feature; while present, it decides the answer where the state is enabled, and trafficPercentage, audienceId and cohorts are not read",
  'x-error':
    "must be Unleash's model of a feature: an object with strategies and optional variants, dependencies, segments, impressionData",
});
const UnleashPatch = Type.Union([Unleash, Type.Null()], {
  description: "Unleash's model of the state, or null to remove it",
  'x-error':
    "must be Unleash's model of a feature (an object with strategies and optional variants, dependencies, segments, impressionData) or null",
});

/**
 * How a flag's percentage buckets its keys (issue 44; design §2), chosen when the flag is made and never
 * changed after: another bucket function would move users in and out of the flag. A record stores
 * "modulo" as the field's absence (src/model/flags.ts), and a representation shows it only for "fractional".
 */
export const Bucketing = Type.Union([Type.Literal('modulo'), Type.Literal('fractional')], {
  description:
    'How the percentage buckets keys, fixed when the flag is made: "modulo" (the default), design §2\'s public bucket function; "fractional", flagd\'s fractional point over the same hash, for a flag served to flagd and OpenFeature in-process providers. A patch may repeat the flag\'s own value, never change it',
  'x-error': 'must be "modulo" (the default) or "fractional"',
});
export type Bucketing = Static<typeof Bucketing>;

/** PATCH /api/v1/flags/{id} body: a merge patch of the four state keys of the spec and the typed-variant keys; `bucketing` only as the flag has it. */
export const FlagPatch = Type.Object(
  {
    enabled: Type.Optional(Enabled),
    trafficPercentage: Type.Optional(TrafficPercentage),
    cohorts: Type.Optional(Cohorts),
    audienceId: Type.Optional(AudienceId),
    ...kTypedProperties,
    experiment: Type.Optional(ExperimentPatch),
    unleash: Type.Optional(UnleashPatch),
    bucketing: Type.Optional(Bucketing),
  },
  { additionalProperties: false },
);
export type FlagPatch = Static<typeof FlagPatch>;

/** State of one environment in a multi-environment create body. */
export const EnvironmentState = Type.Object(
  {
    enabled: Type.Optional(Enabled),
    trafficPercentage: Type.Optional(TrafficPercentage),
    cohorts: Type.Optional(Cohorts),
    audienceId: Type.Optional(AudienceId),
    ...kTypedProperties,
    experiment: Type.Optional(ExperimentKey),
    unleash: Type.Optional(Unleash),
  },
  { additionalProperties: false, 'x-error': 'must be an object with optional enabled, trafficPercentage, cohorts, audienceId' },
);
export type EnvironmentState = Static<typeof EnvironmentState>;

/**
 * The one rule for every name (flags, organisations, projects, audiences, tokens, users), over the API,
 * the CLI and the web console: not blank, and without control characters (C0, DEL, C1), which are
 * invisible in a list, could not be told apart, and act on the terminal that prints them.
 */
const kNamePattern = '^(?=[\\s\\S]*\\S)[^\\u0000-\\u001F\\u007F-\\u009F]*$';
export const kNameRegExp = new RegExp(kNamePattern);
export function nameRuleText(maxLength: number): string {
  return `must be a non-blank string of at most ${maxLength} characters, without control characters (U+0000-U+001F, U+007F-U+009F)`;
}
export const Name = Type.String({
  minLength: 1,
  maxLength: kLimits.nameLength,
  pattern: kNamePattern,
  'x-error': nameRuleText(kLimits.nameLength),
});
export const Description = Type.String({
  maxLength: kLimits.descriptionLength,
  'x-error': `must be a string of at most ${kLimits.descriptionLength} characters`,
});
export const Tags = Type.Array(
  Type.String({
    minLength: 1,
    maxLength: kLimits.tagLength,
    'x-error': `must be a non-empty string of up to ${kLimits.tagLength} characters`,
  }),
  {
    maxItems: kLimits.tags,
    'x-error': `must be an array of at most ${kLimits.tags} strings`,
  },
);

/** What a flag is for (issue 99; docs/api.md: Flag lifecycle): it sets the flag's expected lifetime. */
export const FlagTypeSchema = Type.Union(
  kFlagTypes.map((t) => Type.Literal(t)),
  {
    description: 'What the flag is for, which sets its expected lifetime unless lifetimeDays says otherwise. Absent: "release"',
    'x-error': `must be one of ${kFlagTypes.map((t) => `"${t}"`).join(', ')}`,
  },
);
export const Owner = Type.String({
  minLength: 1,
  maxLength: kLimits.nameLength,
  pattern: kNamePattern,
  description: "Who answers for the flag: a user's or a team's name",
  'x-error': nameRuleText(kLimits.nameLength),
});
/** At most kMaxStaleDays, as the stale rule's days. */
export const LifetimeDays = Type.Union([Type.Integer({ minimum: 1, maximum: kMaxStaleDays }), Type.Literal('permanent')], {
  description: `Expected lifetime in days (1 to ${kMaxStaleDays}), or "permanent". Absent: the type's default`,
  'x-error': `must be a whole number of days from 1 to ${kMaxStaleDays}, or "permanent"`,
});
/** The lifecycle fields a create may set; each absent keeps its default. */
export const kLifecycleProperties = {
  type: Type.Optional(FlagTypeSchema),
  owner: Type.Optional(Owner),
  lifetimeDays: Type.Optional(LifetimeDays),
};

/**
 * POST /api/v1/flags body. One schema for both project kinds; which of the flat state keys and
 * `environments` is allowed depends on the project, checked after the schema (see flag-create).
 */
export const FlagCreate = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    tags: Type.Optional(Tags),
    bucketing: Type.Optional(Bucketing),
    ...kLifecycleProperties,
    enabled: Type.Optional(Enabled),
    trafficPercentage: Type.Optional(TrafficPercentage),
    cohorts: Type.Optional(Cohorts),
    audienceId: Type.Optional(AudienceId),
    ...kTypedProperties,
    experiment: Type.Optional(ExperimentKey),
    unleash: Type.Optional(Unleash),
    environments: Type.Optional(
      Type.Record(Type.String(), EnvironmentState, {
        'x-error': 'must be an object keyed by environment name',
      }),
    ),
  },
  { additionalProperties: false },
);
export type FlagCreate = Static<typeof FlagCreate>;

export const kFlatStateKeys = ['enabled', 'trafficPercentage', 'cohorts', 'audienceId', 'experiment', 'unleash'] as const;

/** The `x-error` text of a schema, if it has one. */
export function schemaErrorText(schema: TSchema): string | undefined {
  const text = (schema as { 'x-error'?: unknown })['x-error'];
  return typeof text === 'string' ? text : undefined;
}

// The spec's response shapes of flags: flag (flat and environments form), flag list, patch result (a
// token's description is the tokens capability's: src/tokens/representation.ts). Each is one TypeBox value with its Static type of the same name: the value is the
// OpenAPI document's schema (src/openapi/document.ts), the type is what the functions below return, so
// the compiler refuses a representation that drifts from its published schema.
import { CloneType, Type, type Static } from '../typebox.js';
import { type EffectiveState, effectiveState } from './flag-state.js';
import { bucketingField } from './bucketing.js';
import { kTypedProperties, type TypedFields } from '../model/schemas.js';
import type { Flag, FlagUsage } from '../model/flags.js';
import type { Project } from '../model/projects.js';
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

/**
 * Adds the typed-variant fields of `state` to a representation, when it has them (a boolean flag's has
 * none), its experiment when it has one, and its Unleash model when it has one.
 */
function addTyped(out: TypedFields & { experiment?: string; unleash?: UnleashModel }, state: EffectiveState): void {
  if (state.experiment !== undefined) out.experiment = state.experiment;
  if (state.unleash !== undefined) out.unleash = state.unleash;
  if (state.typed === undefined) return;
  out.variants = state.typed.variants;
  out.defaultVariant = state.typed.defaultVariant;
  out.targeting = state.typed.targeting;
  if (state.typed.metadata !== undefined) out.metadata = state.typed.metadata;
}

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

/** A flag's usage as read from the store (undefined: none written yet). */
export type UsageOf = (flagId: string) => FlagUsage | undefined;

/** Flat form: a single flag, or one environment of a group flag (with `environment` set). */
export function flatFlag(flag: Flag, env: string | null, usage: FlagUsage | undefined): FlatFlag {
  const state = effectiveState(flag, env);
  const out: FlatFlag = {
    ...flagFacts(flag, usage),
    enabled: state.enabled,
    trafficPercentage: state.trafficPercentage,
    cohorts: state.cohorts,
    audienceId: state.audienceId,
  };
  if (flag.kind === 'groupflag' && env !== null) out.environment = env;
  addTyped(out, state);
  return out;
}

/** Environments form of a group flag: one entry per environment of the project, effective cohorts. */
export function environmentsFlag(flag: Flag & { kind: 'groupflag' }, project: Project, usage: FlagUsage | undefined): EnvironmentsFlag {
  const environments: Record<string, EnvironmentEntry> = {};
  for (const env of project.environments) {
    const state = effectiveState(flag, env);
    const entry: EnvironmentEntry = {
      enabled: state.enabled,
      trafficPercentage: state.trafficPercentage,
      cohorts: state.cohorts,
      audienceId: state.audienceId,
      updatedAt: flag.updatedAt,
    };
    addTyped(entry, state);
    environments[env] = entry;
  }
  return { ...flagFacts(flag, usage), kind: 'groupflag', environments };
}

/** What both forms say first, in this order (the keys' order is the answer's): the flag itself and its usage. */
function flagFacts(flag: Flag, usage: FlagUsage | undefined) {
  return {
    id: flag.id,
    name: flag.name,
    kind: flag.kind,
    ...bucketingField(flag.bucketing),
    description: flag.description,
    tags: flag.tags,
    updatedAt: flag.updatedAt,
    lastEvaluatedAt: usage?.lastEvaluatedAt ?? null,
    evaluations: usage?.evaluations ?? 0,
  };
}

/** GET /api/v1/flags: every flag of the project, each as `representFlag` shows it. */
export function flagList(flags: readonly Flag[], project: Project, env: string | null, usageOf: UsageOf): FlagList {
  return { flags: flags.map((f) => representFlag(f, project, env, usageOf(f.id))) };
}

/** PATCH /api/v1/flags/{id}: whether anything changed, and the flag in flat form. */
export function patchResult(changed: boolean, flag: Flag, env: string | null, usage: FlagUsage | undefined): PatchResult {
  return { changed, flag: flatFlag(flag, env, usage) };
}

/** A group flag without `env` is in environments form; everything else is flat. */
export function representFlag(flag: Flag, project: Project, env: string | null, usage: FlagUsage | undefined): FlagRepresentation {
  return flag.kind === 'groupflag' && env === null ? environmentsFlag(flag, project, usage) : flatFlag(flag, env, usage);
}

// A project environment's flags in Unleash's client API model (`GET /api/client/features`, version 2), so
// that Unleash's stock server SDKs, which evaluate locally, answer as Flagwire's Evaluation API does
// (docs/api.md: Unleash's SDKs). Each flag is said only where Unleash's model says exactly what it does;
// every other flag is left out and named, as the flagd flag sets do (src/sync/flag-set.ts).
//
// The context, as an application gives it to an Unleash SDK, maps as context.ts says: userId (else
// sessionId) is the targeting key, properties.cohort the cohort, properties.<attribute> the attributes.
//
// A boolean flag, enabled, becomes these strategies (Unleash answers true if any strategy does):
//   1. default, constraint cohort IN [cohorts]                     (a listed cohort: true, whatever else)
//   2. flexibleRollout {rollout: P, stickiness: default, groupId: the flag's id},
//      constraints: each audience rule as attribute IN [values]
// flexibleRollout is true when murmur3(groupId + ":" + userId) % 100 + 1 <= P, that is when Flagwire's
// bucket, murmur3(flagId + ":" + key) % 100, is below P: the same bucket for the same key (for a key of
// ASCII characters with the Node SDK, whose murmurhash3js hashes UTF-16 code units cut to a byte where
// Flagwire hashes UTF-8). Without a userId or sessionId it rolls, as Flagwire does without a key or cohort. At 100% the rollout is
// the default strategy; at 0% there is none; a flag no caller can get is `enabled: false`.
//
// A flag whose state is in Unleash's model (issue 60, src/model/unleash-model.ts) is served as stored
// (modelFeature): the SDK evaluates what Flagwire's server evaluates (src/unleash/rules/feature.ts).
import { effectiveState } from '../flags/records/flag-state.js';
import type { Flag } from '../model/flags.js';
import type { Audience } from '../model/projects.js';
import { isAttribute, kCohortProperty, kUnleashFields } from './context.js';
import type {
  UnleashDependency,
  UnleashModel,
  UnleashSegment,
  UnleashStrategy as ModelStrategy,
  UnleashVariant,
} from '../model/unleash-model.js';

/** What decides how a project's flags are said in one environment. */
export interface ClientFeaturesInput {
  /** null: a single-environment project. */
  environment: string | null;
  projectId: string;
  flags: readonly Flag[];
  audiences: readonly Audience[];
  /** The organisation's plan allows audiences now (EvalEngine.audiencesAllowed). */
  audiencesAllowed: boolean;
  /** Only flags whose name starts with it (the SDKs' `namePrefix`); '' for every flag. */
  namePrefix: string;
}

export interface UnleashConstraint {
  contextName: string;
  operator: 'IN';
  values: string[];
  inverted: false;
  caseInsensitive: false;
}

export interface UnleashStrategy {
  name: 'default' | 'flexibleRollout';
  parameters: Record<string, string>;
  constraints: UnleashConstraint[];
}

export interface UnleashFeature {
  name: string;
  description: string;
  type: 'release';
  project: string;
  enabled: boolean;
  stale: false;
  impressionData: boolean;
  /** A Flagwire flag's said strategies, or a flag in Unleash's model's own (its segment ids renumbered). */
  strategies: (UnleashStrategy | ModelStrategy)[];
  variants: UnleashVariant[];
  dependencies?: UnleashDependency[];
}

/** The answer's segments: each flag in Unleash's model's own, with the id the answer gives it (from 1). */
type ServedSegment = UnleashSegment;

export interface OmittedFeature {
  flagId: string;
  name: string;
  reason: string;
}

/** The client API's answer (its JSON) and the flags left out of it. */
export interface ClientFeatures {
  json: string;
  omitted: OmittedFeature[];
}

/** The id a missing segment is served under: no served segment has it. */
const kNoSegment = 0;

export function buildClientFeatures(input: ClientFeaturesInput): ClientFeatures {
  const { features, segments, omitted } = saidFeatures(input);
  // `flagwire` is Flagwire's own: Unleash's SDKs read version, features and segments.
  const answer = { version: 2, features, segments, flagwire: { project: input.projectId, environment: input.environment, omitted } };
  return { json: JSON.stringify(answer), omitted };
}

/** The flags said in Unleash's model, the segments they name, and those left out with why. */
export function saidFeatures(input: ClientFeaturesInput): {
  features: UnleashFeature[];
  segments: ServedSegment[];
  omitted: OmittedFeature[];
} {
  const features: UnleashFeature[] = [];
  const segments: ServedSegment[] = [];
  const omitted: OmittedFeature[] = [];
  const modelNames = new Set(input.flags.filter((f) => effectiveState(f, input.environment).unleash !== undefined).map((f) => f.name));
  for (const flag of input.flags) {
    if (!flag.name.startsWith(input.namePrefix)) continue;
    const said = featureInUnleash(flag, input, modelNames, segments);
    if (typeof said === 'string') omitted.push({ flagId: flag.id, name: flag.name, reason: said });
    else features.push(said);
  }
  return { features, segments, omitted };
}

/**
 * `flag` in Unleash's model, or why that model cannot say it exactly. `modelNames`: the flags whose state
 * here is in Unleash's model (the only parents a dependency reads); `segments` gathers the answer's.
 */
export function featureInUnleash(
  flag: Flag,
  input: ClientFeaturesInput,
  modelNames: ReadonlySet<string> = new Set(),
  segments: ServedSegment[] = [],
): UnleashFeature | string {
  const state = effectiveState(flag, input.environment);
  if (state.unleash !== undefined) return modelFeature(flag, state.enabled, state.unleash, input, modelNames, segments);
  if (state.typed !== undefined) return 'a typed flag: its variants and rule are not said in Unleash’s model yet';
  if (flag.bucketing === 'fractional') return 'its bucketing is flagd’s fractional point, not Unleash’s hash';
  const trimmed = (values: readonly string[]) => values.every((v) => v !== '' && v.trim() === v);
  if (!trimmed(state.cohorts)) return 'a cohort is empty or has spaces around it, which Unleash’s SDKs trim from a constraint';
  let audience: Audience | null = null;
  if (state.audienceId !== null) {
    if (!input.audiencesAllowed) return 'it applies an audience, which the organisation’s plan does not allow now';
    audience = input.audiences.find((a) => a.id === state.audienceId) ?? null;
    for (const rule of audience?.rules ?? []) {
      // Unleash's SDKs read their own fields from the context itself, not from properties.
      if (kUnleashFields.has(rule.attribute) || !isAttribute(rule.attribute))
        return `its audience reads "${rule.attribute}", which is not an attribute in Unleash’s context as Flagwire maps it`;
      if (!trimmed(rule.values)) return 'an audience value is empty or has spaces around it, which Unleash’s SDKs trim from a constraint';
    }
  }
  const strategies: UnleashStrategy[] = [];
  if (state.enabled && state.cohorts.length > 0) {
    strategies.push({ name: 'default', parameters: {}, constraints: [inConstraint(kCohortProperty, state.cohorts)] });
  }
  // An audience that no longer exists never matches (design §2): only the cohorts let callers in.
  const audienceMet = state.audienceId === null || audience !== null;
  if (state.enabled && audienceMet && state.trafficPercentage > 0) {
    const constraints = (audience?.rules ?? []).map((rule) => inConstraint(rule.attribute, rule.values));
    strategies.push(
      state.trafficPercentage >= 100
        ? { name: 'default', parameters: {}, constraints }
        : {
            name: 'flexibleRollout',
            parameters: { rollout: String(state.trafficPercentage), stickiness: 'default', groupId: flag.id },
            constraints,
          },
    );
  }
  return {
    name: flag.name,
    description: flag.description,
    type: 'release',
    project: input.projectId,
    // Enabled with no strategy is on for everyone in Unleash: a flag no caller can get is disabled.
    enabled: strategies.length > 0,
    stale: false,
    impressionData: false,
    strategies,
    variants: [],
  };
}

/**
 * A flag in Unleash's model, served as stored: its strategies, variants, dependencies and impressionData,
 * with its segments added to the answer's under ids unique in the answer (each flag's own ids may repeat
 * another's). Left out when a dependency names a flag the SDK would read otherwise than Flagwire does: one
 * whose state here is not in Unleash's model (Flagwire's server takes it as missing), or one the SDK's
 * namePrefix leaves out.
 */
function modelFeature(
  flag: Flag,
  enabled: boolean,
  model: UnleashModel,
  input: ClientFeaturesInput,
  modelNames: ReadonlySet<string>,
  segments: ServedSegment[],
): UnleashFeature | string {
  for (const dependency of model.dependencies ?? []) {
    const parent = dependency.feature;
    if (!modelNames.has(parent) && input.flags.some((f) => f.name === parent))
      return `it depends on "${parent}", whose state here is not in Unleash's model, which Flagwire's server reads as no parent`;
    if (!parent.startsWith(input.namePrefix)) return `it depends on "${parent}", which the name prefix leaves out of this answer`;
  }
  const ids = new Map<number, number>();
  for (const segment of model.segments ?? []) {
    const id = segments.length + 1;
    ids.set(segment.id, id);
    segments.push(
      segment.name === undefined ? { id, constraints: segment.constraints } : { id, name: segment.name, constraints: segment.constraints },
    );
  }
  // A segment id the model names but does not have is served as 0, which no served segment has (they
  // count from 1): the SDK finds no segment, and the strategy never lets a context in, as on Flagwire.
  const strategies = model.strategies.map((s) =>
    s.segments === undefined ? s : { ...s, segments: s.segments.map((id) => ids.get(id) ?? kNoSegment) },
  );
  const feature: UnleashFeature = {
    name: flag.name,
    description: flag.description,
    type: 'release',
    project: input.projectId,
    enabled,
    stale: false,
    impressionData: model.impressionData === true,
    strategies,
    variants: model.variants ?? [],
  };
  if (model.dependencies !== undefined) feature.dependencies = model.dependencies;
  return feature;
}

function inConstraint(contextName: string, values: readonly string[]): UnleashConstraint {
  return { contextName, operator: 'IN', values: [...values], inverted: false, caseInsensitive: false };
}

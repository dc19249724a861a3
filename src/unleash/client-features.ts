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
import { effectiveState } from '../flags/flag-state.js';
import type { Flag } from '../model/flags.js';
import type { Audience } from '../model/projects.js';
import { isAttribute, kCohortProperty, kUnleashFields } from './context.js';

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
  impressionData: false;
  strategies: UnleashStrategy[];
  variants: [];
}

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

export function buildClientFeatures(input: ClientFeaturesInput): ClientFeatures {
  const { features, omitted } = saidFeatures(input);
  // `flagwire` is Flagwire's own: Unleash's SDKs read version, features and segments.
  const answer = { version: 2, features, segments: [], flagwire: { project: input.projectId, environment: input.environment, omitted } };
  return { json: JSON.stringify(answer), omitted };
}

/** The flags said in Unleash's model, and those left out with why. */
export function saidFeatures(input: ClientFeaturesInput): { features: UnleashFeature[]; omitted: OmittedFeature[] } {
  const features: UnleashFeature[] = [];
  const omitted: OmittedFeature[] = [];
  for (const flag of input.flags) {
    if (!flag.name.startsWith(input.namePrefix)) continue;
    const said = featureInUnleash(flag, input);
    if (typeof said === 'string') omitted.push({ flagId: flag.id, name: flag.name, reason: said });
    else features.push(said);
  }
  return { features, omitted };
}

/** `flag` in Unleash's model, or why that model cannot say it exactly. */
export function featureInUnleash(flag: Flag, input: ClientFeaturesInput): UnleashFeature | string {
  const state = effectiveState(flag, input.environment);
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

function inConstraint(contextName: string, values: readonly string[]): UnleashConstraint {
  return { contextName, operator: 'IN', values: [...values], inverted: false, caseInsensitive: false };
}

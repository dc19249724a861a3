// The importer's one mapping (issue 60, item 4): an Unleash feature's configuration in one environment as
// a Flagwire flag state that answers every context as Unleash's SDKs do, or the reasons it cannot be.
//
// The state carries Unleash's model as a rule type (src/model/unleash-model.ts): the environment's strategies (constraints,
// segments, variants), its variants, the feature's dependencies and the segments its strategies name,
// as Unleash's client API says them, so Flagwire evaluates them as Unleash's SDKs do and serves them
// verbatim on the client API. Refused, and named: what no server evaluates for an SDK (custom
// strategies, applicationHostname), a segment the source has no constraints for (an export file's), and
// whatever the model refuses to store (model-problems.ts: an operand that does not parse). A part the
// SDKs never meet (an unknown operator, an expression RE2 does not compile) is carried: Flagwire reads
// it as they do, and the flag's representation names it (unleashWarnings).
import type { ModelState } from '../flags-as-code/project-model.js';
import type {
  ExportConstraint,
  ExportStrategy,
  ExportVariant,
  SourceEnvironmentConfig,
  SourceFeature,
  SourceSegment,
} from './import-source.js';
import {
  kUnleashStrategies,
  type UnleashConstraint,
  type UnleashModel,
  type UnleashPayload,
  type UnleashStrategyVariant,
} from '../model/unleash-model.js';
import { unleashStateProblems } from './rules/model-problems.js';

/** Why a part of a flag is not carried. */
export interface Refusal {
  /** Where: the environment and strategy, or the flag itself. */
  where: string;
  reason: string;
}

export type MappedState = { ok: true; state: ModelState } | { ok: false; refusals: Refusal[] };

const kNeverCarried: Readonly<Record<string, string>> = {
  applicationHostname: "applicationHostname reads the host the SDK runs on, which Flagwire's server cannot know",
};

/** `config` (an environment's) of `feature` as a Flagwire state, with the segments its strategies may name. */
export function mapEnvironment(
  env: string,
  feature: SourceFeature,
  config: SourceEnvironmentConfig,
  segments: ReadonlyMap<number, SourceSegment>,
): MappedState {
  const refusals: Refusal[] = [];
  const used = new Map<number, SourceSegment>();
  config.strategies.forEach((s, i) => {
    const where = `environments.${env}.strategies[${i}] (${s.title ? `${s.name} "${s.title}"` : s.name})`;
    const never = kNeverCarried[s.name];
    if (never !== undefined) refusals.push({ where, reason: never });
    else if (!(kUnleashStrategies as readonly string[]).includes(s.name))
      refusals.push({ where, reason: 'a custom strategy, which only SDKs given its code evaluate' });
    for (const id of s.segments ?? []) {
      const segment = segments.get(id);
      if (segment === undefined) refusals.push({ where, reason: `segment ${id}, which the source does not define` });
      else if (segment.constraints === null)
        refusals.push({
          where,
          reason: `segment "${segment.name}", whose constraints an export file does not carry: import from the running Unleash (--url)`,
        });
      else used.set(id, segment);
    }
  });
  if (refusals.length > 0) return { ok: false, refusals };
  const unleash: UnleashModel = {
    strategies: config.strategies.map(strategy),
    ...(config.variants.length > 0
      ? { variants: config.variants.map((v) => ({ ...variant(v), ...(v.overrides?.length ? { overrides: v.overrides } : {}) })) }
      : {}),
    ...(feature.dependencies.length > 0 ? { dependencies: feature.dependencies } : {}),
    ...(used.size > 0
      ? { segments: [...used.values()].map((s) => ({ id: s.id, name: s.name, constraints: (s.constraints ?? []).map(constraint) })) }
      : {}),
    ...(feature.impressionData ? { impressionData: true } : {}),
  };
  const problems = unleashStateProblems(unleash, false, false);
  if (problems.length > 0) return { ok: false, refusals: problems.map((reason) => ({ where: `environments.${env}`, reason })) };
  return { ok: true, state: { enabled: config.enabled, trafficPercentage: 0, audience: null, cohorts: [], unleash } };
}

function strategy(s: ExportStrategy): UnleashModel['strategies'][number] {
  return {
    name: s.name,
    parameters: s.parameters ?? {},
    constraints: (s.constraints ?? []).map(constraint),
    ...(s.segments?.length ? { segments: s.segments } : {}),
    ...(s.variants?.length ? { variants: s.variants.map(variant) } : {}),
  };
}

function constraint(c: ExportConstraint): UnleashConstraint {
  return {
    contextName: c.contextName,
    operator: c.operator,
    ...(c.value === undefined ? {} : { value: c.value }),
    ...(c.values === undefined ? {} : { values: c.values }),
    inverted: c.inverted ?? false,
    caseInsensitive: c.caseInsensitive ?? false,
  };
}

function variant(v: ExportVariant): UnleashStrategyVariant {
  return {
    name: v.name,
    weight: v.weight,
    ...(v.stickiness === undefined ? {} : { stickiness: v.stickiness }),
    ...(v.payload === undefined ? {} : { payload: v.payload as UnleashPayload }),
    ...(v.weightType === 'fix' || v.weightType === 'variable' ? { weightType: v.weightType } : {}),
  };
}

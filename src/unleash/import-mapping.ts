// The importer's one mapping (issue 60, item 4): an Unleash feature's configuration in one environment as
// a Flagwire flag state that answers every context as Unleash's SDKs do, or the reasons it cannot be.
//
// Today a state is Flagwire's own boolean state, read back the way client-features.ts says one in
// Unleash's model (the context as context.ts maps it), so only what that model says exactly is carried:
//   a `default` strategy with one constraint `cohort IN [...]`            -> the state's cohorts
//   one `default` strategy (or flexibleRollout at 100% with the default   -> trafficPercentage 100, its
//     or random stickiness), its constraints and its segments' all `IN`      constraints an audience
//     on a property of the context, none inverted
//   flexibleRollout at 0% (never true), or no strategy left              -> trafficPercentage 0
//   enabled with no strategy at all (Unleash's SDKs: true for everyone)  -> trafficPercentage 100
// Everything else is a refusal naming what, never dropped. Those marked `awaitsModel` are what Unleash's
// model as a rule type (issue 60, item 3: strategies, constraints, segments and variants stored as
// Unleash's client API says them) carries whole; once it is in, a state becomes that `unleash` block and
// only strategies no SDK evaluates on a server (custom ones, applicationHostname) stay refused.
import type { AudienceRule } from '../model/projects.js';
import type { ModelState } from '../flags-as-code/project-model.js';
import { isAttribute, kCohortProperty, kUnleashFields } from './context.js';
import type { ExportConstraint, ExportStrategy, SourceEnvironmentConfig, SourceSegment } from './import-source.js';

/** Why a part of a flag is not carried. */
export interface Refusal {
  /** Where: the environment and strategy, or the flag itself. */
  where: string;
  reason: string;
  /** Unleash's model as a rule type (issue 60, item 3) carries it: not yet in this Flagwire. */
  awaitsModel: boolean;
}

export type MappedState = { ok: true; state: ModelState; audience: AudienceRule[] | null } | { ok: false; refusals: Refusal[] };

/** Unleash's strategies no server SDK can evaluate for another host: never carried. */
const kNeverCarried: Readonly<Record<string, string>> = {
  applicationHostname: "applicationHostname reads the host the SDK runs on, which Flagwire's server cannot know",
};
const kKnownStrategies = new Set([
  'default',
  'flexibleRollout',
  'userWithId',
  'remoteAddress',
  'gradualRolloutUserId',
  'gradualRolloutSessionId',
  'gradualRolloutRandom',
]);

/** The part of a configuration a strategy is carried as, or why it cannot be. */
type StrategyPart =
  | { kind: 'cohorts'; cohorts: string[] }
  | { kind: 'everyone'; rules: ExportConstraint[] }
  | { kind: 'nobody' }
  | { kind: 'refused'; reason: string; awaitsModel: boolean };

/** `config` (an environment's) as a Flagwire state, with the segments its strategies may name. */
export function mapEnvironment(env: string, config: SourceEnvironmentConfig, segments: ReadonlyMap<number, SourceSegment>): MappedState {
  const refusals: Refusal[] = [];
  if (config.variants.length > 0)
    refusals.push({ where: `environments.${env}.variants`, reason: `${config.variants.length} feature variant(s)`, awaitsModel: true });
  const parts = config.strategies.map((s, i) => {
    const part = strategyPart(s, segments);
    if (part.kind === 'refused')
      refusals.push({ where: `environments.${env}.strategies[${i}] (${label(s)})`, reason: part.reason, awaitsModel: part.awaitsModel });
    return part;
  });
  const cohortParts = parts.filter((p) => p.kind === 'cohorts');
  const everyoneParts = parts.filter((p) => p.kind === 'everyone');
  // Unleash answers true when any strategy does: Flagwire's state is one cohort list or'd with one audience.
  if (cohortParts.length > 1 || everyoneParts.length > 1)
    refusals.push({
      where: `environments.${env}.strategies`,
      reason: `${cohortParts.length > 1 ? 'several cohort lists' : 'several targeted strategies'}, any of which lets a caller in`,
      awaitsModel: true,
    });
  if (refusals.length > 0) return { ok: false, refusals };
  const everyone = everyoneParts[0];
  const rules = everyone === undefined ? [] : audienceRules(everyone.rules);
  const state: ModelState = {
    enabled: config.enabled,
    // Enabled without any strategy, Unleash's SDKs answer true for everyone.
    trafficPercentage: everyone !== undefined || config.strategies.length === 0 ? 100 : 0,
    audience: null,
    cohorts: cohortParts[0]?.cohorts ?? [],
  };
  return { ok: true, state, audience: rules.length > 0 ? rules : null };
}

function label(s: ExportStrategy): string {
  return s.title ? `${s.name} "${s.title}"` : s.name;
}

function strategyPart(s: ExportStrategy, segments: ReadonlyMap<number, SourceSegment>): StrategyPart {
  const never = kNeverCarried[s.name];
  if (never !== undefined) return { kind: 'refused', reason: never, awaitsModel: false };
  if (!kKnownStrategies.has(s.name))
    return { kind: 'refused', reason: `a custom strategy, which only SDKs given its code evaluate`, awaitsModel: false };
  if ((s.variants ?? []).length > 0) return { kind: 'refused', reason: `${s.variants!.length} strategy variant(s)`, awaitsModel: true };
  const constraints = [...(s.constraints ?? [])];
  for (const id of s.segments ?? []) {
    const segment = segments.get(id);
    if (segment === undefined) return { kind: 'refused', reason: `segment ${id}, which the source does not define`, awaitsModel: false };
    if (segment.constraints === null)
      return {
        kind: 'refused',
        reason: `segment "${segment.name}", whose constraints an export file does not carry: import from the running Unleash (--url)`,
        awaitsModel: false,
      };
    constraints.push(...segment.constraints);
  }
  const rollout = s.name === 'flexibleRollout' ? Number(s.parameters?.rollout ?? 100) : null;
  if (rollout !== null && rollout <= 0) return { kind: 'nobody' };
  if (s.name !== 'default' && !(rollout === 100 && everyoneSticks(String(s.parameters?.stickiness ?? 'default'))))
    return { kind: 'refused', reason: strategyReason(s), awaitsModel: true };
  const only = constraints.length === 1 ? constraints[0]! : null;
  if (s.name === 'default' && only?.contextName === kCohortProperty && only.operator === 'IN' && only.inverted !== true) {
    const cohorts = cleanValues(only.values ?? []);
    return cohorts.length === 0 ? { kind: 'nobody' } : { kind: 'cohorts', cohorts };
  }
  const problem = constraints.map(constraintProblem).find((p) => p !== null);
  if (problem !== undefined) return { kind: 'refused', reason: problem, awaitsModel: true };
  if (constraints.some((c) => cleanValues(c.values ?? []).length === 0)) return { kind: 'nobody' };
  return { kind: 'everyone', rules: constraints };
}

/** flexibleRollout at 100% lets in everyone only where its stickiness needs no field of the context. */
function everyoneSticks(stickiness: string): boolean {
  return stickiness === 'default' || stickiness === 'random';
}

function strategyReason(s: ExportStrategy): string {
  if (s.name === 'flexibleRollout')
    return `a rollout of ${s.parameters?.rollout}% (stickiness ${s.parameters?.stickiness ?? 'default'}, group "${s.parameters?.groupId ?? ''}"): Flagwire's own percentage buckets by its flag id`;
  if (s.name === 'userWithId') return 'userWithId, which reads userId: Flagwire reads userId as its targeting key';
  return `the ${s.name} strategy`;
}

/** Why a constraint is not an audience rule (attribute IN values), or null. */
function constraintProblem(c: ExportConstraint): string | null {
  if (c.operator !== 'IN' || c.inverted === true) return `a constraint ${c.contextName} ${c.inverted ? 'NOT ' : ''}${c.operator}`;
  if (c.contextName === kCohortProperty) return 'a constraint on cohort beside others';
  if (kUnleashFields.has(c.contextName) || !isAttribute(c.contextName))
    return `a constraint on ${c.contextName}, which Flagwire does not read as an attribute`;
  return null;
}

/** A constraint's values as Unleash's SDKs compare them: empty ones dropped, the rest trimmed. */
function cleanValues(values: readonly string[]): string[] {
  return values.filter((v) => v !== '').map((v) => v.trim());
}

function audienceRules(constraints: readonly ExportConstraint[]): AudienceRule[] {
  return constraints.map((c) => ({ attribute: c.contextName, values: cleanValues(c.values ?? []) }));
}

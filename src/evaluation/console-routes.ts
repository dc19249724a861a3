// The console's playground (docs/web-console.md): a project's every flag evaluated for one context, with
// why each gives what it gives. The context becomes the Evaluation API's query string and is parsed by
// its own parser (EvalQuery), and the flags are compiled and decided by the eval workers' engine
// (EvalEngine, explain.ts), so the playground answers what GET /v1/flags/{id}?<that query> answers.
//
// It runs in-process on the main thread, in the request's own store snapshot (docs/decisions.md: Web
// console playground): a throwaway engine per request, whose evaluation counts are never taken, so
// trying a context does not mark flags as used.
import { type Static, Type } from '../typebox.js';
import { FlagwireError } from '../errors.js';
import { type EngineStore, EvalEngine, kEnvMissing, kEnvUnknown, projectEnv, stateInProjectEnv } from './engine/engine.js';
import { decidedBy } from './engine/evaluate.js';
import { type Explanation, explainState } from './engine/explain.js';
import { EvalQuery, kContextFields } from './engine/query.js';
import type { Why } from './engine/why.js';
import { notFoundDetail } from '../model/records/lookups.js';
import type { Audience } from '../model/projects.js';
import { compileValidator } from '../model/validation.js';
import { kReasons } from '../ofrep/answer.js';
import type { StoreReader } from '../store/interfaces.js';
import type { IfBranch } from '../targeting/if-branch.js';
import { projectAccess } from '../console-route/access.js';
import type { PlaygroundResult, PlaygroundView } from './console-answers.js';
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { compileForm, JsonObject } from '../console-route/forms.js';
import { effectiveState } from '../flags/records/flag-state.js';
import { typedProblems } from '../flags/variant-rules.js';
import { fragmentRules, projectFragments } from '../flags/records/fragment-records.js';
import { resolvedTyped } from '../flags/records/fragment-resolve.js';
import { type CompiledVariants, compileVariants } from './engine/variants.js';
import { getFlag } from '../flags/records/flag-store.js';
import { listAudiences } from '../model/records/project-records.js';

/**
 * The Evaluation API's context is a query string, which uWebSockets.js holds to 4 KiB with the request
 * line and headers (docs/operations.md): a context longer than that could not be asked of it either.
 */
export const kMaxPlaygroundQueryBytes = 4096;
export const kMaxPlaygroundAttributes = 100;

export const PlaygroundRequest = Type.Object(
  {
    targetingKey: Type.Optional(Type.String()),
    cohort: Type.Optional(Type.String()),
    env: Type.Optional(Type.String()),
    attributes: Type.Optional(
      Type.Array(Type.Object({ name: Type.String({ minLength: 1 }), value: Type.String() }, { additionalProperties: false }), {
        maxItems: kMaxPlaygroundAttributes,
      }),
    ),
    // A rule being edited on the flag page (issue 47), tried in place of the flag's saved one: nothing is saved.
    rule: Type.Optional(
      Type.Object({ flagId: Type.String(), targeting: Type.Record(Type.String(), Type.Unknown()) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);
export type PlaygroundRequest = Static<typeof PlaygroundRequest>;

// Read as any object first, then checked whole: the playground lists every problem, as the API does.
const kPlaygroundForm = compileForm(JsonObject);
const kRequestCheck = compileValidator(PlaygroundRequest, { quoteKeys: true });

export const kPlaygroundRoutes: readonly ApiRoute[] = [{ method: 'POST', pattern: 'projects/:projectId/playground', run: playground }];

function playground(call: ApiCall): PlaygroundView {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  return playgroundView(call.store, access.project.id, kPlaygroundForm.read(call.received), call.now);
}

/**
 * Every flag of project `projectId` evaluated for the context `body` (a PlaygroundRequest, checked here),
 * with why: the playground's answer, for whoever has been let read the project (the console's member,
 * an MCP tool's token, src/mcp).
 */
export function playgroundView(store: StoreReader, projectId: string, body: Record<string, unknown>, now: number): PlaygroundView {
  const query = contextQuery(body);
  const ctx = new EvalQuery();
  // contextQuery encodes every value, so the parser cannot refuse it; checked all the same.
  if (!ctx.parse(query)) throw new FlagwireError('INVALID_REQUEST', ctx.error!);
  const engine = new EvalEngine(sameSnapshot(store), () => now);
  engine.beginBatch();
  const project = engine.lookupProject(projectId);
  // Found: the caller's access check read it in this same snapshot.
  if (!project.found) throw new FlagwireError('NOT_FOUND', notFoundDetail('project', projectId));
  const env = projectEnv(project, ctx.env);
  if (env === kEnvMissing)
    throw new FlagwireError('INVALID_REQUEST', `This is a multi-environment project: choose "env" (${project.validEnvs}).`);
  if (env === kEnvUnknown)
    throw new FlagwireError('INVALID_REQUEST', `Unknown environment "${ctx.env}" for this project; ${project.validEnvs}.`);
  const tried = (body as PlaygroundRequest).rule;
  const triedVariants = tried === undefined ? null : triedRule(store, projectId, env, tried);
  const audiences = new Map(listAudiences(store, projectId).map((a) => [a.id, a]));
  const allowed = engine.audiencesAllowed(project.org);
  const results = project.flags.map((flag) => {
    const saved = stateInProjectEnv(flag, env)!;
    const state = tried !== undefined && flag.id === tried.flagId ? { ...saved, variants: triedVariants } : saved;
    const explained = explainState(state, ctx, allowed, engine.batchTime);
    const ruleRan = explained.enabled === true && state.variants !== null && state.variants.flag.rule !== null;
    return result(flag, explained, ruleRan, audiences, env);
  });
  return { query, env, results };
}

/**
 * The flag's typed variants in `env` with `rule.targeting` as its rule, compiled as the engine compiles a
 * stored one; 400 for a flag of no variants here, or a rule PATCH would refuse, in PATCH's words.
 */
function triedRule(
  store: StoreReader,
  projectId: string,
  env: string | null,
  rule: NonNullable<PlaygroundRequest['rule']>,
): CompiledVariants {
  const flag = getFlag(store, rule.flagId);
  if (flag === undefined || flag.projectId !== projectId)
    throw new FlagwireError('INVALID_REQUEST', `"rule.flagId": no flag ${rule.flagId} in this project.`);
  const typed = effectiveState(flag, env).typed;
  if (typed === undefined) throw new FlagwireError('INVALID_REQUEST', `"rule": ${flag.name} has no variants here, so no rule to try.`);
  const withRule = { ...typed, targeting: rule.targeting };
  const fragments = fragmentRules(projectFragments(store, projectId));
  const problems = typedProblems(withRule, fragments);
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.map((p) => `"${p.path}": ${p.message}`).join('; '));
  return compileVariants(resolvedTyped(withRule, fragments), flag.name);
}

/** The context as the Evaluation API's query string, each name and value percent-encoded; 400 for what it could not carry. */
function contextQuery(body: Record<string, unknown>): string {
  const problems = kRequestCheck.problems(body);
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  const request = body as PlaygroundRequest;
  const pairs: [string, string][] = [];
  // Empty means absent, as on the Evaluation API: left out of the query altogether.
  for (const name of ['targetingKey', 'cohort', 'env'] as const) {
    const value = request[name];
    if (value !== undefined && value !== '') pairs.push([name, value]);
  }
  const seen = new Set<string>();
  for (const { name, value } of request.attributes ?? []) {
    if (kContextFields.has(name)) throw new FlagwireError('INVALID_REQUEST', `"${name}" is not an attribute: it has a field of its own.`);
    if (seen.has(name)) throw new FlagwireError('INVALID_REQUEST', `The attribute "${name}" is given twice.`);
    seen.add(name);
    pairs.push([name, value]);
  }
  let query: string;
  try {
    query = pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&');
  } catch {
    throw new FlagwireError('INVALID_REQUEST', 'The context holds text that is not valid Unicode (a lone surrogate).');
  }
  if (Buffer.byteLength(query) > kMaxPlaygroundQueryBytes) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `The context is ${Buffer.byteLength(query)} bytes as a query string; the Evaluation API takes at most ${kMaxPlaygroundQueryBytes}.`,
    );
  }
  return query;
}

/**
 * The store as the engine reads it, in the snapshot the console took for this request: the engine's
 * batch start resets the snapshot, which here would read past the access check just made.
 */
function sameSnapshot(store: StoreReader): EngineStore {
  return {
    resetReadTxn: () => {},
    configSeq: () => store.configSeq(),
    revision: () => store.revision(),
    listKeyedBy: (kind, index, key, range) => store.listKeyedBy(kind, index, key, range),
    getKeyed: (kind, key) => store.getKeyed(kind, key),
  };
}

function result(
  flag: { id: string; name: string },
  explained: Explanation,
  ruleRan: boolean,
  audiences: ReadonlyMap<string, Audience>,
  env: string | null,
): PlaygroundResult {
  const { enabled, why, resolution } = explained;
  const out: PlaygroundResult = { id: flag.id, name: flag.name, enabled, reason: 'ERROR', why, because: gateText(why, audiences, env) };
  if (why.by === 'plan') out.errorCode = 'GENERAL';
  else if (why.by === 'roll') out.errorCode = 'TARGETING_KEY_MISSING';
  if (out.errorCode !== undefined) return out;
  if (resolution === null) {
    out.value = enabled!;
    out.variant = enabled ? 'on' : 'off';
    out.reason = kReasons[decidedBy(explained.decision!)]!;
    return out;
  }
  if (resolution.errorCode !== undefined) {
    out.errorCode = resolution.errorCode;
    out.because += `; the targeting rule failed: ${resolution.errorMessage}`;
    return out;
  }
  out.reason = resolution.reason;
  if (resolution.value !== undefined) {
    out.value = resolution.value;
    out.variant = resolution.variant!;
  }
  out.because += variantText(resolution.variant, resolution.value !== undefined, ruleRan, resolution.reason, explained.ruleBranch);
  return out;
}

function gateText(why: Why, audiences: ReadonlyMap<string, Audience>, env: string | null): string {
  const audience = (id: string) => {
    const found = audiences.get(id);
    return found === undefined ? 'an audience that no longer exists' : `audience "${found.name}"`;
  };
  switch (why.by) {
    case 'plan':
      return `${audience(why.audienceId)} applies, and the organisation's plan has no audiences: the Evaluation API refuses this flag (403)`;
    case 'disabled':
      return env === null ? 'flag off' : `flag off in ${env}`;
    case 'cohort':
      return `cohort "${why.cohort}" is listed`;
    case 'audience':
      if (why.matched) return `${audience(why.audienceId)} matched (${why.percentage}% of it)`;
      if (why.unmatched === null) return `${audience(why.audienceId)} never matches`;
      return `${audience(why.audienceId)} not matched (${why.unmatched.attribute} is not one of [${why.unmatched.values.join(', ')}])`;
    case 'static':
      return `${why.percentage}% for everyone`;
    case 'split':
      return `${why.bucket < why.percentage ? 'in' : 'not in'} the ${why.percentage}% rollout (bucket ${why.bucket} of 100, from the ${why.keyFrom})`;
    case 'roll':
      return `no targetingKey or cohort: each request rolls afresh against the ${why.percentage}% rollout (this roll: ${why.roll} of 100); OFREP asks for a key`;
    case 'unleash':
      return why.variant === 'disabled'
        ? "Unleash's model: decided by its strategies and dependencies, without a variant"
        : `Unleash's model: decided by its strategies, variant "${why.variant}"`;
  }
}

function variantText(variant: string | undefined, hasValue: boolean, ruleRan: boolean, reason: string, branch: IfBranch | null): string {
  if (!ruleRan) return hasValue ? `; variant "${variant}"` : "; the caller's default value";
  // Which condition of a rule whose top is an `if` held (the playground's addition to OFREP's reason).
  const which =
    branch === null
      ? ''
      : branch.held === null
        ? ` (none of its ${branch.conditions} conditions held)`
        : ` (its condition ${branch.held} of ${branch.conditions} held)`;
  if (reason === 'TARGETING_MATCH') return `; the targeting rule${which} picked variant "${variant}"`;
  return hasValue
    ? `; the targeting rule${which} gave no variant: the default "${variant}"`
    : `; the targeting rule${which} gave no variant: the caller's default value`;
}

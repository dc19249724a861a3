// The evaluation engine an eval worker runs: reads flags from the store, compiles each flag version
// once (evaluation states, audiences, and its two possible response bodies), answers requests.
//
// Freshness rule (read-your-writes, design §1): every batch starts with `beginBatch()`, which drops
// this thread's LMDB read snapshot (`resetReadTxn`) and reads the store's commit sequence number,
// which every write transaction of any process bumps. If it moved, every compiled entry is dropped.
// It also reads the store's revision in that snapshot: the one every answer of the batch names.
// A write acknowledged before a request arrived is therefore committed before the batch holding that
// request starts, and that batch reads it. A worker waiting on its batch channel blocks its event loop,
// which turns only now and then (batch-channel.ts), so lmdb-js's own snapshot reset (a setTimeout)
// cannot be relied on between batches: the explicit reset is required, not an optimisation.
//
// Usage (docs/operations.md: Flag usage): every request that finds its flag and environment counts one
// evaluation of it there, and one of each flag of the project for the project routes, whichever route set
// and whatever the answer (a request refused for its environment counts none: it was evaluated nowhere).
// The count is an increment on the compiled state of that environment (no Map write per request), made by
// the route set once it has the state (`count`, `countProject`); `takeUsage` sums the states' counts by
// flag, environment and hour when the main thread asks (pool.ts), and entries dropped before that (the
// store moved, a cache started over, a new hour began) hand their counts to `pending` first, so each
// count's evaluations are all in its hour.
import type { Org } from '../../model/accounts.js';
import { validEnvironmentsText } from '../../model/environments.js';
import { effectiveState } from '../../flags/records/flag-state.js';
import { addCount, type Flag, kSingleState, type UsageCount, usageHour } from '../../model/flags.js';
import { notFoundDetail } from '../../model/records/lookups.js';
import { hasAudiences } from '../../model/plans.js';
import type { Audience, Project } from '../../model/projects.js';
import type { SnapshotReader } from '../../store/interfaces.js';
import { evalErrorBody, evalExperimentBody, evalFlagBody, evalVariantBody, kAudiencePlanBody } from './bodies.js';
import {
  blockedByPlan,
  compileStateWith,
  type Decision,
  decideState,
  decisionInExperiment,
  decisionValue,
  type CompiledState,
} from './evaluate.js';
import { compileVariants, kPlanRefused, resolveVariant, settledAnswer, type CompiledVariants, unleashVariants } from './variants.js';
import { type DecidedEntries, ListPlans, listPlan, writeList } from './list-plan.js';
import type { Resolution } from '../../targeting/compiled-flag.js';
import { compileUnleash, unleashToggleVariant } from '../../unleash/rules/state.js';
import type { ResultWriter } from './protocol.js';
import { projectConfigTag } from './config-tag.js';
import { EvalQuery } from './query.js';
import { decodePathId } from '../../http/path-id.js';
import { fragmentRules, projectFragments } from '../../flags/records/fragment-records.js';
import { ResolvedFragments } from '../../flags/records/fragment-resolve.js';
import { getFlag, listFlags } from '../../flags/records/flag-store.js';
import { getOrg } from '../../model/records/org-records.js';
import { getProject, getAudience, listAudiences } from '../../model/records/project-records.js';

export type EngineStore = Pick<SnapshotReader, 'resetReadTxn' | 'configSeq' | 'revision' | 'getKeyed' | 'listKeyedBy'>;

/** One state of a flag version (the flag's, or one environment's), compiled: the spec's rules, and its typed variants if it has them. */
export interface EvalState extends CompiledState {
  /** Null: a boolean flag state. */
  readonly variants: CompiledVariants | null;
  /** With an experiment, this state's own bodies (they name it); null without one, the flag version's serve. */
  readonly experimentBodies: ExperimentBodies | null;
  /** Evaluations counted in this state's environment since its counts were last taken, and the latest one's time. */
  evaluations: number;
  lastEvaluatedAt: number;
}

/**
 * The answers of a state with an experiment, built on first use and kept with the flag version: they say
 * the experiment and whether each answer is an exposure, so they are the state's (a group flag's
 * environments may run different experiments), where a state without one shares its flag version's.
 */
export interface ExperimentBodies {
  /** The Evaluation API's body of a boolean state, by decision (reason << 1 | value). */
  readonly eval: (Buffer | undefined)[];
  /** OFREP's bodies and bulk pairs of a boolean state, as FlagEntry's ofrepBodies and ofrepPairs. */
  ofrepBodies: (Buffer | undefined)[] | null;
  ofrepPairs: (Buffer | undefined)[] | null;
}

/**
 * A flag version, compiled. Other evaluation route sets (src/ofrep) read it through `lookupFlag`/`lookupProject`
 * and may keep their own bodies for it in `ofrepBodies`: dropped with the entry when the store moves.
 */
export interface FlagEntry {
  readonly found: true;
  readonly id: string;
  readonly name: string;
  readonly projectId: string;
  readonly updatedAt: number;
  /** The only two 200 bodies a boolean state of this flag version can have: index 0 `enabled: false`, 1 `enabled: true`. */
  readonly bodies: readonly [Buffer, Buffer];
  /**
   * 200 bodies of its variant states by answer, for `enabled: false` (0) and `true` (1), built on first
   * use; bounded: a state's answers are fixed (a rule's errors all share one body).
   */
  variantBodies: [Map<Resolution, Buffer>, Map<Resolution, Buffer>] | null;
  /** A single-environment flag's state; null for a group flag. */
  readonly state: EvalState | null;
  /** A group flag's state per environment of its project; null for a single flag. */
  readonly envs: ReadonlyMap<string, EvalState> | null;
  readonly validEnvs: string;
  /** The 404 body for a group flag requested without `env`. */
  readonly envMissing: Buffer | null;
  /** The owning organisation (null for a personal project): decides whether audiences may apply. */
  readonly org: Org | null;
  /** OFREP answers of this version, built on first use (src/ofrep/evaluate.ts); null until then. */
  ofrepBodies: (Buffer | undefined)[] | null;
  /** OFREP answers of its variant states by answer, keyed by id (0) and by name (1); null until first use. */
  ofrepVariantBodies: [Map<Resolution, Buffer>, Map<Resolution, Buffer>] | null;
  /** OFREP bulk entries of this version (by id, a comma, by name) per answer slot, and per variant answer; null until first use. */
  ofrepPairs: (Buffer | undefined)[] | null;
  ofrepVariantPairs: Map<Resolution, Buffer> | null;
}

/**
 * Which environment a request is evaluated in: one home for the Evaluation API and OFREP, which only
 * word the refusals differently (a 404 there, INVALID_CONTEXT here). A single-environment flag or
 * project has one state and ignores `env`; a group flag or a multi-environment project needs `env`,
 * one of the project's environments. Numbers, not objects, so the hot path allocates nothing.
 */
export const kEnvMissing = 0;
export const kEnvUnknown = 1;
export type EnvProblem = typeof kEnvMissing | typeof kEnvUnknown;

/** The flag's state in `env`, or why there is none. */
export function stateInEnv(flag: FlagEntry, env: string | null): EvalState | EnvProblem {
  if (flag.state !== null) return flag.state;
  if (env === null) return kEnvMissing;
  return flag.envs!.get(env) ?? kEnvUnknown;
}

/** The environment a project's flags are evaluated in (null: the project has one), or why there is none. */
export function projectEnv(project: ProjectEntry, env: string | null): string | null | EnvProblem {
  if (!project.multi) return null;
  if (env === null) return kEnvMissing;
  return project.envs.has(env) ? env : kEnvUnknown;
}

/** A flag's state in the environment projectEnv() accepted for its project (null: it has none there). */
export function stateInProjectEnv(flag: FlagEntry, env: string | null): EvalState | null {
  return flag.state ?? flag.envs!.get(env!) ?? null;
}

export interface ProjectEntry {
  readonly found: true;
  readonly id: string;
  readonly multi: boolean;
  readonly envs: ReadonlySet<string>;
  readonly flags: readonly FlagEntry[];
  /** The same flags by name (names are unique in a project): OFREP accepts a name as its key. */
  readonly byName: ReadonlyMap<string, FlagEntry>;
  readonly validEnvs: string;
  readonly envMissing: Buffer;
  readonly org: Org | null;
  /** What decides this project's answers, as 8 hex digits (projectConfigTag, src/evaluation/engine/config-tag.ts). */
  readonly configTag: string;
}

/** A lookup that found nothing, with its 404 body (cached too: a client polling a deleted id costs a Map hit). */
export interface Missing {
  readonly found: false;
  readonly body: Buffer;
}

/**
 * The project route's lists as written for every context (list-plan.ts), by whether the plan allows
 * audiences (1) or not (0): a flag without a state in the environment, or whose audience the plan refuses,
 * is `enabled: false`; a settled state (settledAnswer) has its one body; the rest are decided per request.
 */
const kProjectPlans = new ListPlans<ProjectEntry>(2, (project, kind, env) =>
  listPlan(project.flags.length, (i) => {
    const flag = project.flags[i]!;
    const state = stateInProjectEnv(flag, env);
    if (state === null) return flag.bodies[0];
    const settled = settledAnswer(state, kind === 1);
    if (settled === null) return null;
    return settled === kPlanRefused ? flag.bodies[0] : decidedBody(flag, state, settled.decision, settled.resolution);
  }),
);
const kOpenBracket = 0x5b;
const kCloseBracket = 0x5d;
/** Past this many cached ids (unknown ids are cached too), the cache starts over: memory stays bounded. */
const kMaxCachedEntries = 50_000;

export class EvalEngine {
  private seq = -1;
  /** The store revision of this batch's snapshot (read once per batch): every answer of the batch names it. */
  private batchRevision = 0;
  private now = 0;
  private readonly flags = new Map<string, FlagEntry | Missing>();
  private readonly projects = new Map<string, ProjectEntry | Missing>();
  /** The project route's list being written: the flags its plan leaves to the request are decided here. */
  private listFlags: readonly FlagEntry[] = [];
  private listEnv: string | null = null;
  private readonly listEntries: DecidedEntries = {
    decided: (i) => {
      const flag = this.listFlags[i]!;
      return this.answerBody(flag, stateInProjectEnv(flag, this.listEnv)!);
    },
  };
  private readonly orgs = new Map<string, Org | null>();
  /**
   * Each project's shared fragments (null: none), read once per snapshot by the compiles that need them,
   * each resolved and compiled once for every flag that names it (src/flags/records/fragment-resolve.ts).
   */
  private readonly fragments = new Map<string, { readonly updatedAt: number; readonly resolved: ResolvedFragments } | null>();
  private readonly query = new EvalQuery();
  /** Counts taken from entries already dropped, by flag, environment and hour, until the next `takeUsage`. */
  private readonly pending = new Map<string, UsageCount>();

  constructor(
    private readonly store: EngineStore,
    private readonly clock: () => number,
  ) {}

  /** Call before each batch: see the freshness rule at the top of this file. */
  beginBatch(): void {
    this.store.resetReadTxn();
    const seq = this.store.configSeq();
    // In the same snapshot as every read of the batch: the revision its answers were computed at.
    // Given the seq just read, a store that is no copy does not read it a second time.
    this.batchRevision = this.store.revision(seq);
    const now = this.clock();
    // A new hour: the counts so far are the last hour's (each count is of one hour).
    if (usageHour(now) !== usageHour(this.now)) this.collectUsage();
    if (seq !== this.seq) {
      this.seq = seq;
      this.collectUsage();
      this.clearCaches();
    }
    this.now = now;
  }

  /** Counts one evaluation of `state`, a flag's state in the environment a request was answered in (see Usage at the top). */
  count(state: EvalState): void {
    state.evaluations++;
    state.lastEvaluatedAt = this.now;
  }

  /** Counts one evaluation of each of the project's flags in `env`, as projectEnv() accepted it. */
  countProject(project: ProjectEntry, env: string | null): void {
    const flags = project.flags;
    for (let i = 0; i < flags.length; i++) {
      const state = stateInProjectEnv(flags[i]!, env);
      if (state !== null) this.count(state);
    }
  }

  /** GET /v1/flags/{flag_id}. */
  evaluateFlag(rawId: string, rawQuery: string, out: ResultWriter): void {
    const q = this.query;
    if (!q.parse(rawQuery)) return out.put(400, evalErrorBody('INVALID_REQUEST', q.error!));
    const entry = this.flagEntry(decodePathId(rawId));
    if (!entry.found) return out.put(404, entry.body);
    // A group flag: env is required and must be one of the project's environments (spec: 404).
    const state = stateInEnv(entry, q.env);
    if (state === kEnvMissing) return out.put(404, entry.envMissing!);
    if (state === kEnvUnknown) return out.put(404, unknownEnvBody('flag', q.env!, entry.validEnvs));
    this.count(state);
    if (blockedByPlan(state, this.audiencesAllowed(entry.org))) return out.put(403, kAudiencePlanBody);
    out.put(200, this.answerBody(entry, state));
  }

  /** GET /v1/flags/project/{project_id}: every flag of the project, in creation order. */
  evaluateProject(rawId: string, rawQuery: string, out: ResultWriter): void {
    const q = this.query;
    if (!q.parse(rawQuery)) return out.put(400, evalErrorBody('INVALID_REQUEST', q.error!));
    const project = this.compiledProject(decodePathId(rawId));
    if (!project.found) return out.put(404, project.body);
    // Decision (docs/decisions.md): env is required on a multi-environment project and ignored on a single one.
    const env = projectEnv(project, q.env);
    if (env === kEnvMissing) return out.put(404, project.envMissing);
    if (env === kEnvUnknown) return out.put(404, unknownEnvBody('project', q.env!, project.validEnvs));
    this.countProject(project, env);
    // Decision (docs/decisions.md): a flag whose audience the plan no longer covers is enabled: false here.
    const audiencesAllowed = this.audiencesAllowed(project.org);
    out.open();
    out.pushByte(kOpenBracket);
    this.listFlags = project.flags;
    this.listEnv = env;
    writeList(out, kProjectPlans.of(project, audiencesAllowed ? 1 : 0, env), this.listEntries);
    out.pushByte(kCloseBracket);
    out.close(200);
  }

  /** The 200 body of `state` for the parsed request: one of the flag version's prebuilt bodies. */
  private answerBody(entry: FlagEntry, state: EvalState): Buffer {
    const decision = decideState(state, this.query);
    if (state.variants === null) return decidedBody(entry, state, decision, null);
    return decidedBody(entry, state, decision, resolveVariant(state.variants, decision, this.query, this.now));
  }

  /** The compiled flag for a path id as sent (decoded if percent-encoded), or its 404. */
  lookupFlag(rawId: string): FlagEntry | Missing {
    return this.flagEntry(decodePathId(rawId));
  }

  /** The compiled project for a path id as sent, or its 404. */
  lookupProject(rawId: string): ProjectEntry | Missing {
    return this.compiledProject(decodePathId(rawId));
  }

  /** The compiled flag named `name` in a project (both as sent in the path), or undefined. */
  lookupFlagByName(rawProjectId: string, rawName: string): FlagEntry | undefined {
    const project = this.compiledProject(decodePathId(rawProjectId));
    return project.found ? project.byName.get(decodePathId(rawName)) : undefined;
  }

  /** Every evaluation counted since the last call, one count per flag, environment and hour; the counts start again from 0. */
  takeUsage(): UsageCount[] {
    this.collectUsage();
    const counts = [...this.pending.values()];
    this.pending.clear();
    return counts;
  }

  /** This batch's store revision (Flagwire-Revision of its answers, src/http/revisions.ts). */
  get revision(): number {
    return this.batchRevision;
  }

  /**
   * The batch's snapshot, for what a route set reads beside flags (Unleash's front-end API reads the
   * client key a request names: src/unleash/frontend-evaluator.ts), so it is as fresh as the flags.
   */
  get snapshot(): Pick<EngineStore, 'getKeyed'> {
    return this.store;
  }

  /** This batch's time (the clock's ms): `$flagd.timestamp` of every rule it runs. */
  get batchTime(): number {
    return this.now;
  }

  /** Whether states with an audience may be evaluated for this organisation now (Decision 1 of docs/decisions.md (Evaluation API)). */
  audiencesAllowed(org: Org | null): boolean {
    return hasAudiences(org, this.now);
  }

  private clearCaches(): void {
    this.flags.clear();
    this.projects.clear();
    this.orgs.clear();
    this.fragments.clear();
  }

  /** The compiled flag for a request (from the cache, or compiled now). */
  private flagEntry(id: string): FlagEntry | Missing {
    let entry = this.flags.get(id);
    if (entry === undefined) {
      const flag = getFlag(this.store, id);
      // An archived flag is not served: found as no flag at all (docs/decisions.md: archived flags).
      entry =
        flag === undefined || flag.archivedAt !== undefined
          ? missingFlag(id)
          : this.compileFlag(flag, getProject(this.store, flag.projectId));
      this.remember(this.flags, id, entry);
    }
    return entry;
  }

  /** The compiled project (from the cache, or compiled now). */
  private compiledProject(id: string): ProjectEntry | Missing {
    let entry = this.projects.get(id);
    if (entry === undefined) {
      const project = getProject(this.store, id);
      entry = project === undefined ? missingProject(id) : this.compileProject(project);
      this.remember(this.projects, id, entry);
    }
    return entry;
  }

  private remember<V>(cache: Map<string, V>, id: string, value: V): void {
    if (cache.size >= kMaxCachedEntries) {
      this.collectUsage();
      cache.clear();
    }
    cache.set(id, value);
  }

  /** Moves every cached entry's counts into `pending` (an entry may be in both caches: it is zeroed once read). */
  private collectUsage(): void {
    for (const entry of this.flags.values()) if (entry.found) this.collectEntry(entry);
    for (const project of this.projects.values()) if (project.found) for (const entry of project.flags) this.collectEntry(entry);
  }

  private collectEntry(entry: FlagEntry): void {
    if (entry.state !== null) this.collectState(entry.id, kSingleState, entry.state);
    else for (const [env, state] of entry.envs!) this.collectState(entry.id, env, state);
  }

  private collectState(flagId: string, environment: string, state: EvalState): void {
    if (state.evaluations === 0) return;
    addCount(this.pending, { flagId, environment, evaluations: state.evaluations, lastEvaluatedAt: state.lastEvaluatedAt });
    state.evaluations = 0;
  }

  private compileProject(project: Project): ProjectEntry {
    const flags: FlagEntry[] = [];
    const byName = new Map<string, FlagEntry>();
    for (const flag of listFlags(this.store, project.id)) {
      // The flag's cached entry if it has one (same snapshot, so the same compilation): replacing it
      // would drop the evaluations counted on it.
      const cached = this.flags.get(flag.id);
      const entry = cached?.found ? cached : this.compileFlag(flag, project);
      if (entry.found) {
        flags.push(entry);
        byName.set(entry.name, entry);
      }
      if (entry !== cached) this.remember(this.flags, flag.id, entry);
    }
    const validEnvs = validEnvironmentsText(project);
    const org = this.org(project.orgId);
    return {
      found: true,
      id: project.id,
      multi: project.kind === 'multi',
      envs: new Set(project.environments),
      flags,
      byName,
      validEnvs,
      envMissing: evalErrorBody('NOT_FOUND', `This is a multi-environment project: add the "env" query parameter (${validEnvs}).`),
      org,
      configTag: projectConfigTag(project, flags, listAudiences(this.store, project.id), org, this.fragmentsOf(project.id)?.updatedAt),
    };
  }

  private compileFlag(flag: Flag, project: Project | undefined): FlagEntry | Missing {
    if (project === undefined) return missingFlag(flag.id);
    const audience = (audienceId: string | null) => (audienceId === null ? undefined : this.audience(audienceId, project.id));
    // A rule's `{"$ref": NAME}`s are replaced by the project's fragments here, at compile (issue 47): each
    // fragment resolved and compiled once per snapshot, its closures shared by every flag that names it
    // (issue 55), so a flag's compile costs its own rule, not the fragments it names.
    const compile = (env: string | null): EvalState => {
      const effective = effectiveState(flag, env);
      const experiment = effective.experiment ?? null;
      let variants: CompiledVariants | null = null;
      if (effective.typed !== undefined) {
        const fragments = this.fragmentsOf(project.id)?.resolved;
        variants =
          fragments === undefined
            ? compileVariants(effective.typed, flag.name, null, experiment)
            : compileVariants(fragments.typed(effective.typed), flag.name, fragments.shared, experiment);
      }
      const experimentBodies = experiment === null ? null : { eval: [], ofrepBodies: null, ofrepPairs: null };
      if (effective.unleash === undefined) {
        return compileStateWith(flag.id, effective, audience(effective.audienceId), flag.bucketing, {
          variants,
          experimentBodies,
          evaluations: 0,
          lastEvaluatedAt: 0,
        });
      }
      // Unleash's model (issue 60) decides in place of the audience, cohorts and percentage, which are not
      // read (so not compiled: a stored audience cannot refuse it by plan); its dependencies are read from
      // this project's flags in the same environment. `unleash` is compileState's own field, set in place,
      // so the state keeps every state's one hidden class.
      const unleash = compileUnleash(flag.name, effective.enabled, effective.unleash, (name) => this.unleashParent(project.id, env, name));
      const unread = { ...effective, audienceId: null, cohorts: [] };
      return compileStateWith(flag.id, unread, undefined, flag.bucketing, {
        unleash,
        variants: unleashVariants(unleash),
        experimentBodies,
        evaluations: 0,
        lastEvaluatedAt: 0,
      });
    };
    let state: EvalState | null = null;
    let envs: Map<string, EvalState> | null = null;
    if (flag.kind === 'flag') state = compile(null);
    else {
      envs = new Map();
      for (const env of project.environments) envs.set(env, compile(env));
    }
    const validEnvs = validEnvironmentsText(project);
    return {
      found: true,
      id: flag.id,
      name: flag.name,
      projectId: flag.projectId,
      updatedAt: flag.updatedAt,
      bodies: [evalFlagBody(flag, false), evalFlagBody(flag, true)],
      state,
      envs,
      validEnvs,
      envMissing:
        envs === null
          ? null
          : evalErrorBody('NOT_FOUND', `This flag belongs to a multi-environment project: add the "env" query parameter (${validEnvs}).`),
      org: this.org(project.orgId),
      variantBodies: null,
      ofrepBodies: null,
      ofrepVariantBodies: null,
      ofrepPairs: null,
      ofrepVariantPairs: null,
    };
  }

  /**
   * The Unleash model of the flag named `name` in a project's environment, as a dependency of another's
   * reads it; undefined when there is no such flag or its state there has no Unleash model (an unmet
   * dependency, as Unleash's SDKs take a parent they do not have).
   */
  private unleashParent(projectId: string, env: string | null, name: string) {
    const project = this.compiledProject(projectId);
    const entry = project.found ? project.byName.get(name) : undefined;
    if (entry === undefined) return undefined;
    return stateInProjectEnv(entry, env)?.unleash?.feature;
  }

  /** The project's shared fragments record (null: none), read once per snapshot. */
  private fragmentsOf(projectId: string): { readonly updatedAt: number; readonly resolved: ResolvedFragments } | null {
    let known = this.fragments.get(projectId);
    if (known === undefined) {
      if (this.fragments.size >= kMaxCachedEntries) this.fragments.clear();
      const record = projectFragments(this.store, projectId);
      known = record === undefined ? null : { updatedAt: record.updatedAt, resolved: new ResolvedFragments(fragmentRules(record)) };
      this.fragments.set(projectId, known);
    }
    return known;
  }

  /** An audience of the flag's own project; one that is missing (or foreign) never matches. */
  private audience(id: string, projectId: string): Audience | undefined {
    const audience = getAudience(this.store, id);
    return audience !== undefined && audience.projectId === projectId ? audience : undefined;
  }

  private org(orgId: string | null): Org | null {
    if (orgId === null) return null;
    let org = this.orgs.get(orgId);
    if (org === undefined) {
      org = getOrg(this.store, orgId) ?? null;
      this.orgs.set(orgId, org);
    }
    return org;
  }
}

function missingFlag(id: string): Missing {
  return { found: false, body: evalErrorBody('NOT_FOUND', notFoundDetail('flag', id)) };
}

function missingProject(id: string): Missing {
  return { found: false, body: evalErrorBody('NOT_FOUND', notFoundDetail('project', id)) };
}

function unknownEnvBody(what: 'flag' | 'project', env: string, validEnvs: string): Buffer {
  return evalErrorBody('NOT_FOUND', `Unknown environment "${env}" for this ${what}; ${validEnvs}.`);
}

/** The body for a gate `decision` and, for a typed state, the variant's answer (`resolution`); built once per version. */
function decidedBody(entry: FlagEntry, state: EvalState, decision: Decision, resolution: Resolution | null): Buffer {
  const enabled = decisionValue(decision);
  if (state.variants === null || resolution === null) {
    const experiment = state.experimentBodies;
    if (experiment === null) return entry.bodies[enabled ? 1 : 0];
    experiment.eval[decision] ??= evalExperimentBody(entry, state.experiment!, enabled, decisionInExperiment(decision));
    return experiment.eval[decision];
  }
  // A rule's error names its cause (a new answer each time); the body says only "no value": one per state.
  const answer = resolution.errorCode === undefined ? resolution : state.variants.flag.answers.ruleFailed;
  entry.variantBodies ??= [new Map(), new Map()];
  const bodies = entry.variantBodies[enabled ? 1 : 0];
  let body = bodies.get(answer);
  if (body === undefined) {
    body = evalVariantBody(entry, enabled, answer, state.experiment, unleashToggleVariant(answer)?.variant.payload);
    bodies.set(answer, body);
  }
  return body;
}

// Commands that change flags: create and patch (the Management API's, the web console's and the command
// line's, one command each), and the console-only edits.
import { compiledOnUse } from '../typebox.js';
import { FlagwireError } from '../errors.js';
import { isEnvironmentAllowed, validEnvironmentsText } from '../model/environments.js';
import { envEntry, kDefaultEnvState } from './records/flag-state.js';
import type { EnvState, Flag, TypedVariants } from '../model/flags.js';
import { randomId } from '../model/ids.js';
import { notFoundDetail, requireProject } from '../model/records/lookups.js';
import { requireFlag, requirePatchTarget } from './flag-lookups.js';
import type { Project } from '../model/projects.js';
import {
  AudienceId,
  Bucketing,
  FlagCreate,
  FlagPatch,
  kFlatStateKeys,
  kLimits,
  kVariantKeys,
  TypedFields,
  type EnvironmentState,
} from '../model/schemas.js';
import { parseJsonObject, type ReceivedBody } from '../model/request-body.js';
import { compileValidator } from '../model/validation.js';
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { exactList, requireName } from '../model/input-checks.js';
import { UnleashModel } from '../model/unleash-model.js';
import {
  applyFlagPatch,
  normaliseCohorts,
  patchedUnleash,
  withExperiment,
  withTyped,
  withUnleash,
  type FieldChanges,
} from './patch-rules.js';
import { kUnreadByUnleash, unleashStateProblems, unreadFieldProblem } from '../unleash/rules/model-problems.js';
import { appliedTyped, mergeTyped, typedProblems } from './variant-rules.js';
import { actorFor, type Actor, type Principal, tokenProject, writeAudit } from '../actor/audit-actor.js';
import type { FlagAuditAction } from './audit-actions.js';
import { bucketingChangeProblem, bucketingField, bucketingOf } from './bucketing.js';
import { type FragmentRules, fragmentRules, projectFragments } from './records/fragment-records.js';
import { flagRefsProblem } from './fragment-refs.js';
import { deleteFlag, findFlagByName, putFlag } from './records/flag-store.js';
import { requireFlagUnchanged } from './flag-version.js';
import { getAudience } from '../model/records/project-records.js';
import { lifecycleFields } from './lifecycle.js';

// Every rule of a create and a patch is applied here, on the writer, from the body's JSON syntax and
// schema to the rules that need the project (which only the writer reads in the transaction that
// writes): all problems are reported together, and no rule is checked on two threads.
const kCreateValidator = compileValidator(FlagCreate, { quoteKeys: false });
const kPatchValidator = compileValidator(FlagPatch, { quoteKeys: true });
const kAudienceIdCheck = compiledOnUse(AudienceId);
const kTypedFieldsCheck = compiledOnUse(TypedFields);
const kBucketingCheck = compiledOnUse(Bucketing);
const kUnleashCheck = compiledOnUse(UnleashModel);

/**
 * The body of a create or patch: as received (`received`, parsed here: the Management API's and the web
 * console's, so their problems read alike), or as a value (`body`/`patch`: the command line, the demo
 * seed, an import, tests). Either way it is not yet validated.
 */
type BodyInput<K extends string> = { [key in K]: unknown } | { received: ReceivedBody };

/** A body parsed to a value (not yet checked against its schema), or why it is not a JSON object. */
type Parsed = { ok: true; value: unknown } | { ok: false; problem: string };

/**
 * A create: who asks (a Management API token, a user, the operator) and the project, named (a token's
 * must be its own: another project is not found).
 */
export type FlagCreateInput = { projectId: string; principal: Principal } & BodyInput<'body'>;

/**
 * POST /api/v1/flags, the web console's create and `flag create`: who asks is resolved once, here, in the
 * transaction that writes: a token is authorised again (revoked, expired, its organisation below Teams
 * or gone while the write waited for the lock, the write is refused with the answer a request sent now
 * gets, and nothing is written), a user must be allowed to change flags; then createFlagAs's rules.
 */
export function flagCreate(w: StoreWriter, input: FlagCreateInput, now: number): Flag {
  const { principal } = input;
  const project = principal.kind === 'token' ? tokenProject(w, principal, now) : requireProject(w, input.projectId);
  if (project.id !== input.projectId) throw new FlagwireError('NOT_FOUND', notFoundDetail('project', input.projectId));
  const actor = actorFor(w, principal, project, 'editFlags', now);
  const body = 'received' in input ? { received: input.received } : { body: input.body };
  return createFlagAs(w, { projectId: project.id, actor, ...body }, now);
}

/** A create by an actor already resolved (flagCreate's, an import's, flags as code's). */
export type CreateFlagAsInput = { projectId: string; actor: Actor } & BodyInput<'body'>;

/** A flag create in the project: every body problem at once (schema and project), the environment limit, then the write. */
export function createFlagAs(w: StoreWriter, input: CreateFlagAsInput, now: number): Flag {
  const project = requireProject(w, input.projectId);
  const { actor } = input;
  const parsed: Parsed = 'received' in input ? parseJsonObject(input.received, 'create') : { ok: true, value: input.body };
  // A body that is not a JSON object cannot be checked further (and a create has no query parameter).
  if (!parsed.ok) throw new FlagwireError('INVALID_REQUEST', parsed.problem);
  const body = kCreateValidator.check(parsed.value) ? parsed.value : null;
  const problems = body === null ? kCreateValidator.problems(parsed.value) : [];
  problems.push(...createProjectProblems(w, project, parsed.value));
  if (body === null || problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));

  const envStates = project.kind === 'multi' ? (body.environments ?? {}) : {};
  const denied = Object.keys(envStates).filter((env) => !isEnvironmentAllowed(actor.environments, env));
  if (denied.length > 0) {
    throw new FlagwireError(
      'FORBIDDEN',
      `This token may not set state for environment${denied.length > 1 ? 's' : ''} ${denied.map((e) => `"${e}"`).join(', ')}; it is limited to: ${actor.environments.join(', ')}.`,
    );
  }

  const base = {
    id: `flg_${randomId(16)}`,
    projectId: project.id,
    name: body.name.trim(),
    description: body.description ?? '',
    tags: exactList(body.tags ?? []),
    ...bucketingField(body.bucketing),
    ...lifecycleFields(body),
    createdAt: now,
    updatedAt: now,
  };
  const flag: Flag =
    project.kind === 'single'
      ? {
          ...base,
          kind: 'flag',
          cohorts: normaliseCohorts(body.cohorts ?? []),
          state: withUnleash(
            withExperiment(
              withTyped(
                {
                  enabled: body.enabled ?? kDefaultEnvState.enabled,
                  trafficPercentage: body.trafficPercentage ?? kDefaultEnvState.trafficPercentage,
                  audienceId: body.audienceId ?? null,
                },
                appliedTyped(undefined, body),
              ),
              body.experiment,
            ),
            body.unleash,
          ),
        }
      : { ...base, kind: 'groupflag', cohorts: [], environments: mapValues(envStates, toEnvState) };
  requireRefsWithin(w, flag, 'create');
  putFlag(w, flag);
  writeAudit(
    w,
    actor,
    { projectId: project.id, action: 'flag.create', flagId: flag.id, changes: { flag: { before: null, after: { name: flag.name } } } },
    now,
  );
  return flag;
}

/**
 * The create rules that need the project: flat state against environments, unknown environments,
 * audiences of another project or none, a taken name. They read the body as sent, which may also have
 * failed its schema, so that every problem is in the one 400 (spec: all body problems together);
 * a value of the wrong type is left to the schema's problem.
 */
function createProjectProblems(w: StoreWriter, project: Project, raw: unknown): string[] {
  const body = asRecord(raw) ?? {};
  const environments = asRecord(body.environments);
  const problems: string[] = [];
  const flatKeys = [...kFlatStateKeys, ...kVariantKeys].filter((k) => body[k] !== undefined);
  if (project.kind === 'multi' && flatKeys.length > 0) {
    problems.push(
      `this is a multi-environment project: move ${flatKeys.join(', ')} under "environments" (for example {"environments": {"${project.environments[0] ?? 'production'}": {"enabled": true}}})`,
    );
  }
  if (project.kind === 'single' && body.environments !== undefined) {
    problems.push(
      'this is a single-environment project: drop "environments" and send enabled, trafficPercentage, cohorts and audienceId at the top level',
    );
  }
  if (project.kind === 'multi' && environments !== null) {
    for (const env of Object.keys(environments)) {
      if (!project.environments.includes(env))
        problems.push(`environments.${env} is not an environment of this project (${validEnvironmentsText(project)})`);
    }
  }
  const audienceIds = [body.audienceId, ...Object.values(environments ?? {}).map((state) => asRecord(state)?.audienceId)];
  for (const id of new Set(audienceIds)) if (isAudienceId(id)) problems.push(...audienceProblem(w, project, id));
  const name = typeof body.name === 'string' ? body.name.trim() : '';
  const taken = name === '' ? undefined : findFlagByName(w, project.id, name);
  if (taken !== undefined) problems.push(nameTakenProblem(taken));
  const fragments = fragmentRules(projectFragments(w, project.id));
  if (project.kind === 'single') problems.push(...createTypedProblems(body, '', fragments), ...createUnleashProblems(body, ''));
  else
    for (const [env, state] of Object.entries(environments ?? {}))
      problems.push(
        ...createTypedProblems(state, `environments.${env}.`, fragments),
        ...createUnleashProblems(state, `environments.${env}.`),
      );
  return problems;
}

/** Why `taken`'s name cannot be had: an archived flag keeps its name until it is deleted for good. */
export function nameTakenProblem(taken: Flag): string {
  const archived = taken.archivedAt === undefined ? '' : ' (archived: restore it, or delete it for good to use the name again)';
  return `a flag named "${taken.name}" already exists in this project${archived}`;
}

/**
 * The typed-variant problems of one state of a create body as sent (which may have failed its schema
 * elsewhere), each named by its path from the body, `prefix` included: `environments.prod.targeting.if[0]:
 * unknown operator "foo"`. Keys of the wrong type are left to the schema's problem.
 */
function createTypedProblems(state: unknown, prefix: string, fragments: FragmentRules): string[] {
  if (!kTypedFieldsCheck.Check(state)) return [];
  return typedInputProblems(undefined, state, fragments).map((p) =>
    p.path === '' ? `${prefix}${p.message}` : `${prefix}${p.path}: ${p.message}`,
  );
}

/** The Unleash-model problems of one state of a create body as sent; a model of the wrong shape is the schema's problem. */
function createUnleashProblems(raw: unknown, prefix: string): string[] {
  const state = asRecord(raw);
  if (state === null || !kUnleashCheck.Check(state.unleash)) return [];
  const typed = kTypedFieldsCheck.Check(state) && state.variants !== undefined && Object.keys(state.variants).length > 0;
  return unleashStateProblems(state.unleash, typed, state.experiment !== undefined).map((p) => `${prefix}${p}`);
}

/**
 * Why the typed-variant keys of `input` cannot be applied to `current`, each problem with its path from
 * the state; the rule's `$ref`s are resolved from the project's `fragments`.
 */
function typedInputProblems(current: TypedVariants | undefined, input: TypedFields, fragments: FragmentRules) {
  const merged = mergeTyped(current, input);
  if (!merged.ok) return merged.problems;
  return merged.typed === undefined || merged.typed === current ? [] : typedProblems(merged.typed, fragments);
}

/** A patch: who asks (a Management API token, a user, the operator), the flag, and `env` as sent. */
export type FlagPatchInput = {
  flagId: string;
  /** The `env` query parameter as sent. */
  env: string | null;
  principal: Principal;
  /** The If-Match header ('' or absent: no precondition): flag-version.ts. */
  ifMatch?: string;
} & BodyInput<'patch'>;

/** A patch by an actor already resolved (flagPatch's, an import's, flags as code's, a release plan's). */
export type PatchFlagAsInput = {
  projectId: string;
  flagId: string;
  env: string | null;
  actor: Actor;
  /** As FlagPatchInput's. */
  ifMatch?: string;
} & BodyInput<'patch'>;

export interface FlagPatchResult {
  changed: boolean;
  flag: Flag;
}

/**
 * PATCH /api/v1/flags/{id}, the web console's edit and `flag variants`: who asks is resolved once, here,
 * in the transaction that writes (as flagCreate's). A token looks the flag up in its own project (a flag
 * of another project is not found, in the API's wording); a user or the operator by its id, and the user
 * must be allowed to change flags in its project. Then patchFlagAs's rules.
 */
export function flagPatch(w: StoreWriter, input: FlagPatchInput, now: number): FlagPatchResult {
  const { principal } = input;
  const project = principal.kind === 'token' ? tokenProject(w, principal, now) : requireProject(w, requireFlag(w, input.flagId).projectId);
  const actor = actorFor(w, principal, project, 'editFlags', now);
  const body = 'received' in input ? { received: input.received } : { patch: input.patch };
  const target = { projectId: project.id, flagId: input.flagId, env: input.env, actor, ifMatch: input.ifMatch };
  return patchFlagAs(w, { ...target, ...body }, now);
}

/**
 * A flag patch by a resolved actor. An unknown flag (404), a disallowed environment (403) and a flag
 * changed since the If-Match's version (412) come first; then the problems of the query, the body and its audience are reported together (spec rule 9). A
 * no-op writes nothing.
 */
export function patchFlagAs(w: StoreWriter, input: PatchFlagAsInput, now: number): FlagPatchResult {
  const { flag, project, env, problem } = requirePatchTarget(w, input.projectId, input.flagId, input.env, input.actor.environments);
  requireFlagUnchanged(flag, input.ifMatch ?? '');
  if (flag.archivedAt !== undefined) throw new FlagwireError('INVALID_REQUEST', archivedProblem(flag));
  const parsed: Parsed = 'received' in input ? parseJsonObject(input.received, 'patch') : { ok: true, value: input.patch };
  // A body that is not a JSON object cannot be checked further: its problem joins the query's.
  if (!parsed.ok) throw new FlagwireError('INVALID_REQUEST', [...(problem === null ? [] : [problem]), parsed.problem].join('; '));
  const { patch, problems } = checkPatch(w, project, flag, problem === null ? { env } : null, parsed.value);
  if (problem !== null) problems.unshift(problem);
  if (patch === null || problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  const outcome = applyFlagPatch(flag, env, patch, now);
  if (outcome.changed) {
    requireRefsWithin(w, outcome.flag, 'patch');
    putFlag(w, outcome.flag);
    audit(w, input.actor, outcome.flag, 'flag.patch', env, outcome.changes, now);
  }
  return { changed: outcome.changed, flag: outcome.flag };
}

/** Why an archived flag's state cannot change: it serves nothing until restored. */
export function archivedProblem(flag: Flag): string {
  return `flag "${flag.name}" is archived: restore it (POST /api/v1/flags/${flag.id}/restore) before changing its state`;
}

/**
 * Refuses `flag` as a create or patch would write it when its project's references would then add more
 * than the limit to its flags' rules (src/flags/fragment-refs.ts), in the words of the flag's other
 * rule problems: a patch's path from the state (`"targeting": ...`), a create's from the body.
 */
export function requireRefsWithin(w: StoreReader, flag: Flag, write: 'create' | 'patch'): void {
  const problem = flagRefsProblem(w, flag, fragmentRules(projectFragments(w, flag.projectId)));
  if (problem === null) return;
  const at = write === 'patch' ? '"targeting"' : problem.env === null ? 'targeting' : `environments.${problem.env}.targeting`;
  throw new FlagwireError('INVALID_REQUEST', `${at}: ${problem.message}`);
}

/**
 * A patch body (parsed, not yet checked) against a flag: the schema's problems, an audience not of the
 * project, a bucketing other than the flag's, and typed variants the patch would leave unloadable (spec rule 9: every problem at once). The
 * one home of these checks: a patch now, and a scheduled change when it is made (and again when it runs).
 * `target.env`: the environment (null on a single flag) whose stored typed variants the patch merges with;
 * `target` null when the request's `env` is unsound (its problem is the caller's; typed variants are then
 * not checked).
 */
export function checkPatch(
  w: StoreReader,
  project: Project,
  flag: Flag,
  target: { env: string | null } | null,
  value: unknown,
): { patch: FlagPatch | null; problems: string[] } {
  const problems: string[] = [];
  const patch = kPatchValidator.check(value) ? value : null;
  if (patch === null) problems.push(...kPatchValidator.problems(value));
  const audienceId = asRecord(value)?.audienceId;
  if (isAudienceId(audienceId)) problems.push(...audienceProblem(w, project, audienceId));
  // A bucketing may be repeated, never changed (bucketing.ts); a value of no bucketing is the schema's problem.
  const bucketing = asRecord(value)?.bucketing;
  const changed = kBucketingCheck.Check(bucketing) ? bucketingChangeProblem(bucketingOf(flag), bucketing) : null;
  if (changed !== null) problems.push(`"bucketing": ${changed}`);
  // The typed variants the patch leaves are checked whole (a new type can orphan the stored default
  // variant); they depend on the environment's stored ones, so only once `env` is sound.
  if (target !== null && kTypedFieldsCheck.Check(value)) {
    const current = flag.kind === 'flag' ? flag.state.typed : envEntry(flag, target.env ?? '').typed;
    const fragments = fragmentRules(projectFragments(w, project.id));
    for (const p of typedInputProblems(current, value, fragments)) problems.push(p.path === '' ? p.message : `"${p.path}": ${p.message}`);
  }
  // The Unleash model the patch leaves, beside the typed variants it leaves: only once `env` is sound.
  if (target !== null && patch !== null) {
    const state = flag.kind === 'flag' ? flag.state : envEntry(flag, target.env ?? '');
    const unleash = patchedUnleash(state.unleash, patch);
    const merged = mergeTyped(state.typed, patch);
    const typed = merged.ok ? merged.typed : state.typed;
    const experiment = patch.experiment === undefined ? state.experiment : patch.experiment;
    if (unleash !== undefined && (unleash !== state.unleash || typed !== state.typed || experiment !== state.experiment)) {
      for (const p of unleashStateProblems(unleash, typed !== undefined, experiment !== null && experiment !== undefined))
        problems.push(p.replace(/^([^:]*):/, '"$1":'));
    }
    // A state that keeps its model does not read these: a change would be stored, answered `changed`,
    // and change no answer. A patch that sets the model too (flags as code's whole state) may set them.
    if (state.unleash !== undefined && patch.unleash === undefined) {
      const unread = Object.fromEntries(kUnreadByUnleash.filter((f) => patch[f] !== undefined).map((f) => [f, patch[f]]));
      const { changes } = applyFlagPatch(flag, target.env, unread, 0);
      for (const field of kUnreadByUnleash)
        if (Object.hasOwn(changes, field) || (field === 'cohorts' && Object.hasOwn(changes, 'cohortsOverride')))
          problems.push(unreadFieldProblem(field));
    }
  }
  return { patch, problems };
}

function audienceProblem(w: StoreReader, project: Project, audienceId: string): string[] {
  const audience = getAudience(w, audienceId);
  return audience && audience.projectId === project.id ? [] : [`Audience "${audienceId}" does not exist on this project.`];
}

/** An audience id the schema accepts (a null detaches, and a wrong type is the schema's problem). */
function isAudienceId(value: unknown): value is string {
  return typeof value === 'string' && kAudienceIdCheck.Check(value);
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function toEnvState(state: EnvironmentState): EnvState {
  const cohorts = normaliseCohorts(state.cohorts ?? []);
  return withUnleash(
    withExperiment(
      withTyped(
        {
          enabled: state.enabled ?? kDefaultEnvState.enabled,
          trafficPercentage: state.trafficPercentage ?? kDefaultEnvState.trafficPercentage,
          audienceId: state.audienceId ?? null,
          cohorts: cohorts.length === 0 ? null : cohorts,
        },
        appliedTyped(undefined, state),
      ),
      state.experiment,
    ),
    state.unleash,
  );
}

function mapValues<A, B>(record: Record<string, A>, fn: (a: A) => B): Record<string, B> {
  const out: Record<string, B> = {};
  for (const [key, value] of Object.entries(record)) out[key] = fn(value);
  return out;
}

function audit(
  w: StoreWriter,
  actor: Actor,
  flag: Flag,
  action: FlagAuditAction,
  env: string | null,
  changes: FieldChanges,
  now: number,
): void {
  writeAudit(w, actor, { projectId: flag.projectId, action, flagId: flag.id, env, changes }, now);
}

// ---- console-only edits ------------------------------------------------------------------------

/** What every console flag edit names: the flag, and optionally the person making the change (`--as`). */
interface ConsoleFlagInput {
  flagId: string;
  /** Who asks: the web console's user, the command line's --as user or the operator (principalOf). */
  principal: Principal;
  /** The If-Match header, or the command line's --if-version ('' or absent: no precondition): flag-version.ts. */
  ifMatch?: string;
}

/** The flag and who edits it; an unknown flag is refused before the person is checked, a changed one (412) after. */
function consoleTarget(w: StoreWriter, input: ConsoleFlagInput, now: number): { flag: Flag; actor: Actor } {
  const flag = requireFlag(w, input.flagId);
  const actor = actorFor(w, input.principal, requireProject(w, flag.projectId), 'editFlags', now);
  requireFlagUnchanged(flag, input.ifMatch ?? '');
  return { flag, actor };
}

/** The audit action of a console edit of each field. */
const kEditActions = {
  name: 'flag.rename',
  description: 'flag.describe',
  tags: 'flag.tags',
  cohorts: 'flag.cohorts',
} as const satisfies Record<string, FlagAuditAction>;

/** Stores `next` if it differs in `field`, with an audit entry; returns the stored flag. */
function consoleEdit<K extends keyof typeof kEditActions>(
  w: StoreWriter,
  { flag, actor }: { flag: Flag; actor: Actor },
  field: K,
  value: Flag[K],
  now: number,
): Flag {
  if (JSON.stringify(flag[field]) === JSON.stringify(value)) return flag;
  const next = { ...flag, [field]: value, updatedAt: Math.max(now, flag.updatedAt + 1) } as Flag;
  putFlag(w, next);
  audit(w, actor, next, kEditActions[field], null, { [field]: { before: flag[field], after: value } }, now);
  return next;
}

export function flagRename(w: StoreWriter, input: ConsoleFlagInput & { name: string }, now: number): Flag {
  const target = consoleTarget(w, input, now);
  const name = requireName('name', input.name);
  const taken = findFlagByName(w, target.flag.projectId, name);
  if (taken !== undefined && taken.id !== target.flag.id) throw new FlagwireError('INVALID_REQUEST', nameTakenProblem(taken));
  return consoleEdit(w, target, 'name', name, now);
}

export function flagDescribe(w: StoreWriter, input: ConsoleFlagInput & { text: string }, now: number): Flag {
  const target = consoleTarget(w, input, now);
  if (typeof input.text !== 'string' || input.text.length > kLimits.descriptionLength) {
    throw new FlagwireError('INVALID_REQUEST', `description must be at most ${kLimits.descriptionLength} characters`);
  }
  return consoleEdit(w, target, 'description', input.text, now);
}

export function flagTags(w: StoreWriter, input: ConsoleFlagInput & { tags: string[] }, now: number): Flag {
  const target = consoleTarget(w, input, now);
  const tags = exactList(input.tags);
  if (tags.length > kLimits.tags || tags.some((t) => t.length > kLimits.tagLength)) {
    throw new FlagwireError('INVALID_REQUEST', `at most ${kLimits.tags} tags of up to ${kLimits.tagLength} characters`);
  }
  return consoleEdit(w, target, 'tags', tags, now);
}

/** Sets the flag-wide cohort list of a group flag ([] clears it). */
export function flagCohorts(w: StoreWriter, input: ConsoleFlagInput & { cohorts: string[] }, now: number): Flag {
  const target = consoleTarget(w, input, now);
  if (target.flag.kind !== 'groupflag') {
    throw new FlagwireError('INVALID_REQUEST', "only a group flag has a flag-wide cohort list; change a single flag's cohorts with PATCH");
  }
  const cohorts = exactList(input.cohorts);
  if (cohorts.length > kLimits.cohorts || cohorts.some((c) => c.length > kLimits.cohortLength)) {
    throw new FlagwireError('INVALID_REQUEST', `at most ${kLimits.cohorts} cohorts of up to ${kLimits.cohortLength} characters`);
  }
  return consoleEdit(w, target, 'cohorts', cohorts, now);
}

export function flagDelete(w: StoreWriter, input: ConsoleFlagInput, now: number): { id: string; deleted: true } {
  const { flag, actor } = consoleTarget(w, input, now);
  deleteFlag(w, flag);
  audit(w, actor, flag, 'flag.delete', null, { flag: { before: { name: flag.name }, after: null } }, now);
  return { id: flag.id, deleted: true };
}

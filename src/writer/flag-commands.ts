// Commands that change flags: create and patch (Management API) and the console-only edits.
import { FlagwireError } from '../errors.js';
import { environmentNotPermitted, isEnvironmentAllowed, resolveEnvParam, validEnvironmentsText } from '../model/environments.js';
import { kDefaultEnvState } from '../model/flag-state.js';
import { randomId } from '../model/ids.js';
import { kFlatStateKeys, kLimits, type EnvironmentState, type FlagCreate, type FlagPatch } from '../model/schemas.js';
import type { EnvState, Flag, Project } from '../store/records.js';
import type { StoreWriter } from '../store/store.js';
import { cleanList, requireName } from './checks.js';
import { applyFlagPatch, normaliseCohorts, type FieldChanges } from './patch-rules.js';
import { requireProject } from './project-commands.js';

/** Who makes a change: audit actor (`token:<id>` or `console`), its display name, and its environment limit. */
export interface Actor {
  id: string;
  name: string;
  /** Environments the actor may change; [] means every environment. */
  environments: string[];
}

export const kConsoleActor: Actor = { id: 'console', name: 'console', environments: [] };

/**
 * The 404 of every flag route. It does not echo the id, so the body is byte-identical whether the id
 * exists in another project or nowhere: nothing tells a caller which ids exist elsewhere.
 */
export function flagNotFound(): FlagwireError {
  return new FlagwireError('NOT_FOUND', 'No flag with that id exists in this project.');
}

export function requireProjectFlag(w: StoreWriter, projectId: string, flagId: string): Flag {
  const flag = w.getFlag(flagId);
  if (!flag || flag.projectId !== projectId) throw flagNotFound();
  return flag;
}

export interface FlagCreateInput {
  projectId: string;
  body: FlagCreate;
  actor: Actor;
}

/** POST /api/v1/flags after the body passed its schema: the checks that need the project, then the write. */
export function flagCreate(w: StoreWriter, input: FlagCreateInput, now: number): Flag {
  const project = requireProject(w, input.projectId);
  const { body, actor } = input;
  const problems: string[] = [];
  const flatKeys = kFlatStateKeys.filter((k) => body[k] !== undefined);
  if (project.kind === 'multi' && flatKeys.length > 0) {
    problems.push(
      `this is a multi-environment project: move ${flatKeys.join(', ')} under "environments" (for example {"environments": {"${project.environments[0] ?? 'production'}": {"enabled": true}}})`,
    );
  }
  if (project.kind === 'single' && body.environments !== undefined) {
    problems.push('this is a single-environment project: drop "environments" and send enabled, trafficPercentage, cohorts and audienceId at the top level');
  }
  const envStates = project.kind === 'multi' ? body.environments ?? {} : {};
  for (const env of Object.keys(envStates)) {
    if (!project.environments.includes(env)) problems.push(`environments.${env} is not an environment of this project (${validEnvironmentsText(project)})`);
  }
  const audienceIds = project.kind === 'single' ? [body.audienceId] : Object.values(envStates).map((s) => s.audienceId);
  for (const id of new Set(audienceIds)) if (typeof id === 'string') problems.push(...audienceProblem(w, project, id));
  const name = body.name.trim();
  if (w.listFlags(project.id).some((f) => f.name === name)) problems.push(`a flag named "${name}" already exists in this project`);
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));

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
    name,
    description: body.description ?? '',
    tags: cleanList(body.tags ?? []),
    createdAt: now,
    updatedAt: now,
  };
  const flag: Flag = project.kind === 'single'
    ? {
      ...base,
      kind: 'flag',
      cohorts: normaliseCohorts(body.cohorts ?? []),
      state: {
        enabled: body.enabled ?? kDefaultEnvState.enabled,
        trafficPercentage: body.trafficPercentage ?? kDefaultEnvState.trafficPercentage,
        audienceId: body.audienceId ?? null,
      },
    }
    : { ...base, kind: 'groupflag', cohorts: [], environments: mapValues(envStates, toEnvState) };
  w.putFlag(flag);
  w.appendAudit({
    at: now, projectId: project.id, actor: actor.id, actorName: actor.name, action: 'flag.create', flagId: flag.id, env: null,
    changes: { flag: { before: null, after: { name: flag.name } } },
  });
  return flag;
}

export interface FlagPatchInput {
  projectId: string;
  flagId: string;
  env: string | null;
  patch: FlagPatch;
  actor: Actor;
}

export interface FlagPatchResult {
  changed: boolean;
  flag: Flag;
}

/** PATCH /api/v1/flags/{id} after the body passed its schema. A no-op writes nothing. */
export function flagPatch(w: StoreWriter, input: FlagPatchInput, now: number): FlagPatchResult {
  const flag = requireProjectFlag(w, input.projectId, input.flagId);
  const project = requireProject(w, input.projectId);
  const env = resolveEnvParam(project, input.env, true);
  if (env !== null && !isEnvironmentAllowed(input.actor.environments, env)) throw environmentNotPermitted(input.actor.environments, env);
  if (typeof input.patch.audienceId === 'string') {
    const problems = audienceProblem(w, project, input.patch.audienceId);
    if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems[0]!);
  }
  const outcome = applyFlagPatch(flag, env, input.patch, now);
  if (outcome.changed) {
    w.putFlag(outcome.flag);
    audit(w, input.actor, outcome.flag, 'flag.patch', env, outcome.changes, now);
  }
  return { changed: outcome.changed, flag: outcome.flag };
}

function audienceProblem(w: StoreWriter, project: Project, audienceId: string): string[] {
  const audience = w.getAudience(audienceId);
  return audience && audience.projectId === project.id ? [] : [`Audience "${audienceId}" does not exist on this project.`];
}

function toEnvState(state: EnvironmentState): EnvState {
  const cohorts = normaliseCohorts(state.cohorts ?? []);
  return {
    enabled: state.enabled ?? kDefaultEnvState.enabled,
    trafficPercentage: state.trafficPercentage ?? kDefaultEnvState.trafficPercentage,
    audienceId: state.audienceId ?? null,
    cohorts: cohorts.length === 0 ? null : cohorts,
  };
}

function mapValues<A, B>(record: Record<string, A>, fn: (a: A) => B): Record<string, B> {
  const out: Record<string, B> = {};
  for (const [key, value] of Object.entries(record)) out[key] = fn(value);
  return out;
}

function audit(w: StoreWriter, actor: Actor, flag: Flag, action: string, env: string | null, changes: FieldChanges, now: number): void {
  w.appendAudit({ at: now, projectId: flag.projectId, actor: actor.id, actorName: actor.name, action, flagId: flag.id, env, changes });
}

// ---- console-only edits ------------------------------------------------------------------------

function requireFlag(w: StoreWriter, flagId: string): Flag {
  const flag = w.getFlag(flagId);
  if (!flag) throw new FlagwireError('NOT_FOUND', `No flag with id "${flagId}" exists.`);
  return flag;
}

/** Stores `next` if it differs in `field`, with an audit entry; returns the stored flag. */
function consoleEdit<K extends 'name' | 'description' | 'tags' | 'cohorts'>(
  w: StoreWriter, flag: Flag, field: K, value: Flag[K], now: number,
): Flag {
  if (JSON.stringify(flag[field]) === JSON.stringify(value)) return flag;
  const next = { ...flag, [field]: value, updatedAt: Math.max(now, flag.updatedAt + 1) } as Flag;
  w.putFlag(next);
  audit(w, kConsoleActor, next, `flag.${field === 'name' ? 'rename' : field === 'description' ? 'describe' : field}`, null, {
    [field]: { before: flag[field], after: value },
  }, now);
  return next;
}

export function flagRename(w: StoreWriter, input: { flagId: string; name: string }, now: number): Flag {
  const flag = requireFlag(w, input.flagId);
  const name = requireName('name', input.name);
  if (w.listFlags(flag.projectId).some((f) => f.name === name && f.id !== flag.id)) {
    throw new FlagwireError('INVALID_REQUEST', `a flag named "${name}" already exists in this project`);
  }
  return consoleEdit(w, flag, 'name', name, now);
}

export function flagDescribe(w: StoreWriter, input: { flagId: string; text: string }, now: number): Flag {
  const flag = requireFlag(w, input.flagId);
  if (typeof input.text !== 'string' || input.text.length > kLimits.descriptionLength) {
    throw new FlagwireError('INVALID_REQUEST', `description must be at most ${kLimits.descriptionLength} characters`);
  }
  return consoleEdit(w, flag, 'description', input.text, now);
}

export function flagTags(w: StoreWriter, input: { flagId: string; tags: string[] }, now: number): Flag {
  const flag = requireFlag(w, input.flagId);
  const tags = cleanList(input.tags);
  if (tags.length > kLimits.tags || tags.some((t) => t.length > kLimits.tagLength)) {
    throw new FlagwireError('INVALID_REQUEST', `at most ${kLimits.tags} tags of up to ${kLimits.tagLength} characters`);
  }
  return consoleEdit(w, flag, 'tags', tags, now);
}

/** Sets the flag-wide cohort list of a group flag ([] clears it). */
export function flagCohorts(w: StoreWriter, input: { flagId: string; cohorts: string[] }, now: number): Flag {
  const flag = requireFlag(w, input.flagId);
  if (flag.kind !== 'groupflag') {
    throw new FlagwireError('INVALID_REQUEST', 'only a group flag has a flag-wide cohort list; change a single flag\'s cohorts with PATCH');
  }
  const cohorts = cleanList(input.cohorts);
  if (cohorts.length > kLimits.cohorts || cohorts.some((c) => c.length > kLimits.cohortLength)) {
    throw new FlagwireError('INVALID_REQUEST', `at most ${kLimits.cohorts} cohorts of up to ${kLimits.cohortLength} characters`);
  }
  return consoleEdit(w, flag, 'cohorts', cohorts, now);
}

export function flagDelete(w: StoreWriter, input: { flagId: string }, now: number): { id: string; deleted: true } {
  const flag = requireFlag(w, input.flagId);
  w.deleteFlag(flag);
  audit(w, kConsoleActor, flag, 'flag.delete', null, { flag: { before: { name: flag.name }, after: null } }, now);
  return { id: flag.id, deleted: true };
}

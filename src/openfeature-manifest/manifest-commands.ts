// The manifest API's writes as writer commands: each reads the manifest's body, then runs the flags
// capability's own rules (createFlagAs, patchFlagAs, flagDescribe) in the one transaction, so a write
// is judged, audited and held for approval exactly as the Management API's (docs/openfeature-cli.md).
import { actorInProject, type Principal } from '../actor/audit-actor.js';
import { FlagwireError } from '../errors.js';
import { findFlagByName } from '../flags/records/flag-store.js';
import { requireEveryEnvironment } from '../model/environments.js';
import { envEntry } from '../flags/records/flag-state.js';
import { createFlagAs, flagDelete, flagDescribe, patchFlagAs } from '../flags/flag-commands.js';
import type { Flag } from '../model/flags.js';
import type { Project } from '../model/projects.js';
import { checkedBody, type ReceivedBody } from '../model/request-body.js';
import { compileValidator } from '../model/validation.js';
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { createdVariants, defaultPatch, defaultValueProblem, manifestFlag, manifestFlagAnswer } from './manifest-flag.js';
import { ManifestFlagCreate, ManifestFlagUpdate, type ManifestFlagResponse } from './schemas.js';

const kCreateValidator = compileValidator(ManifestFlagCreate, { quoteKeys: false });
const kUpdateValidator = compileValidator(ManifestFlagUpdate, { quoteKeys: false });

/** Who writes, in which project, and the body as received. */
export interface ManifestWriteInput {
  principal: Principal;
  projectId: string;
  received: ReceivedBody;
}

/** A write of one flag, named by its key (the path's). */
export interface ManifestKeyInput {
  principal: Principal;
  projectId: string;
  key: string;
}

/** The flag named `key` in the project; a flag of another project is as missing as none. */
function requireKeyFlag(r: StoreReader, projectId: string, key: string): Flag {
  const flag = findFlagByName(r, projectId, key);
  if (flag === undefined) throw new FlagwireError('NOT_FOUND', `No flag with key "${key}" exists in this project.`);
  return flag;
}

/** Refuses a display name other than the key (a flag has one name) and a default value not of its type. */
function bodyProblems(body: { key: string; name?: string; type: ManifestFlagCreate['type']; defaultValue?: unknown }): string[] {
  const problems: string[] = [];
  if (body.name !== undefined && body.name !== body.key) problems.push('name must be the same as key: a Flagwire flag has one name');
  const typeProblem = body.defaultValue === undefined ? null : defaultValueProblem(body.defaultValue, body.type);
  if (typeProblem !== null) problems.push(typeProblem);
  return problems;
}

function refuseProblems(problems: string[]): void {
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
}

/** POST /openfeature/v0/manifest/flags: a new flag, its default value in every environment of the project. */
export function manifestFlagCreate(w: StoreWriter, input: ManifestWriteInput, now: number): ManifestFlagResponse {
  const { project, actor } = actorInProject(w, input.principal, () => input.projectId, 'editFlags', now);
  const body = checkedBody(input.received, kCreateValidator);
  refuseProblems(bodyProblems(body));
  const typed = createdVariants(body.type, body.defaultValue);
  const state = Object.keys(typed).length === 0 ? {} : typed;
  const common = { name: body.key, description: body.description ?? '' };
  const created =
    project.kind === 'single'
      ? { ...common, ...state }
      : { ...common, environments: Object.fromEntries(project.environments.map((env) => [env, state])) };
  return manifestFlagAnswer(createFlagAs(w, { projectId: project.id, actor, body: created }, now), project);
}

/** The environments a manifest write sets: the single flag's state, or every environment of the project. */
function writtenEnvironments(project: Project): (string | null)[] {
  return project.kind === 'single' ? [null] : project.environments;
}

/**
 * PUT /openfeature/v0/manifest/flags/{key}: the flag's default value in every environment (each patched
 * by patchFlagAs's rules) and its description, in one transaction: held or applied as one change.
 */
export function manifestFlagUpdate(w: StoreWriter, input: ManifestWriteInput & { key: string }, now: number): ManifestFlagResponse {
  const { project, actor } = actorInProject(w, input.principal, () => input.projectId, 'editFlags', now);
  const body = checkedBody(input.received, kUpdateValidator);
  const problems = bodyProblems(body);
  if (body.key !== input.key) problems.unshift(`key "${body.key}" must be the path's, "${input.key}"`);
  refuseProblems(problems);
  let flag = requireKeyFlag(w, project.id, input.key);
  const flagType = manifestFlag(flag, project.environments).type;
  for (const env of writtenEnvironments(project)) {
    const state = flag.kind === 'flag' ? flag.state : envEntry(flag, env ?? '');
    const patch = defaultPatch(flag.name, state.typed, flagType, body.type, body.defaultValue);
    if (Object.keys(patch).length > 0) flag = patchFlagAs(w, { projectId: project.id, flagId: flag.id, env, actor, patch }, now).flag;
  }
  const text = body.description ?? '';
  if (body.description !== undefined && text !== flag.description) {
    flag = flagDescribe(w, { principal: input.principal, flagId: flag.id, text }, now);
  }
  return manifestFlagAnswer(flag, project);
}

/** DELETE /openfeature/v0/manifest/flags/{key}: the flag deleted (Flagwire keeps no archive), as the flags' delete does it. */
export function manifestFlagDelete(w: StoreWriter, input: ManifestKeyInput, now: number): { message: string; archivedAt: null } {
  const { project, actor } = actorInProject(w, input.principal, () => input.projectId, 'editFlags', now);
  // A flag's delete takes it from every environment: a token limited to some may not (as its patch may not change others).
  if (project.kind === 'multi') requireEveryEnvironment(actor.environments, 'Deleting a flag');
  const flag = requireKeyFlag(w, project.id, input.key);
  flagDelete(w, { principal: input.principal, flagId: flag.id }, now);
  return { message: `Flag "${flag.name}" deleted. Flagwire keeps no archive: creating it again makes a new flag.`, archivedAt: null };
}

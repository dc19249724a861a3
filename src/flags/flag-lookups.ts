// Looking a flag up, or the 404 that says it does not exist: one home and one wording for every caller
// (the Management API, the console, the writer's commands), as src/model/records/lookups.ts is for the records
// below the capabilities.
import { projectAccess } from '../console-route/access.js';
import type { ProjectAccess } from '../console-route/project-access.js';
import type { User } from '../model/accounts.js';
import { FlagwireError } from '../errors.js';
import { checkEnvParam, requireEnvironmentAllowed } from '../model/environments.js';
import { notFoundDetail, requireProject } from '../model/records/lookups.js';
import type { Project } from '../model/projects.js';
import type { AuthContext } from '../model/records/token-access.js';
import type { ApiRequest, HandlerDeps } from '../routes/handler.js';
import type { StoreReader } from '../store/interfaces.js';
import { getFlag } from './records/flag-store.js';
import type { Flag } from '../model/flags.js';

export function requireFlag(r: StoreReader, id: string): Flag {
  const flag = getFlag(r, id);
  if (flag === undefined) throw new FlagwireError('NOT_FOUND', notFoundDetail('flag', id));
  return flag;
}

/**
 * The 404 of every Management API flag route (spec: "the 404 for a flag says no flag with that id exists
 * in this project"). It does not echo the id, so the body is byte-identical whether the id exists in
 * another project or nowhere: nothing tells a caller which ids exist elsewhere.
 */
export function flagNotFound(): FlagwireError {
  return new FlagwireError('NOT_FOUND', 'No flag with that id exists in this project.');
}

/** The flag `flagId` of project `projectId`; a flag of another project is as missing as an unknown id. */
export function requireProjectFlag(r: StoreReader, projectId: string, flagId: string): Flag {
  const flag = getFlag(r, flagId);
  if (!flag || flag.projectId !== projectId) throw flagNotFound();
  return flag;
}

/** A PATCH's flag, its project, and its `env` checked: the environment, or the 400 problem to report with the body's. */
export interface PatchTarget {
  flag: Flag;
  project: Project;
  env: string | null;
  problem: string | null;
}

/**
 * What a PATCH of `flagId` is refused for before its body is read, in this order: a flag not of the
 * project (404), then an environment the actor may not change (403; `allowed` is its environment list).
 * A problem with `env` itself is returned, for the 400 that lists it with the body's (spec: PATCH rule 9).
 */
export function requirePatchTarget(
  r: StoreReader,
  projectId: string,
  flagId: string,
  env: string | null,
  allowed: readonly string[],
): PatchTarget {
  const flag = requireProjectFlag(r, projectId, flagId);
  const project = requireProject(r, projectId);
  const checked = checkEnvParam(project, env, true, 'flag');
  requireEnvironmentAllowed(allowed, checked.env);
  return { flag, project, env: checked.env, problem: checked.problem };
}

/**
 * The flag, if the user may see its project (projectAccess's 404 otherwise): the flag's page and the
 * routes that act on a flag, its own and its release plans'.
 */
export function flagAccess(r: StoreReader, user: User, flagId: string, now: number): { flag: Flag; access: ProjectAccess } {
  const flag = requireFlag(r, flagId);
  return { flag, access: projectAccess(r, user, flag.projectId, now) };
}

/**
 * A write to one flag (PATCH, a scheduled change, a rollout): 404 and 403 before its body is read for a
 * flag that cannot be changed (the writer checks both again, in the transaction that writes); a problem
 * with `env` itself is a 400, reported by the writer with the body's problems (spec: PATCH rule 9).
 */
export function precheckFlagChange(request: ApiRequest, auth: AuthContext, { store }: HandlerDeps): void {
  requirePatchTarget(store, auth.project.id, request.flagId!, request.query.get('env'), auth.token.environments);
}

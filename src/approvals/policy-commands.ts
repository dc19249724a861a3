// Setting a project's approval policy (docs/approvals.md): per environment, an Admin's or Owner's (the
// web console's, or `flagwire approvals set --as USER_ID`) or the operator's at the command line. A token
// never sets it: a pipeline does not choose its own approvals.
import { FlagwireError } from '../errors.js';
import { type Actor, actorFor, personOrOperator, type Principal, writeAudit } from '../actor/audit-actor.js';
import { kRoles, type Role } from '../model/accounts.js';
import { requireProject } from '../model/records/lookups.js';
import type { ApprovalRule, Project } from '../model/projects.js';
import type { StoreWriter } from '../store/interfaces.js';
import { envName, kDefaultApproverRoles, kMaxRequiredApprovals, ruleFor, rulesOf } from './policy.js';
import { putProject } from '../model/records/project-records.js';
import { getToken } from '../model/records/token-records.js';

export interface ApprovalsSetInput {
  projectId: string;
  /** The environment; null (or absent) on a single-environment project. */
  env: string | null;
  required: number;
  roles?: Role[];
  allowSelf?: boolean;
  bypassTokens?: string[];
  principal: Principal;
}

/** Who may set the policy, resolved in the transaction: a person of a role that may configure the project, or the operator. */
function configurer(w: StoreWriter, projectId: string, principal: Principal, now: number) {
  personOrOperator(w, principal, "set a project's approval policy");
  const project = requireProject(w, projectId);
  const actor = actorFor(w, principal, project, 'configure', now);
  if (project.orgId === null) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `project ${project.id} is a personal project: approvals need a second person, so only an organisation's project can have a policy`,
    );
  }
  return { project, actor };
}

/** The environment a rule is for, as the project has it. */
function ruleEnv(project: Project, env: string | null | undefined): string | null {
  if (project.kind === 'single') {
    if (env !== null && env !== undefined) {
      throw new FlagwireError('INVALID_REQUEST', `project ${project.id} is a single-environment project: leave the environment out`);
    }
    return null;
  }
  if (env === null || env === undefined || !project.environments.includes(env)) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `${env === null || env === undefined ? 'an environment is required' : `unknown environment "${env}"`}; valid environments: ${project.environments.join(', ') || '(none yet)'}`,
    );
  }
  return env;
}

export function approvalsSet(w: StoreWriter, input: ApprovalsSetInput, now: number): Project {
  const { project, actor } = configurer(w, input.projectId, input.principal, now);
  const env = ruleEnv(project, input.env);
  const problems: string[] = [];
  if (!Number.isInteger(input.required) || input.required < 1 || input.required > kMaxRequiredApprovals) {
    problems.push(`required must be a whole number from 1 to ${kMaxRequiredApprovals}`);
  }
  const roles = input.roles ?? [...kDefaultApproverRoles];
  if (!Array.isArray(roles) || roles.length === 0 || roles.some((role) => !kRoles.includes(role))) {
    problems.push(`roles must name at least one of ${kRoles.join(', ')}`);
  }
  const bypassTokens = input.bypassTokens ?? [];
  for (const id of new Set(bypassTokens)) {
    const token = getToken(w, id);
    if (token === undefined || token.projectId !== project.id) problems.push(`token ${id} is not a token of project ${project.id}`);
  }
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  const rule: ApprovalRule = {
    env,
    required: input.required,
    roles: kRoles.filter((role) => roles.includes(role)),
    allowSelf: input.allowSelf ?? false,
    bypassTokens: [...new Set(bypassTokens)],
  };
  const before = ruleFor(project, env) ?? null;
  return write(
    w,
    actor,
    { ...project, approvals: [...rulesOf(project).filter((r) => r.env !== env), rule] },
    'approvals.set',
    env,
    before,
    now,
  );
}

export function approvalsClear(
  w: StoreWriter,
  input: { projectId: string; env: string | null; principal: Principal },
  now: number,
): Project {
  const { project, actor } = configurer(w, input.projectId, input.principal, now);
  const env = ruleEnv(project, input.env);
  const before = ruleFor(project, env);
  if (before === undefined) throw new FlagwireError('INVALID_REQUEST', `${envName(env)} of project ${project.id} has no approval policy`);
  const rules = rulesOf(project).filter((rule) => rule.env !== env);
  const { approvals: _, ...rest } = project;
  return write(w, actor, rules.length > 0 ? { ...rest, approvals: rules } : rest, 'approvals.clear', env, before, now);
}

/** Stores the project with its policy changed, audited with the environment's rule before and after. */
function write(
  w: StoreWriter,
  actor: Actor,
  next: Project,
  action: 'approvals.set' | 'approvals.clear',
  env: string | null,
  before: ApprovalRule | null,
  now: number,
): Project {
  putProject(w, next);
  const after = ruleFor(next, env) ?? null;
  writeAudit(w, actor, { projectId: next.id, action, env, changes: { approvals: { before, after } } }, now);
  return next;
}

// A project's approval policy read as the gate and the request commands need it: which rules a change
// touches, how many approvals it needs and who may give them (docs/approvals.md).
import type { ProjectRole } from '../model/permissions.js';
import type { ApprovalRule, Project } from '../model/projects.js';
import type { Role } from '../model/accounts.js';

/** Who may approve when a rule names no roles (and what `approvals set` defaults to). */
export const kDefaultApproverRoles: readonly Role[] = ['owner', 'admin', 'editor'];
export const kMaxRequiredApprovals = 5;

/** The project's guarded environments' rules (none: nothing is guarded). */
export function rulesOf(project: Project): readonly ApprovalRule[] {
  return project.approvals ?? [];
}

/** The rule of environment `env` (null: a single-environment project's), if it is guarded. */
export function ruleFor(project: Project, env: string | null): ApprovalRule | undefined {
  return rulesOf(project).find((rule) => rule.env === env);
}

/**
 * What a request over `environments` needs now: the most approvals any of their rules asks, from roles
 * every one of them allows, the author counting only where every one allows it. A policy cleared while a
 * request waits leaves one approval, by the roles that may change flags.
 */
export function requirementOf(
  project: Project,
  environments: readonly (string | null)[],
): { required: number; roles: readonly Role[]; allowSelf: boolean } {
  const rules = environments.map((env) => ruleFor(project, env)).filter((rule) => rule !== undefined);
  if (rules.length === 0) return { required: 1, roles: kDefaultApproverRoles, allowSelf: false };
  return {
    required: Math.max(...rules.map((rule) => rule.required)),
    roles: kDefaultApproverRoles
      .filter((role) => rules.every((rule) => rule.roles.includes(role)))
      .concat(rules.every((rule) => rule.roles.includes('viewer')) ? ['viewer'] : []),
    allowSelf: rules.every((rule) => rule.allowSelf),
  };
}

/** Whether `role` is among `roles` (a personal project's owner never approves: a policy needs an organisation). */
export function mayApproveAs(role: ProjectRole | undefined, roles: readonly Role[]): boolean {
  return role !== undefined && role !== 'personal' && roles.includes(role);
}

/** An environment as the texts name it. */
export function envName(env: string | null): string {
  return env === null ? "the project's environment" : env;
}

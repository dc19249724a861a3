// What a signed-in user may see and do in the web console. Reads check membership here; what a role may
// do is model/permissions.ts, which the writer commands enforce on every change (with the plans): this
// module only hides what the user cannot reach and tells the page which controls to offer, so the page
// itself holds no rule.
import { FlagwireError } from '../errors.js';
import type { Org, Role, User } from '../model/accounts.js';
import { notFoundDetail } from '../model/records/lookups.js';
import { can, canManageAnyToken, canManageToken, type ProjectRole, tokenStatus } from '../model/permissions.js';
import { isManagementEligible } from '../model/plans.js';
import type { Token } from '../model/tokens.js';
import type { StoreReader } from '../store/interfaces.js';
import type { ProjectAccess } from './project-access.js';
import { getOrg } from '../model/records/org-records.js';
import { getProject } from '../model/records/project-records.js';
import { getRole, projectRole } from '../model/records/member-records.js';

export type { ProjectRole };

/** The project, if the user belongs to it; otherwise the same 404 as for an id that does not exist. */
export function projectAccess(r: StoreReader, user: User, projectId: string, now: number): ProjectAccess {
  const project = getProject(r, projectId);
  const missing = () => new FlagwireError('NOT_FOUND', notFoundDetail('project', projectId));
  if (project === undefined) throw missing();
  const org = project.orgId === null ? null : getOrg(r, project.orgId);
  const role = projectRole(r, project, user.id);
  if (org === undefined || role === undefined) throw missing();
  // Tokens change only in an organisation allowed the Management API (personal projects have none).
  const eligible = org !== null && isManagementEligible(org, now);
  return {
    project,
    org,
    role,
    can: {
      editFlags: can(role, 'editFlags'),
      createTokens: eligible && can(role, 'createToken'),
      manageAllTokens: eligible && canManageAnyToken(role),
      tokensReadOnly: !eligible,
      configure: can(role, 'configure'),
      manageWebhooks: can(role, 'editFlags'),
    },
  };
}

/** Whether the page offers Rotate and Revoke on `token`: the writer's rule, as the user stands now. */
export function mayManageToken(access: ProjectAccess, token: Token, userId: string, now: number): boolean {
  return (
    !access.can.tokensReadOnly &&
    tokenStatus(token, now) !== 'revoked' &&
    canManageToken(access.role, 'revoke', token, userId) &&
    canManageToken(access.role, 'rotate', token, userId)
  );
}

/** Whether the page offers Revoke on a rotated token still in its grace period (the writer ends the grace). */
export function mayEndGrace(access: ProjectAccess, token: Token, userId: string): boolean {
  return !access.can.tokensReadOnly && canManageToken(access.role, 'revoke', token, userId);
}

/** The organisation, if the user is a member; otherwise the 404 of an unknown id. */
export function orgAccess(r: StoreReader, user: User, orgId: string): { org: Org; role: Role } {
  const org = getOrg(r, orgId);
  const role = org === undefined ? undefined : getRole(r, org.id, user.id);
  if (org === undefined || role === undefined) throw new FlagwireError('NOT_FOUND', notFoundDetail('organisation', orgId));
  return { org, role };
}

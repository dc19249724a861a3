// What a signed-in user may see and do in the web console. Reads check membership here; every change
// is checked again by its writer command (roles, plans), which is the rule's one home: this module only
// hides what the user cannot reach and tells the page which controls to offer.
import { FlagwireError } from '../errors.js';
import type { Org, Role, User } from '../model/accounts.js';
import { notFoundDetail } from '../model/lookups.js';
import { isManagementEligible } from '../model/plans.js';
import type { Project } from '../model/projects.js';
import type { StoreReader } from '../store/interfaces.js';
import { isEditorOrAbove } from '../model/input-checks.js';

/** The user's standing in a project: a role in its organisation, or `personal` for the owner of a personal project. */
export type ProjectRole = Role | 'personal';

export interface ProjectAccess {
  project: Project;
  org: Org | null;
  role: ProjectRole;
  /** Controls the page offers; the writer commands enforce the same rules. */
  can: {
    editFlags: boolean;
    createTokens: boolean;
    /** Rotate or revoke any token of the project (Admin, Owner); creators may manage their own. */
    manageAllTokens: boolean;
    /** Below Teams (or lapsed) tokens are shown read-only. */
    tokensReadOnly: boolean;
    /** Environments and audiences. */
    configure: boolean;
  };
}

/** The project, if the user belongs to it; otherwise the same 404 as for an id that does not exist. */
export function projectAccess(r: StoreReader, user: User, projectId: string, now: number): ProjectAccess {
  const project = r.getProject(projectId);
  const missing = () => new FlagwireError('NOT_FOUND', notFoundDetail('project', projectId));
  if (project === undefined) throw missing();
  if (project.orgId === null) {
    if (project.ownerUserId !== user.id) throw missing();
    return {
      project,
      org: null,
      role: 'personal',
      can: { editFlags: true, createTokens: false, manageAllTokens: false, tokensReadOnly: true, configure: true },
    };
  }
  const org = r.getOrg(project.orgId);
  const role = r.getRole(project.orgId, user.id);
  if (org === undefined || role === undefined) throw missing();
  const eligible = isManagementEligible(org, now);
  const admin = role === 'admin' || role === 'owner';
  return {
    project,
    org,
    role,
    can: {
      editFlags: isEditorOrAbove(role),
      createTokens: eligible && isEditorOrAbove(role),
      manageAllTokens: eligible && admin,
      tokensReadOnly: !eligible,
      configure: admin,
    },
  };
}

/** The organisation, if the user is a member; otherwise the 404 of an unknown id. */
export function orgAccess(r: StoreReader, user: User, orgId: string): { org: Org; role: Role } {
  const org = r.getOrg(orgId);
  const role = org === undefined ? undefined : r.getRole(org.id, user.id);
  if (org === undefined || role === undefined) throw new FlagwireError('NOT_FOUND', notFoundDetail('organisation', orgId));
  return { org, role };
}

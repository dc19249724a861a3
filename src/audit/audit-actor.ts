// Who a change is audited as. The Management API acts as its token (`token:<id>`); the console acts as
// `console`, or with `--as USER_ID` as that person (`user:<id>`, as the web console will).
import { FlagwireError } from '../errors.js';
import { requireUser } from '../model/lookups.js';
import { can, describeRole, projectRole } from '../model/permissions.js';
import type { Project } from '../model/projects.js';
import type { Token } from '../model/tokens.js';
import type { StoreWriter } from '../store/interfaces.js';

/** Who makes a change: audit actor (`token:<id>`, `console` or `user:<id>`), its display name, and its environment limit. */
export interface Actor {
  id: string;
  name: string;
  /** Environments the actor may change; [] means every environment. */
  environments: string[];
}

export const kConsoleActor: Actor = { id: 'console', name: 'console', environments: [] };

/** A Management API token, audited as `token:<id>` with its name (spec: Authentication 10), limited to its environments. */
export function tokenActor(token: Token): Actor {
  return { id: `token:${token.id}`, name: token.name, environments: token.environments };
}

/**
 * Who a console flag edit is audited as: `console` without `--as`; with `--as USER_ID` the person
 * (`user:<id>`, as the web console will write), who must be an Editor, Admin or Owner of the project's
 * organisation, or the owner of a personal project. A Viewer may read but not change flags.
 */
export function consoleActor(w: StoreWriter, project: Project, asUserId: string | undefined): Actor {
  if (asUserId === undefined) return kConsoleActor;
  const user = requireUser(w, asUserId);
  const role = projectRole(w, project, user.id);
  if (!can(role, 'editFlags')) {
    throw new FlagwireError(
      'FORBIDDEN',
      project.orgId === null
        ? `Only the owner of personal project ${project.id} may change its flags; user ${user.id} is not its owner.`
        : `Changing flags needs the Editor, Admin or Owner role in organisation ${project.orgId}; user ${user.id} ${describeRole(role)}.`,
    );
  }
  return { id: `user:${user.id}`, name: user.name, environments: [] };
}

/**
 * Who a project configuration change (environments, audiences) is audited as: `console` without a
 * user; with one (`asUserId`: the web console's signed-in user) that person, who must be an Admin or
 * Owner of the project's organisation, or the owner of a personal project.
 */
export function projectAdminActor(w: StoreWriter, project: Project, asUserId: string | undefined): Actor {
  if (asUserId === undefined) return kConsoleActor;
  const user = requireUser(w, asUserId);
  const role = projectRole(w, project, user.id);
  if (!can(role, 'configure')) {
    throw new FlagwireError(
      'FORBIDDEN',
      project.orgId === null
        ? `Only the owner of personal project ${project.id} may change it; user ${user.id} is not its owner.`
        : `Changing environments and audiences needs the Admin or Owner role in organisation ${project.orgId}; user ${user.id} ${describeRole(role)}.`,
    );
  }
  return { id: `user:${user.id}`, name: user.name, environments: [] };
}

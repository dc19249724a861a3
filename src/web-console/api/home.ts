// The console's session and home page: who is signed in, their organisations, projects and invitations.
import { isInvitationLive } from '../../model/invitations.js';
import { can } from '../../model/permissions.js';
import type { ApiCall, ApiRoute } from '../../console-route/call.js';

export function sessionView(call: ApiCall) {
  return { user: call.user, csrfToken: call.session.csrfToken, expiresAt: call.session.expiresAt };
}
export type SessionView = ReturnType<typeof sessionView>;

export function homeView(call: ApiCall) {
  const r = call.store;
  const projects = r.listProjects();
  const orgs = r.listOrgs().flatMap((org) => {
    const role = r.getRole(org.id, call.user.id);
    if (role === undefined) return [];
    return [
      {
        id: org.id,
        name: org.name,
        plan: org.plan,
        standing: org.standing,
        role,
        // As projectCreate's rule: the roles that manage the organisation's members.
        canCreateProjects: can(role, 'manageMembers'),
        projects: projects.filter((p) => p.orgId === org.id),
      },
    ];
  });
  const personal = projects.filter((p) => p.orgId === null && p.ownerUserId === call.user.id);
  const invitations = call.store
    .listEmailInvitations(call.user.email)
    .filter((i) => isInvitationLive(i, call.now))
    .map((i) => ({
      id: i.id,
      role: i.role,
      expiresAt: i.expiresAt,
      orgName: r.getOrg(i.orgId)?.name ?? i.orgId,
      invitedByName: r.getUser(i.invitedBy)?.name ?? i.invitedBy,
    }));
  return { user: call.user, orgs, personal, invitations, canCreateOrgs: call.config.consoleCreateOrgs };
}
export type HomeView = ReturnType<typeof homeView>;

export const kHomeRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    pattern: 'session',
    run: sessionView,
  },
  {
    // The first page: the organisations (with their projects) and the personal projects of the user, by name.
    method: 'GET',
    pattern: 'home',
    run: homeView,
  },
];

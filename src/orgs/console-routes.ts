// The web console's organisation routes: creating an organisation (any signed-in user, where the
// operator allows it with FLAGWIRE_CONSOLE_CREATE_ORGS), and the members page: an organisation's members
// (and the invitations pending, the invitations capability's records) and adding one. Each change is the
// CLI's own writer command, given the signed-in user.
import { FlagwireError } from '../errors.js';
import { byCreation } from '../model/by-creation.js';
import { isInvitationLive } from '../model/invitations.js';
import { can } from '../model/permissions.js';
import { Type } from '../typebox.js';
import { orgAccess } from '../console-route/access.js';
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { compileForm, FormText } from '../console-route/forms.js';
import { kOrgCommands } from './command-table.js';
import { getOrg, getUser } from '../model/records/org-records.js';
import { listPersonalProjects, listOrgProjects } from '../model/records/project-records.js';
import { listEmailInvitations, listOrgInvitations } from '../model/records/invitation-records.js';
import { listMembers, listUserMemberships } from '../model/records/member-records.js';

const kOrgForm = compileForm(Type.Object({ name: FormText }));
/** The role is the writer's to check, as the CLI's --role. */
const kMemberForm = compileForm(Type.Object({ userId: FormText, role: FormText }));

/** The console's home, its first page: what the signed-in user may open (and the invitations to their address). */
export function homeView(call: ApiCall) {
  const r = call.store;
  // The person's organisations through the index of their memberships, oldest first: a node of many
  // organisations never reads them all for one page.
  const memberships = listUserMemberships(r, call.user.id).flatMap(({ orgId, role }) => {
    const org = getOrg(r, orgId);
    return org === undefined ? [] : [{ org, role }];
  });
  const orgs = memberships
    .sort((a, b) => byCreation(a.org, b.org))
    .map(({ org, role }) => ({
      id: org.id,
      name: org.name,
      plan: org.plan,
      standing: org.standing,
      role,
      // As projectCreate's rule: the roles that manage the organisation's members.
      canCreateProjects: can(role, 'manageMembers'),
      projects: listOrgProjects(r, org.id),
    }));
  const personal = listPersonalProjects(r, call.user.id);
  const invitations = listEmailInvitations(call.store, call.user.email)
    .filter((i) => isInvitationLive(i, call.now))
    .map((i) => ({
      id: i.id,
      role: i.role,
      expiresAt: i.expiresAt,
      orgName: getOrg(r, i.orgId)?.name ?? i.orgId,
      invitedByName: getUser(r, i.invitedBy)?.name ?? i.invitedBy,
    }));
  return { user: call.user, orgs, personal, invitations, canCreateOrgs: call.config.consoleCreateOrgs };
}
export type HomeView = ReturnType<typeof homeView>;

export function membersView(call: ApiCall) {
  const { org, role } = orgAccess(call.store, call.user, call.params.orgId!);
  const members = listMembers(call.store, org.id).map((m) => ({ ...m, user: getUser(call.store, m.userId) ?? null }));
  const canManage = can(role, 'manageMembers');
  // Pending invitations name addresses: shown to those who may invite, as the writer's rule.
  const invitations = canManage
    ? listOrgInvitations(call.store, org.id)
        .filter((i) => isInvitationLive(i, call.now))
        .map(({ id, email, role: invited, expiresAt }) => ({ id, email, role: invited, expiresAt }))
    : [];
  return { org, role, members, invitations, canManage };
}
export type MembersView = ReturnType<typeof membersView>;

export const kOrgConsoleRoutes: readonly ApiRoute[] = [
  {
    // The first page: the organisations (with their projects) and the personal projects of the user, by name.
    method: 'GET',
    pattern: 'home',
    run: homeView,
  },
  {
    method: 'POST',
    pattern: 'orgs',
    run(call) {
      if (!call.config.consoleCreateOrgs) {
        throw new FlagwireError(
          'FORBIDDEN',
          "This server's operator creates organisations (flagwire org create); FLAGWIRE_CONSOLE_CREATE_ORGS is off.",
        );
      }
      return call.writer.call(kOrgCommands.orgCreate, {
        name: kOrgForm.read(call.received).name,
        principal: call.principal,
      });
    },
  },
  {
    method: 'GET',
    pattern: 'orgs/:orgId/members',
    run: membersView,
  },
  {
    method: 'POST',
    pattern: 'orgs/:orgId/members',
    run(call) {
      const { org } = orgAccess(call.store, call.user, call.params.orgId!);
      const body = kMemberForm.read(call.received);
      return call.writer.call(kOrgCommands.orgAddMember, {
        orgId: org.id,
        userId: body.userId,
        role: body.role as never,
        principal: call.principal,
      });
    },
  },
];

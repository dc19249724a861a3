// The console's members page: an organisation's members and invitations, and answering an invitation.
import { kInvitationCommands } from '../../invitations/invitation-commands.js';
import { kOrgCommands } from '../../orgs/org-commands.js';
import { isInvitationLive } from '../../model/invitations.js';
import { can } from '../../model/permissions.js';
import { orgAccess } from '../access.js';
import { Type } from '../../typebox.js';
import { type ApiCall, type ApiRoute, consoleUrl } from './call.js';
import { compileForm, FormText } from '../forms.js';

/** The role is the writer's to check, as the CLI's --role. */
const kMemberForm = compileForm(Type.Object({ userId: FormText, role: FormText }));
const kInvitationForm = compileForm(Type.Object({ email: FormText, role: FormText }));

export function membersView(call: ApiCall) {
  const { org, role } = orgAccess(call.store, call.user, call.params.orgId!);
  const members = call.store.listMembers(org.id).map((m) => ({ ...m, user: call.store.getUser(m.userId) ?? null }));
  const canManage = can(role, 'manageMembers');
  // Pending invitations name addresses: shown to those who may invite, as the writer's rule.
  const invitations = canManage
    ? call.store
        .listOrgInvitations(org.id)
        .filter((i) => isInvitationLive(i, call.now))
        .map(({ id, email, role: invited, expiresAt }) => ({ id, email, role: invited, expiresAt }))
    : [];
  return { org, role, members, invitations, canManage };
}
export type MembersView = ReturnType<typeof membersView>;

export const kMemberRoutes: readonly ApiRoute[] = [
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
        asUserId: call.user.id,
      });
    },
  },
  {
    // An invitation, not a membership: the person joins by accepting it (invitation-commands.ts).
    method: 'POST',
    pattern: 'orgs/:orgId/invitations',
    run(call) {
      const { org } = orgAccess(call.store, call.user, call.params.orgId!);
      const body = kInvitationForm.read(call.received);
      return call.writer.call(kInvitationCommands.orgInvite, {
        orgId: org.id,
        email: body.email,
        role: body.role,
        asUserId: call.user.id,
        consoleUrl: consoleUrl(call),
      });
    },
  },
  {
    method: 'POST',
    pattern: 'invitations/:invitationId/accept',
    run: (call) =>
      call.writer.call(kInvitationCommands.invitationAccept, { invitationId: call.params.invitationId!, asUserId: call.user.id }),
  },
  {
    method: 'POST',
    pattern: 'invitations/:invitationId/decline',
    run: (call) =>
      call.writer.call(kInvitationCommands.invitationDecline, { invitationId: call.params.invitationId!, asUserId: call.user.id }),
  },
];

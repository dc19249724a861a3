// The invitations capability's web console routes: inviting someone to an organisation from its members
// page, and answering an invitation from the home page. Each is the CLI's own writer command, given the
// signed-in user.
import { Type } from '../typebox.js';
import { orgAccess } from '../console-route/access.js';
import { type ApiRoute, consoleUrl } from '../console-route/call.js';
import { compileForm, FormText } from '../console-route/forms.js';
import { kInvitationCommands } from './command-table.js';

const kInvitationForm = compileForm(Type.Object({ email: FormText, role: FormText }));

export const kInvitationConsoleRoutes: readonly ApiRoute[] = [
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
        principal: call.principal,
        consoleUrl: consoleUrl(call),
      });
    },
  },
  {
    method: 'POST',
    pattern: 'invitations/:invitationId/accept',
    run: (call) =>
      call.writer.call(kInvitationCommands.invitationAccept, {
        invitationId: call.params.invitationId!,
        principal: call.principal,
      }),
  },
  {
    method: 'POST',
    pattern: 'invitations/:invitationId/decline',
    run: (call) =>
      call.writer.call(kInvitationCommands.invitationDecline, {
        invitationId: call.params.invitationId!,
        principal: call.principal,
      }),
  },
];

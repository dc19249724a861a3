// The invitations capability's writer commands by name (src/writer/command.ts): what its routes, console
// routes and command line call by value, and what the writer looks up by name.
import { commandTable } from '../writer/command.js';
import { invitationAccept, invitationDecline, invitationJoin, orgInvite } from './invitation-commands.js';

export const kInvitationCommands = commandTable({ orgInvite, invitationAccept, invitationDecline, invitationJoin });

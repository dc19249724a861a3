// Invitations to an organisation as a capability (src/capability/capability.ts).
import { kInvitationRecords } from '../model/records/invitation-records.js';
import { defineCapability } from '../capability/capability.js';
import type { MemberAuditAction } from '../orgs/audit-actions.js';
import { kInvitationCommands } from './command-table.js';

export const kInvitations = defineCapability({
  name: 'invitations',
  databases: ['invitations'],
  records: [kInvitationRecords],
  commands: kInvitationCommands,
  consoleRoutes: async () => (await import('./console-routes.js')).kInvitationConsoleRoutes,
  auditActions: ['member.invite', 'member.accept', 'member.decline'] as const satisfies readonly MemberAuditAction[],
});

// Organisations, users and their members as a capability (src/capability/capability.ts).
import { kMemberRecords } from '../model/records/member-records.js';
import { kOrgRecords, kUserRecords } from '../model/records/org-records.js';
import { defineCapability } from '../capability/capability.js';
import type { MemberAuditAction } from './audit-actions.js';
import { kOrgCommands } from './command-table.js';

export const kOrgs = defineCapability({
  name: 'orgs',
  databases: ['orgs', 'users', 'memberships'],
  records: [kOrgRecords, kUserRecords, kMemberRecords],
  commands: kOrgCommands,
  consoleRoutes: async () => (await import('./console-routes.js')).kOrgConsoleRoutes,
  cli: async () => (await import('./cli.js')).kOrgCli,
  auditActions: ['member.role'] as const satisfies readonly MemberAuditAction[],
});

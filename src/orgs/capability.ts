// Organisations, users and their members as a capability (src/capability/capability.ts).
import { kOrgRecords, kUserRecords, kMemberRecords } from '../store/record-kinds.js';
import { defineCapability } from '../capability/capability.js';
import { kOrgCli } from './cli.js';
import { kOrgConsoleRoutes } from './console-routes.js';
import { kOrgCommands, type MemberAuditAction } from './org-commands.js';

export const kOrgs = defineCapability({
  name: 'orgs',
  databases: ['orgs', 'users', 'members'],
  records: [kOrgRecords, kUserRecords, kMemberRecords],
  commands: kOrgCommands,
  consoleRoutes: kOrgConsoleRoutes,
  cli: kOrgCli,
  auditActions: ['member.role'] as const satisfies readonly MemberAuditAction[],
});

// Organisations, users and their members as a capability (src/capability/capability.ts).
import { defineCapability } from '../capability/capability.js';
import { kOrgCli } from './cli.js';
import { kOrgCommands, type MemberAuditAction } from './org-commands.js';

export const kOrgs = defineCapability({
  name: 'orgs',
  commands: kOrgCommands,
  cli: kOrgCli,
  auditActions: ['member.role'] as const satisfies readonly MemberAuditAction[],
});

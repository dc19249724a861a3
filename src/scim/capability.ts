// SCIM 2.0 provisioning (RFC 7643, RFC 7644; issue 61 item 2; docs/scim.md) as a capability: an
// organisation's SCIM settings and the Users and Groups its identity provider provisions (records.ts),
// their writer commands (scim-commands.ts), the SCIM API under /scim/v2 (service-routes.ts), and an owner's
// enable, rotate, disable and group-role mapping in the web console (console-routes.ts) and at the
// command line (cli.ts).
import { defineCapability } from '../capability/capability.js';
import { kScimAuditActions } from './audit-actions.js';
import { kScimGroupRecords, kScimSettingsRecords, kScimUserRecords } from './records.js';
import { kScimCommands } from './command-table.js';

export const kScim = defineCapability({
  name: 'scim',
  databases: ['scimSettings', 'scimUsers', 'scimGroups'],
  records: [kScimSettingsRecords, kScimUserRecords, kScimGroupRecords],
  commands: kScimCommands,
  serviceRoutes: async () => (await import('./service-routes.js')).kScimRoutes,
  consoleRoutes: async () => (await import('./console-routes.js')).kScimConsoleRoutes,
  cli: async () => (await import('./cli.js')).kScimCli,
  auditActions: kScimAuditActions,
});

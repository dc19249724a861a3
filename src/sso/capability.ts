// Single sign-on with OpenID Connect (issue 61 item 1; docs/sso.md) as a capability: an organisation's
// OIDC settings, its sign-ins under way and who each identity provider subject is (records.ts), their
// writer commands (sso-commands.ts), the rule that no change locks the organisation out (lockout.ts, a
// write check), the browser's sign-in routes (service-routes.ts), the Management API's settings routes
// (routes.ts), the console's (console-routes.ts) and the command line's (cli.ts).
import { defineCapability } from '../capability/capability.js';
import { checkNoLockOut } from './lockout.js';
import { kSsoFlowRecords, kSsoIdentityRecords, kSsoSettingsRecords } from './records.js';
import { SsoRemoved, SsoSettingsPatch, SsoSettingsView } from './schemas.js';
import { kSsoAuditActions } from './audit-actions.js';
import { kSsoCommands } from './command-table.js';

export const kSso = defineCapability({
  name: 'sso',
  databases: ['ssoSettings', 'ssoFlows', 'ssoIdentities'],
  records: [kSsoSettingsRecords, kSsoFlowRecords, kSsoIdentityRecords],
  commands: kSsoCommands,
  schemas: { SsoSettingsPatch, SsoSettingsView, SsoRemoved },
  routes: async () => (await import('./routes.js')).kSsoApiRoutes,
  serviceRoutes: async () => (await import('./service-routes.js')).kSsoRoutes,
  consoleRoutes: async () => (await import('./console-routes.js')).kSsoConsoleRoutes,
  cli: async () => (await import('./cli.js')).kSsoCli,
  auditActions: kSsoAuditActions,
  writeChecks: [checkNoLockOut],
});

// Client keys as a capability (issue 58; docs/decisions.md: Client keys): a project's public keys for
// browsers and apps, made, listed and revoked over the Management API, the web console and the command line.
import { defineCapability } from '../capability/capability.js';
import { kClientKeyAuditActions } from './audit-actions.js';
import { kClientKeyCommands } from './command-table.js';
import { kClientKeyRecords } from './records.js';
import { ClientKeyCreate, ClientKeyCreated, ClientKeyList, ClientKeyRevoked } from './schemas.js';

export const kClientKeys = defineCapability({
  name: 'client-keys',
  databases: ['clientKeys'],
  records: [kClientKeyRecords],
  commands: kClientKeyCommands,
  routes: async () => (await import('./routes.js')).kClientKeyApiRoutes,
  schemas: { ClientKeyCreate, ClientKeyCreated, ClientKeyList, ClientKeyRevoked },
  cli: async () => (await import('./cli.js')).kClientKeyCli,
  auditActions: kClientKeyAuditActions,
  consoleRoutes: async () => (await import('./console-routes.js')).kClientKeyConsoleRoutes,
});

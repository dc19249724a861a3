// The audit log as a capability (src/capability/capability.ts): reading it, on the command line and in
// the web console. Every other capability writes its own entries.
import { kAuditRecords } from '../store/record-kinds.js';
import { defineCapability } from '../capability/capability.js';

export const kAudit = defineCapability({
  name: 'audit-log',
  databases: ['audit'],
  records: [kAuditRecords],
  cli: async () => (await import('./cli.js')).kAuditCli,
  consoleRoutes: async () => (await import('./console-routes.js')).kAuditRoutes,
});

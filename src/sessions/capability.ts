// Web console sessions and passwords as a capability (src/capability/capability.ts).
import { kCredentialRecords, kSessionRecords } from '../model/records/session-records.js';
import { defineCapability } from '../capability/capability.js';
import { kSessionCommands } from './command-table.js';

export const kSessions = defineCapability({
  name: 'sessions',
  databases: ['credentials', 'sessions'],
  records: [kCredentialRecords, kSessionRecords],
  commands: kSessionCommands,
  consoleRoutes: async () => (await import('./console-routes.js')).kSessionConsoleRoutes,
});

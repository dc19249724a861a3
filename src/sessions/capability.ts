// Web console sessions and passwords as a capability (src/capability/capability.ts).
import { kCredentialRecords, kSessionRecords } from '../store/record-kinds.js';
import { defineCapability } from '../capability/capability.js';
import { kSessionCommands } from './command-table.js';

export const kSessions = defineCapability({
  name: 'sessions',
  databases: ['auth'],
  records: [kCredentialRecords, kSessionRecords],
  commands: kSessionCommands,
  consoleRoutes: async () => (await import('./console-routes.js')).kSessionConsoleRoutes,
});

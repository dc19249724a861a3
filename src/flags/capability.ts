// Flags as a capability (src/capability/capability.ts): a project's flags, created, changed and deleted,
// the evaluations the workers counted, when their flagd flag sets were read, and the shared fragments their rules name (the records; the
// fragments capability makes and changes them).
import { kEnvironmentUsageRecords, kFlagRecords, kUsageRecords } from './records/flag-store.js';
import { defineCapability } from '../capability/capability.js';
import { kFlagCommands } from './command-table.js';
import { kFlagAuditActions } from './audit-actions.js';
import { FlagdServingAnswer } from './flagd-serving-shape.js';
import { FlagCreate, FlagPatch } from '../model/schemas.js';
import { FlagList, FlagRepresentation, PatchResult } from './representation-shapes.js';
import { kFlagEnvironmentState } from './environment-state.js';
import { kFragmentEnvironmentState } from './fragment-environment-state.js';
import { kFragmentRecords } from './records/fragment-records.js';
import { kFlagSetReadRecords } from './records/flag-set-read-records.js';
import { FlagLifecycle, LifecycleList, LifecyclePatch } from './lifecycle-shapes.js';

export const kFlags = defineCapability({
  name: 'flags',
  databases: ['flags', 'usage', 'usageByEnvironment', 'fragments', 'flagSetReads'],
  records: [kFlagRecords, kUsageRecords, kEnvironmentUsageRecords, kFragmentRecords, kFlagSetReadRecords],
  commands: kFlagCommands,
  routes: async () => (await import('./routes.js')).kFlagApiRoutes,
  schemas: {
    FlagCreate,
    FlagPatch,
    FlagRepresentation,
    FlagList,
    PatchResult,
    FlagdServing: FlagdServingAnswer,
    FlagLifecycle,
    LifecycleList,
    LifecyclePatch,
  },
  consoleRoutes: async () => (await import('./console-routes.js')).kFlagConsoleRoutes,
  cli: async () => (await import('./cli.js')).kFlagCli,
  auditActions: kFlagAuditActions,
  webhookEvent: 'flag',
  environmentState: [kFlagEnvironmentState, kFragmentEnvironmentState],
});

// Events as a capability (issue 58; docs/events.md): exposures and outcomes sent by browsers and apps
// with a client key, counted once per subject into exact statistics per experiment, variant and metric,
// in the data dir's tally file or PostgreSQL's tally tables (declared here: tally/tally-storage.ts), never
// through the writer thread; and, for a project that asks for it, its raw events kept for its retention and exported.
import { defineCapability } from '../capability/capability.js';
import { EventBatch, EventSettings, EventSettingsPatch, EventsAccepted, SubjectErase, SubjectErased } from './schemas.js';
import { GoffCollectorBody } from './goff-collector.js';
import { kEventAuditActions } from './audit-actions.js';
import { kEventCommands } from './command-table.js';
import { ExperimentStatistics } from './statistics.js';
import { kTallyFile, kTallyMigrations } from './tally/tally-storage.js';

export const kEvents = defineCapability({
  name: 'events',
  sideFiles: [kTallyFile],
  pgMigrations: kTallyMigrations,
  commands: kEventCommands,
  serviceRoutes: async () => (await import('./service-routes.js')).kEventsRoutes,
  routes: async () => (await import('./routes.js')).kEventsApiRoutes,
  schemas: {
    EventBatch,
    EventsAccepted,
    GoffCollectorBody,
    ExperimentStatistics,
    SubjectErase,
    SubjectErased,
    EventSettings,
    EventSettingsPatch,
  },
  cli: async () => (await import('./cli.js')).kEventsCli,
  auditActions: kEventAuditActions,
  // At a node's start, before it listens: the export scratch folders left by processes that ended
  // (export-scratch.ts). A relay exports nothing, and its data dir is its own.
  background: [
    {
      name: 'export scratch sweep',
      phase: 'before listening',
      runsOnRelay: false,
      start: async (node) => (await import('./export-scratch.js')).sweepLeftoverScratch(node),
    },
  ],
});

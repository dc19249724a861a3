// Events as a capability (issue 58; docs/events.md): exposures and outcomes sent by browsers and apps
// with a client key, counted once per subject into exact statistics per experiment, variant and metric,
// in the data dir's tally file (src/store/tally-file.ts), never through the writer thread.
import { defineCapability } from '../capability/capability.js';
import { EventBatch, EventsAccepted, SubjectErase, SubjectErased } from './schemas.js';
import { GoffCollectorBody } from './goff-collector.js';
import { ExperimentStatistics } from './statistics.js';

export const kEvents = defineCapability({
  name: 'events',
  serviceRoutes: async () => (await import('./routes.js')).kEventsRoutes,
  routes: async () => (await import('./api-routes.js')).kEventsApiRoutes,
  schemas: { EventBatch, EventsAccepted, GoffCollectorBody, ExperimentStatistics, SubjectErase, SubjectErased },
});

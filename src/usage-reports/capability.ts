// Usage reports as a capability (docs/operations.md: Flag usage): evaluations counted outside this
// node's eval workers, by Flagwire's OpenFeature provider in-process and by relays, sent as batches that
// are counted once each (records.ts, usage-report-commands.ts) through their routes (routes.ts).
import { defineCapability } from '../capability/capability.js';
import { kUsageReportCommands } from './command-table.js';
import { kCountedBatchRecords } from './records.js';
import { UsageReport, UsageReportAnswer } from './report.js';

export const kUsageReports = defineCapability({
  name: 'usage-reports',
  databases: ['usageBatches'],
  records: [kCountedBatchRecords],
  commands: kUsageReportCommands,
  routes: async () => (await import('./routes.js')).kUsageReportRoutes,
  serviceRoutes: async () => (await import('./service-routes.js')).kRelayUsageRoutes,
  schemas: { UsageReport, UsageReportAnswer },
});

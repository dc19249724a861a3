// The relay's upstream side as a capability (issue 45; docs/api.md: Relay service): relay keys, the
// operator's credential (records.ts, made at the command line: cli.ts); GET /v1/relay, where a relay
// learns the sync port, the source and the revision (service-routes.ts); and the Follow stream on the sync
// service's gRPC server (follow-service.ts), declared here and hosted by the sync service.
import { defineCapability } from '../capability/capability.js';
import { kRelayKeyRecords } from './records.js';
import { kRelayKeyCommands } from './command-table.js';
import { kRelayServiceName } from './wire.js';

export const kRelay = defineCapability({
  name: 'relay',
  databases: ['relayKeys'],
  records: [kRelayKeyRecords],
  commands: kRelayKeyCommands,
  cli: async () => (await import('./cli.js')).kRelayCli,
  serviceRoutes: async () => (await import('./service-routes.js')).kRelayRoutes,
  // Loaded when the node's gRPC server starts (the writer thread and the command line never load it).
  grpcServices: [{ name: kRelayServiceName, start: async (host) => new (await import('./follow-service.js')).FollowService(host) }],
});

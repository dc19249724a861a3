// flagd's sync protocol as a capability (issue 44): the flag set of a project environment, served to
// flagd's in-process providers and daemons by the sync service (gRPC, its own port: sync-server.ts)
// and over HTTP (GET /v1/flag-sets/{project_id}: service-routes.ts).
import { defineCapability } from '../capability/capability.js';
import { kSyncPort } from './sync-port.js';

export const kSync = defineCapability({
  name: 'sync',
  serviceRoutes: async () => (await import('./service-routes.js')).kSyncRoutes,
  // Loaded when a node starts it: the writer thread and the command line load every capability, and
  // need neither gRPC nor the server. 'before listening': the node answers on both ports once it
  // listens, and at shutdown the streams end before the drain, as the change streams do. Its port is
  // declared (listensOn), so start-up tries it with the HTTP port before anything starts.
  background: [
    {
      name: 'sync service',
      phase: 'before listening',
      runsOnRelay: true,
      listensOn: kSyncPort,
      start: async (node) => (await import('./background.js')).startSyncService(node),
    },
  ],
});

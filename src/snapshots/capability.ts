// Native snapshots of a project environment for in-process evaluation (issue 44) as a capability
// (src/capability/capability.ts): one read route, no commands.
import { defineCapability } from '../capability/capability.js';
import { Snapshot } from '../model/snapshot-shape.js';

export const kSnapshots = defineCapability({
  name: 'snapshots',
  routes: async () => (await import('./routes.js')).kSnapshotRoutes,
  schemas: { Snapshot },
});

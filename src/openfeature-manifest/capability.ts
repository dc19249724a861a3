// The OpenFeature CLI's manifest API as a capability (issue 97 item 7; docs/openfeature-cli.md): a
// project's flags read as the CLI's manifest, and created, updated and deleted by its push, over the
// Management API's tokens and approvals.
import { defineCapability } from '../capability/capability.js';
import { kManifestCommands } from './command-table.js';
import {
  ManifestArchived,
  ManifestEnvelope,
  ManifestErrorResponse,
  ManifestFlagCreate,
  ManifestFlagResponse,
  ManifestFlagUpdate,
} from './schemas.js';

export const kOpenFeatureManifest = defineCapability({
  name: 'openfeature-manifest',
  commands: kManifestCommands,
  routes: async () => (await import('./routes.js')).kManifestRoutes,
  schemas: { ManifestEnvelope, ManifestFlagResponse, ManifestArchived, ManifestFlagCreate, ManifestFlagUpdate, ManifestErrorResponse },
});

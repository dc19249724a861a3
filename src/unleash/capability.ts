// Unleash's protocols as a capability (issue 60): Unleash's stock SDKs connect to Flagwire unchanged. The
// client API for server SDKs that evaluate locally, GET /api/client/features (routes.ts), says a project
// environment's flags in Unleash's model (client-features.ts).
import { defineCapability } from '../capability/capability.js';

export const kUnleash = defineCapability({
  name: 'unleash',
  serviceRoutes: async () => (await import('./routes.js')).kUnleashRoutes,
});

// Unleash's protocols as a capability (issue 60): Unleash's stock SDKs connect to Flagwire unchanged. The
// client API for server SDKs that evaluate locally, GET /api/client/features (service-routes.ts), says a project
// environment's flags in Unleash's model (client-features.ts), and POST /api/client/register and /metrics
// take what the SDKs report (client-reports.ts); the front-end API for its front-end SDKs,
// /api/frontend (hosted-routes.ts), answers them evaluated for one context, by the eval workers, to a
// client key (src/client-keys). `flagwire import unleash` (cli.ts) moves an Unleash instance's
// projects and flags in, planned and applied as flags as code does (import-plan.ts, import-commands.ts).
import { defineCapability } from '../capability/capability.js';
import { UnleashClientMetrics, UnleashClientRegistration } from './client-reports.js';
import { kUnleashImportCommands } from './command-table.js';
import { UnleashContextRequest, UnleashToggle, UnleashToggles } from './schemas.js';

export const kUnleash = defineCapability({
  name: 'unleash',
  commands: kUnleashImportCommands,
  cli: async () => (await import('./cli.js')).kUnleashCli,
  serviceRoutes: async () => (await import('./service-routes.js')).kUnleashRoutes,
  hostedRoutes: async () => (await import('./hosted-routes.js')).kUnleashFrontendRoutes,
  schemas: {
    UnleashContextRequest,
    UnleashToggle,
    UnleashToggles,
    UnleashClientRegistration,
    UnleashClientMetrics,
  },
});

// Evaluation as a capability: the routes whose requests the eval workers answer or whose changes they
// stream (the Evaluation API's, src/evaluation/engine/evaluation-api-routes.ts; OFREP's, src/ofrep/routes.ts; the
// change streams, src/stream/routes.ts), declared here for the route table, the OpenAPI document and the
// metrics, and served by the parts the front end builds (src/server/frontend.ts gives each its routes'
// numbers); and the web console's playground (console-routes.ts), evaluation explained for one
// context by the same engine run in-process. It stores nothing and adds no command.
import { defineCapability } from '../capability/capability.js';

export const kEvaluation = defineCapability({
  name: 'evaluation',
  hostedRoutes: async () => {
    const [api, stream, ofrep] = await Promise.all([
      import('./engine/evaluation-api-routes.js'),
      import('../stream/routes.js'),
      import('../ofrep/routes.js'),
    ]);
    return { ...api.kEvaluationApiRoutes, ...stream.kStreamRoutes, ...ofrep.kOfrepRoutes };
  },
  consoleRoutes: async () => (await import('./console-routes.js')).kPlaygroundRoutes,
});

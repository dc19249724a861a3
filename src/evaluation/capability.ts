// Evaluation as a capability: the routes whose requests the eval workers answer or whose changes they
// stream (the Evaluation API's, src/eval-engine/evaluation-api-routes.ts; OFREP's, src/ofrep/routes.ts; the
// change streams, src/stream/routes.ts), declared here for the route table, the OpenAPI document and the
// metrics, and served by the parts the front end builds (src/server/frontend.ts gives each its routes'
// numbers); and the web console's playground (console-routes.ts), evaluation explained for one
// context by the same engine run in-process. It stores nothing and adds no command.
import { defineCapability } from '../capability/capability.js';
import { kEvaluationApiRoutes } from '../eval-engine/evaluation-api-routes.js';
import { kOfrepRoutes } from '../ofrep/routes.js';
import { kStreamRoutes } from '../stream/routes.js';
import { kPlaygroundRoutes } from './console-routes.js';

export const kEvaluation = defineCapability({
  name: 'evaluation',
  hostedRoutes: { ...kEvaluationApiRoutes, ...kStreamRoutes, ...kOfrepRoutes },
  consoleRoutes: kPlaygroundRoutes,
});

// Worker side of the Evaluation API's route set (evaluation-api-routes.ts): the engine's own answer writers.
import type { Route } from './protocol.js';
import type { RouteEvaluator } from './routes.js';
import type { EvalEngine } from './engine.js';

/** `flagRoute`: the set's first route (GET /v1/flags/{id}); the other is the project's. */
export default function evaluationApiEvaluator(engine: EvalEngine, [flagRoute]: readonly Route[]): RouteEvaluator {
  return (route, id, query, _extra, out) => {
    if (route === flagRoute) engine.evaluateFlag(id, query, out);
    else engine.evaluateProject(id, query, out);
  };
}

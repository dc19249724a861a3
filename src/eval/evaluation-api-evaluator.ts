// Worker side of the Evaluation API's route set (evaluation-api-routes.ts): the engine's own answer writers.
import { kRouteFlag } from '../metrics/metrics.js';
import type { RouteEvaluator } from './routes.js';
import type { EvalEngine } from './engine.js';

export default function evaluationApiEvaluator(engine: EvalEngine): RouteEvaluator {
  return (route, id, query, _extra, out) => {
    if (route === kRouteFlag) engine.evaluateFlag(id, query, out);
    else engine.evaluateProject(id, query, out);
  };
}

// Worker side of OFREP's route set (routes.ts): OFREP's evaluator over the worker's engine, so both route sets
// share the compiled flags, the caches and the freshness rule.
import type { RouteEvaluator } from '../eval/routes.js';
import type { EvalEngine } from '../eval/engine.js';
import { kRouteOfrepFlag } from '../metrics/metrics.js';
import { OfrepEvaluator } from './evaluate.js';

export default function ofrepEvaluator(engine: EvalEngine): RouteEvaluator {
  const ofrep = new OfrepEvaluator(engine);
  return (route, id, body, extra, out) => {
    if (route === kRouteOfrepFlag) ofrep.evaluateFlag(id, body, extra, out);
    else ofrep.evaluateBulk(id, body, extra, out);
  };
}

// Worker side of OFREP's route set (routes.ts): OFREP's evaluator over the worker's engine, so both route sets
// share the compiled flags, the caches and the freshness rule.
import type { Route } from '../evaluation/engine/protocol.js';
import type { RouteEvaluator } from '../evaluation/engine/routes.js';
import type { EvalEngine } from '../evaluation/engine/engine.js';
import { OfrepEvaluator } from './evaluate.js';

/** `flagRoute`: the set's first route (one flag); the other is the bulk evaluation. */
export default function ofrepEvaluator(engine: EvalEngine, [flagRoute]: readonly Route[]): RouteEvaluator {
  const ofrep = new OfrepEvaluator(engine);
  return (route, id, body, extra, out) => {
    if (route === flagRoute) ofrep.evaluateFlag(id, body, extra, out);
    else ofrep.evaluateBulk(id, body, extra, out);
  };
}

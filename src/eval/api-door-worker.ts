// Worker side of the Evaluation API's door (api-door.ts): the engine's own answer writers.
import { kRouteFlag } from '../metrics/metrics.js';
import type { DoorEvaluator } from './door.js';
import type { EvalEngine } from './engine.js';

export default function evaluationApiEvaluator(engine: EvalEngine): DoorEvaluator {
  return (route, id, query, _extra, out) => {
    if (route === kRouteFlag) engine.evaluateFlag(id, query, out);
    else engine.evaluateProject(id, query, out);
  };
}

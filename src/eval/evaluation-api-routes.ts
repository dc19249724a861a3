// The Evaluation API's evaluation route set (spec: Evaluation API; design §1-§2): GET /v1/flags/{flag_id} and
// GET /v1/flags/project/{project_id}. No credentials. The main thread only routes: it copies the id and
// the raw query string into the current batch (batcher.ts) and the eval workers parse, read the store
// and evaluate (evaluation-api-evaluator.ts, engine.ts).
//
// It lives in src/eval, not in a folder of its own, because its evaluation is the engine's own: the
// query parser (query.ts), the answer bodies (bodies.ts) and the per-flag caches of those bodies
// (engine.ts). It is also the route set of a pool or batcher that is given none (unit tests, benches).
//
// Its requests in the batch (protocol.ts):
//
//   route          id           query              extra
//   kRouteFlag     flag id      raw query string   (empty)
//   kRouteProject  project id   raw query string   (empty)
import type { HttpRequest, TemplatedApp } from 'uWebSockets.js';
import { trackAbort, type PendingResponse } from '../http/http.js';
import { kInvalidMinRevision, kMinRevisionHeader, minRevisionOf } from '../http/revisions.js';
import { registerRoutes } from '../routes/route-table.js';
import { kRouteFlag, kRouteProject, type Metrics } from '../metrics/metrics.js';
import { kInternalErrorBody, kInvalidMinRevisionBody, kOverloadedBody, kRevisionNotReachedBody } from './bodies.js';
import type { EvalRoutesSpec, EvalQueue, EvalRoutes } from './routes.js';
import type { Route } from './protocol.js';

export const kEvaluationApiRoutes: EvalRoutesSpec = {
  routes: [kRouteFlag, kRouteProject],
  workerModule: new URL('./evaluation-api-evaluator.js', import.meta.url).href,
  internalErrorBody: kInternalErrorBody,
  revisionNotReachedBody: kRevisionNotReachedBody,
};

/** `metrics`: where a refused (503) request is counted; null when metrics are off. */
export function evaluationApiRoutes(metrics: Metrics | null): EvalRoutes {
  return {
    ...kEvaluationApiRoutes,
    register(app: TemplatedApp, queue: EvalQueue) {
      // Read everything off `req` first (it is stack-allocated), register onAborted, then hand off.
      // Per request the main thread allocates only what uWS makes unavoidable: the id and query strings,
      // and the onAborted callback (uWS calls it without arguments, so it must close over `res`). The
      // strings are copied into the batch buffer at once; nothing is parsed here but Flagwire-Min-Revision,
      // whose look-up is one header scan, and whose absence ('') is parsed without allocating.
      const handle = (res: PendingResponse, req: HttpRequest, route: Route): void => {
        const id = req.getParameter(0) ?? '';
        const query = req.getQuery() ?? '';
        const minRevision = minRevisionOf(req.getHeader(kMinRevisionHeader));
        trackAbort(res);
        if (minRevision === kInvalidMinRevision) {
          metrics?.request(route, 400);
          queue.refuse(res, 400, kInvalidMinRevisionBody);
        } else if (!queue.add(res, route, id, query, '', minRevision)) {
          metrics?.request(route, 503);
          queue.refuse(res, 503, kOverloadedBody, true);
        }
      };
      registerRoutes(app, {
        evaluateProject: (res, req) => handle(res, req, kRouteProject),
        evaluateFlag: (res, req) => handle(res, req, kRouteFlag),
      });
    },
  };
}

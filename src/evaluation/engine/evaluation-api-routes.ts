// The Evaluation API's evaluation route set (spec: Evaluation API; design §1-§2): GET /v1/flags/{flag_id} and
// GET /v1/flags/project/{project_id}. No credentials. The main thread only routes: it copies the id and
// the raw query string into the current batch (batcher.ts) and the eval workers parse, read the store
// and evaluate (evaluation-api-evaluator.ts, engine.ts).
//
// It lives in src/evaluation/engine, not in a folder of its own, because its evaluation is the engine's own: the
// query parser (query.ts), the answer bodies (bodies.ts) and the per-flag caches of those bodies
// (engine.ts). A unit test's or bench's pool and batcher are given its spec (evaluationApiSpec).
//
// Its requests in the batch (protocol.ts):
//
//   route            id           query              extra
//   evaluateFlag     flag id      raw query string   (empty)
//   evaluateProject  project id   raw query string   (empty)
import type { HttpRequest, TemplatedApp } from 'uWebSockets.js';
import { trackAbort, type PendingResponse } from '../../http/http.js';
import { kInvalidMinRevision, kMinRevisionKey, minRevisionOf } from '../../http/revisions.js';
import { ErrorBody } from '../../error-schemas.js';
import { EvalFlag, EvalFlagList } from '../../model/eval-shapes.js';
import { json, kEvalErrors, kEvalParams, pathParam } from '../../routes/openapi-parts.js';
import { registerRoutes, type RouteCounts, type RouteDeclaration, type RouteNumbers } from '../../routes/route-table.js';
import { kBatchTimedOutBody, kInternalErrorBody, kInvalidMinRevisionBody, kOverloadedBody, kRevisionNotReachedBody } from './bodies.js';
import type { EvalRoutesSpec, EvalQueue, EvalRoutes } from './routes.js';
import type { Route } from './protocol.js';

/** Its routes' declarations (the evaluation capability lists them: src/evaluation/capability.ts). */
export const kEvaluationApiRoutes = {
  evaluateFlag: {
    method: 'get',
    pattern: '/v1/flags/:flag_id',
    auth: 'none',
    docs: {
      operationId: 'evaluateFlag',
      tag: 'Evaluation API',
      summary: 'Evaluate one flag',
      parameters: [pathParam('flag_id', 'Flag id'), ...kEvalParams],
      responses: {
        '200': json(EvalFlag, "The flag's value for this caller"),
        ...kEvalErrors,
        '403': json(ErrorBody, "Forbidden: the flag applies an audience and its organisation's plan has no audiences"),
      },
    },
  },
  evaluateProject: {
    method: 'get',
    pattern: '/v1/flags/project/:project_id',
    auth: 'none',
    docs: {
      operationId: 'evaluateProject',
      tag: 'Evaluation API',
      summary: 'Evaluate every flag of a project',
      parameters: [pathParam('project_id', 'Project id'), ...kEvalParams],
      responses: { '200': json(EvalFlagList, 'Every flag, in creation order'), ...kEvalErrors },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;

/** Its numbers, in the order the set's worker module reads them (evaluation-api-evaluator.ts: the flag's first). */
export type EvaluationApiNumbers = RouteNumbers<typeof kEvaluationApiRoutes>;

/**
 * What evaluation knows of the set on both threads, given the routes' numbers (src/all-routes.ts
 * derives them; a pool or batcher of a unit test or bench is given the same).
 */
export function evaluationApiSpec(numbers: EvaluationApiNumbers): EvalRoutesSpec {
  return {
    routes: [numbers.evaluateFlag, numbers.evaluateProject],
    workerModule: new URL('./evaluation-api-evaluator.js', import.meta.url).href,
    internalErrorBody: kInternalErrorBody,
    revisionNotReachedBody: kRevisionNotReachedBody,
    batchTimedOutBody: kBatchTimedOutBody,
  };
}

/** `metrics`: where a refused (400, 503) request is counted; null when metrics are off. */
export function evaluationApiRoutes(metrics: RouteCounts | null, numbers: EvaluationApiNumbers): EvalRoutes {
  const { evaluateFlag: flagRoute, evaluateProject: projectRoute } = numbers;
  return {
    ...evaluationApiSpec(numbers),
    register(app: TemplatedApp, queue: EvalQueue) {
      // Read everything off `req` first (it is stack-allocated), register onAborted, then hand off.
      // Per request the main thread allocates only what uWS makes unavoidable: the id and query strings,
      // and the onAborted callback (uWS calls it without arguments, so it must close over `res`). The
      // strings are copied into the batch buffer at once; nothing is parsed here but Flagwire-Min-Revision,
      // whose look-up is one header scan (its name as bytes: src/http/header-keys.ts), and whose absence
      // ('') is parsed without allocating.
      const handle = (res: PendingResponse, req: HttpRequest, route: Route): void => {
        const id = req.getParameter(0) ?? '';
        const query = req.getQuery() ?? '';
        const minRevision = minRevisionOf(req.getHeader(kMinRevisionKey));
        trackAbort(res);
        if (minRevision === kInvalidMinRevision) {
          metrics?.request(route, 400);
          queue.refuse(res, 400, kInvalidMinRevisionBody);
        } else if (!queue.add(res, route, id, query, '', minRevision)) {
          metrics?.request(route, 503);
          queue.refuse(res, 503, kOverloadedBody, true);
        }
      };
      registerRoutes(app, kEvaluationApiRoutes, {
        evaluateProject: (res, req) => handle(res, req, projectRoute),
        evaluateFlag: (res, req) => handle(res, req, flagRoute),
      });
    },
  };
}

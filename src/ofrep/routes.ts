// OFREP's evaluation route set (src/eval-engine/routes.ts), given to the evaluation service by the
// server's start-up. Main thread: read the POST body (1 MiB cap, within the process's body budget) and
// put the request into the same evaluation batch as GET /v1/flags/{id} (src/eval-engine/batcher.ts). Nothing
// is parsed here: the eval workers parse the body and evaluate (ofrep-evaluator.ts, evaluate.ts).
//
// Its requests in the batch (src/eval-engine/protocol.ts):
//
//   route       id                          query              extra
//   ofrepFlag   flag key                    POST body (JSON)   X-Flagwire-Project header (may be empty)
//   ofrepBulk   X-Flagwire-Project header   POST body (JSON)   If-None-Match header
import type { HttpRequest, TemplatedApp } from 'uWebSockets.js';
import { type QueueRefusals, queueWithBody } from '../eval-engine/queued-body.js';
import type { EvalQueue, EvalRoutes } from '../eval-engine/routes.js';
import type { Route } from '../eval-engine/protocol.js';
import { kMaxBodyBytes, type BodyBudget } from '../http/body.js';
import { headerKey, kContentLengthKey, kIfNoneMatchKey } from '../http/header-keys.js';
import type { PendingResponse } from '../http/http.js';
import { kInvalidMinRevision, kInvalidMinRevisionDetail, kMinRevisionKey, minRevisionOf } from '../http/revisions.js';
import {
  OfrepBulkFailure,
  OfrepBulkSuccess,
  OfrepEvaluationFailure,
  OfrepEvaluationRequest,
  OfrepEvaluationSuccess,
  OfrepFlagNotFound,
} from '../model/ofrep-schemas.js';
import { json, kEtag, kOfrepErrors, kProjectHeader, pathParam, queryParam } from '../routes/openapi-parts.js';
import { registerRoutes, type RouteCounts, type RouteDeclaration, type RouteNumbers } from '../routes/route-table.js';
import {
  kOfrepBusyBody,
  kOfrepInternalErrorBody,
  kOfrepOverloadedBody,
  kOfrepRevisionNotReachedBody,
  ofrepFailureBody,
} from './evaluate.js';

/** Its routes' declarations (the evaluation capability lists them: src/evaluation/capability.ts). */
export const kOfrepRoutes = {
  ofrepFlag: {
    method: 'post',
    pattern: '/ofrep/v1/evaluate/flags/:key',
    auth: 'none',
    docs: {
      operationId: 'ofrepEvaluateFlag',
      tag: 'OFREP',
      summary: 'OpenFeature Remote Evaluation Protocol: one flag',
      parameters: [pathParam('key', "Flag id; or, with X-Flagwire-Project, the flag's name in that project"), kProjectHeader],
      request: { schema: OfrepEvaluationRequest, required: false },
      responses: {
        '200': json(OfrepEvaluationSuccess, 'Evaluated'),
        '400': json(OfrepEvaluationFailure, 'PARSE_ERROR, INVALID_CONTEXT, TARGETING_KEY_MISSING or GENERAL'),
        '404': json(OfrepFlagNotFound, 'FLAG_NOT_FOUND'),
        ...kOfrepErrors,
      },
    },
  },
  ofrepBulk: {
    method: 'post',
    pattern: '/ofrep/v1/evaluate/flags',
    auth: 'none',
    docs: {
      operationId: 'ofrepEvaluateFlags',
      tag: 'OFREP',
      summary: 'OpenFeature Remote Evaluation Protocol: every flag of a project',
      parameters: [
        { ...kProjectHeader, required: true },
        { name: 'If-None-Match', in: 'header', schema: { type: 'string' }, description: 'ETag of a previous answer: 304 when unchanged' },
        queryParam(
          'flagConfigEtag',
          'Sent by providers after a refetchEvaluation event (ADR-0008); accepted and not needed: answers are always current',
        ),
        queryParam('flagConfigLastModified', 'Sent by providers after a change event (ADR-0008); accepted and not needed'),
      ],
      request: { schema: OfrepEvaluationRequest, required: false },
      responses: {
        '200': json(OfrepBulkSuccess, 'Evaluated', kEtag),
        '304': { description: 'Not modified: the If-None-Match ETag is still current', headers: kEtag },
        '400': json(OfrepBulkFailure, 'PARSE_ERROR, INVALID_CONTEXT or GENERAL (missing or unknown project)'),
        ...kOfrepErrors,
      },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;

export interface OfrepRoutesOptions {
  /** The credential-free share of the process's request-body budget: OFREP bodies are read from it. */
  bodies: BodyBudget;
  /** Where refused (400, 413, 503) requests are counted; null when metrics are off. */
  metrics: RouteCounts | null;
  /** Its routes' numbers (src/all-routes.ts derives them). */
  numbers: RouteNumbers<typeof kOfrepRoutes>;
}

export function ofrepRoutes({ bodies, metrics, numbers }: OfrepRoutesOptions): EvalRoutes {
  return {
    // The worker module reads the one flag's first (ofrep-evaluator.ts).
    routes: [numbers.ofrepFlag, numbers.ofrepBulk],
    workerModule: new URL('./ofrep-evaluator.js', import.meta.url).href,
    internalErrorBody: kOfrepInternalErrorBody,
    revisionNotReachedBody: kOfrepRevisionNotReachedBody,
    register: (app, queue) => registerOfrepRoutes(app, queue, bodies, metrics, numbers),
  };
}

const kTooLargeDetails = `The request body is larger than ${kMaxBodyBytes} bytes (1 MiB); send a smaller context.`;
const kBulkTooLarge = ofrepFailureBody(null, 'GENERAL', kTooLargeDetails);
const kBulkRefusals: QueueRefusals = { tooLarge: () => kBulkTooLarge, busy: kOfrepBusyBody, overloaded: kOfrepOverloadedBody };
/** A flag's 413 names the flag. */
const kFlagRefusals: QueueRefusals = { ...kBulkRefusals, tooLarge: (id) => ofrepFailureBody(id, 'GENERAL', kTooLargeDetails) };
const kBulkInvalidMinRevision = ofrepFailureBody(null, 'GENERAL', kInvalidMinRevisionDetail);
/** X-Flagwire-Project as bytes: read on every OFREP request (src/http/header-keys.ts). */
const kProjectKey = headerKey('x-flagwire-project');

function registerOfrepRoutes(
  app: TemplatedApp,
  queue: EvalQueue,
  bodies: BodyBudget,
  metrics: RouteCounts | null,
  { ofrepFlag: flagRoute, ofrepBulk: bulkRoute }: OfrepRoutesOptions['numbers'],
): void {
  const parts = { queue, bodies, metrics };
  // Read everything off `req` first (stack-allocated), then the body (which attaches onAborted).
  const handle = (res: PendingResponse, route: Route, id: string, extra: string, contentLength: string, rawMinRevision: string): void => {
    const minRevision = minRevisionOf(rawMinRevision);
    if (minRevision === kInvalidMinRevision) {
      metrics?.request(route, 400);
      // Answered from the headers: the body is drained, or the connection closed when it cannot be
      // (closesConnection, src/http/http.ts).
      const body = route === flagRoute ? ofrepFailureBody(id, 'GENERAL', kInvalidMinRevisionDetail) : kBulkInvalidMinRevision;
      queue.refuse(res, 400, body);
      return;
    }
    // The batcher copies the body into its batch (or, for a request that waits for its revision, keeps a
    // copy), where its own byte bound (64 MiB) covers it.
    queueWithBody(res, contentLength, route, id, extra, minRevision, parts, route === flagRoute ? kFlagRefusals : kBulkRefusals);
  };

  registerRoutes(app, kOfrepRoutes, {
    ofrepFlag: (res: PendingResponse, req: HttpRequest) => {
      const minRevision = req.getHeader(kMinRevisionKey);
      handle(res, flagRoute, req.getParameter(0) ?? '', req.getHeader(kProjectKey), req.getHeader(kContentLengthKey), minRevision);
    },
    // Bulk: the batch request's id slot holds the project (header), its extra slot If-None-Match.
    ofrepBulk: (res: PendingResponse, req: HttpRequest) => {
      const project = req.getHeader(kProjectKey);
      const minRevision = req.getHeader(kMinRevisionKey);
      handle(res, bulkRoute, project, req.getHeader(kIfNoneMatchKey), req.getHeader(kContentLengthKey), minRevision);
    },
  });
}

// OFREP's evaluation route set (src/evaluation/engine/routes.ts), given to the evaluation service by the
// server's start-up. Main thread: read the POST body (the evaluation body cap, within the process's body
// budget and the client address's evaluation bytes per second: src/evaluation/engine/queued-body.ts) and put
// the request into the same evaluation batch as GET /v1/flags/{id} (src/evaluation/engine/batcher.ts). Nothing
// is parsed here: the eval workers parse the body and evaluate (ofrep-evaluator.ts, evaluate.ts).
//
// Its requests in the batch (src/evaluation/engine/protocol.ts):
//
//   route       id                          query              extra
//   ofrepFlag   flag key                    POST body (JSON)   X-Flagwire-Project header (may be empty)
//   ofrepBulk   X-Flagwire-Project header   POST body (JSON)   If-None-Match header
import type { HttpRequest, TemplatedApp } from 'uWebSockets.js';
import type { Clock } from '../clock.js';
import { kEvalBodyTooFast, kEvalBodyTooLarge, type QueueRefusals, queueWithBody } from '../evaluation/engine/queued-body.js';
import type { EvalQueue, EvalRoutes } from '../evaluation/engine/routes.js';
import type { Route } from '../evaluation/engine/protocol.js';
import type { BodyBudget } from '../http/body.js';
import type { TrustedProxies } from '../http/client-address.js';
import { headerKey, kContentLengthKey, kIfNoneMatchKey } from '../http/header-keys.js';
import type { PendingResponse } from '../http/http.js';
import type { RateLimiter } from '../http/rate-limit.js';
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
  kOfrepBatchTimedOutBody,
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
  /** Each credential's evaluation body bytes per second: OFREP's are charged to the client address (it has no credential). */
  evalBytes: RateLimiter;
  clock: Clock;
  /** Whose X-Forwarded-For names the client (config.ts trustedProxies); null: the TCP peer is the client. */
  proxies: TrustedProxies | null;
  /** Where refused (400, 413, 429, 503) requests are counted; null when metrics are off. */
  metrics: RouteCounts | null;
  /** Its routes' numbers (src/all-routes.ts derives them). */
  numbers: RouteNumbers<typeof kOfrepRoutes>;
}

export function ofrepRoutes(options: OfrepRoutesOptions): EvalRoutes {
  return {
    // The worker module reads the one flag's first (ofrep-evaluator.ts).
    routes: [options.numbers.ofrepFlag, options.numbers.ofrepBulk],
    workerModule: new URL('./ofrep-evaluator.js', import.meta.url).href,
    internalErrorBody: kOfrepInternalErrorBody,
    revisionNotReachedBody: kOfrepRevisionNotReachedBody,
    batchTimedOutBody: kOfrepBatchTimedOutBody,
    register: (app, queue) => registerOfrepRoutes(app, queue, options),
  };
}

const kBulkTooLarge = ofrepFailureBody(null, 'GENERAL', kEvalBodyTooLarge);
const kBulkRefusals: QueueRefusals = {
  tooLarge: () => kBulkTooLarge,
  tooFast: ofrepFailureBody(null, 'GENERAL', kEvalBodyTooFast),
  busy: kOfrepBusyBody,
  overloaded: kOfrepOverloadedBody,
};
/** A flag's 413 names the flag. */
const kFlagRefusals: QueueRefusals = { ...kBulkRefusals, tooLarge: (id) => ofrepFailureBody(id, 'GENERAL', kEvalBodyTooLarge) };
const kBulkInvalidMinRevision = ofrepFailureBody(null, 'GENERAL', kInvalidMinRevisionDetail);
/** X-Flagwire-Project as bytes: read on every OFREP request (src/http/header-keys.ts). */
const kProjectKey = headerKey('x-flagwire-project');

function registerOfrepRoutes(
  app: TemplatedApp,
  queue: EvalQueue,
  { bodies, evalBytes, clock, proxies, metrics, numbers }: OfrepRoutesOptions,
): void {
  const { ofrepFlag: flagRoute, ofrepBulk: bulkRoute } = numbers;
  const parts = { queue, bodies, evalBytes, clock, metrics };
  /** The client's address, as the per-IP limits count it, prefixed: a client key sent as a front-end credential cannot name it. */
  const addressOf = (res: PendingResponse, req: HttpRequest): string => {
    const peer = Buffer.from(res.getRemoteAddressAsText()).toString();
    return `a${proxies === null ? peer : proxies.clientAddress(peer, req)}`;
  };
  // Read everything off `req` first (stack-allocated), then the body (which attaches onAborted).
  const handle = (
    res: PendingResponse,
    route: Route,
    id: string,
    extra: string,
    contentLength: string,
    rawMinRevision: string,
    address: string,
  ): void => {
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
    queueWithBody(res, contentLength, route, id, extra, minRevision, address, parts, route === flagRoute ? kFlagRefusals : kBulkRefusals);
  };

  registerRoutes(app, kOfrepRoutes, {
    ofrepFlag: (res: PendingResponse, req: HttpRequest) => {
      const minRevision = req.getHeader(kMinRevisionKey);
      const address = addressOf(res, req);
      handle(res, flagRoute, req.getParameter(0) ?? '', req.getHeader(kProjectKey), req.getHeader(kContentLengthKey), minRevision, address);
    },
    // Bulk: the batch request's id slot holds the project (header), its extra slot If-None-Match.
    ofrepBulk: (res: PendingResponse, req: HttpRequest) => {
      const project = req.getHeader(kProjectKey);
      const minRevision = req.getHeader(kMinRevisionKey);
      const address = addressOf(res, req);
      handle(res, bulkRoute, project, req.getHeader(kIfNoneMatchKey), req.getHeader(kContentLengthKey), minRevision, address);
    },
  });
}

// OFREP's evaluation route set (src/eval/routes.ts), given to the evaluation service by the
// server's start-up. Main thread: read the POST body (1 MiB cap, within the process's body budget) and
// put the request into the same evaluation batch as GET /v1/flags/{id} (src/eval/batcher.ts). Nothing
// is parsed here: the eval workers parse the body and evaluate (ofrep-evaluator.ts, evaluate.ts).
//
// Its requests in the batch (src/eval/protocol.ts):
//
//   route            id                          query              extra
//   kRouteOfrepFlag  flag key                    POST body (JSON)   X-Flagwire-Project header (may be empty)
//   kRouteOfrepBulk  X-Flagwire-Project header   POST body (JSON)   If-None-Match header
import type { HttpRequest, TemplatedApp } from 'uWebSockets.js';
import type { EvalQueue, EvalRoutes } from '../eval/routes.js';
import type { Route } from '../eval/protocol.js';
import { kMaxBodyBytes, type BodyBudget } from '../http/body.js';
import type { PendingResponse } from '../http/http.js';
import { kInvalidMinRevision, kInvalidMinRevisionDetail, kMinRevisionHeader, minRevisionOf } from '../http/revisions.js';
import { registerRoutes } from '../routes/route-table.js';
import { kRouteOfrepBulk, kRouteOfrepFlag, type Metrics } from '../metrics/metrics.js';
import {
  kOfrepBusyBody,
  kOfrepInternalErrorBody,
  kOfrepOverloadedBody,
  kOfrepRevisionNotReachedBody,
  ofrepFailureBody,
} from './evaluate.js';

export interface OfrepRoutesOptions {
  /** The credential-free share of the process's request-body budget: OFREP bodies are read from it. */
  bodies: BodyBudget;
  /** Where refused (413, 503) requests are counted; null when metrics are off. */
  metrics: Metrics | null;
}

export function ofrepRoutes({ bodies, metrics }: OfrepRoutesOptions): EvalRoutes {
  return {
    routes: [kRouteOfrepFlag, kRouteOfrepBulk],
    workerModule: new URL('./ofrep-evaluator.js', import.meta.url).href,
    internalErrorBody: kOfrepInternalErrorBody,
    revisionNotReachedBody: kOfrepRevisionNotReachedBody,
    register: (app, queue) => registerOfrepRoutes(app, queue, bodies, metrics),
  };
}

const kTooLargeDetails = `The request body is larger than ${kMaxBodyBytes} bytes (1 MiB); send a smaller context.`;
const kBulkTooLarge = ofrepFailureBody(null, 'GENERAL', kTooLargeDetails);
const kBulkInvalidMinRevision = ofrepFailureBody(null, 'GENERAL', kInvalidMinRevisionDetail);

function registerOfrepRoutes(app: TemplatedApp, queue: EvalQueue, bodies: BodyBudget, metrics: Metrics | null): void {
  // Read everything off `req` first (stack-allocated), then the body (which attaches onAborted).
  const handle = (res: PendingResponse, route: Route, id: string, extra: string, contentLength: string, rawMinRevision: string): void => {
    const minRevision = minRevisionOf(rawMinRevision);
    if (minRevision === kInvalidMinRevision) {
      metrics?.request(route, 400);
      // The body is not read: close the connection after the answer.
      const body = route === kRouteOfrepFlag ? ofrepFailureBody(id, 'GENERAL', kInvalidMinRevisionDetail) : kBulkInvalidMinRevision;
      queue.refuse(res, 400, body, false, true);
      return;
    }
    bodies.read(res, contentLength, (result) => {
      if (result.ok) {
        let accepted: boolean;
        try {
          accepted = queue.add(res, route, id, result.body, extra, minRevision);
        } finally {
          // The batcher copied the body into its batch (or, for a request that waits for its revision,
          // kept a copy), where its own byte bound (64 MiB) covers it.
          result.release();
        }
        if (accepted) return;
        metrics?.request(route, 503);
        queue.refuse(res, 503, kOfrepOverloadedBody, true);
      } else if (result.reason === 'busy') {
        metrics?.request(route, 503);
        // The rest of the body is not read: close the connection after the answer.
        queue.refuse(res, 503, kOfrepBusyBody, true, true);
      } else {
        metrics?.request(route, 413);
        const body = route === kRouteOfrepFlag ? ofrepFailureBody(id, 'GENERAL', kTooLargeDetails) : kBulkTooLarge;
        queue.refuse(res, 413, body, false, true);
      }
    });
  };

  registerRoutes(app, {
    ofrepFlag: (res: PendingResponse, req: HttpRequest) => {
      const minRevision = req.getHeader(kMinRevisionHeader);
      handle(
        res,
        kRouteOfrepFlag,
        req.getParameter(0) ?? '',
        req.getHeader('x-flagwire-project'),
        req.getHeader('content-length'),
        minRevision,
      );
    },
    // Bulk: the batch request's id slot holds the project (header), its extra slot If-None-Match.
    ofrepBulk: (res: PendingResponse, req: HttpRequest) => {
      const project = req.getHeader('x-flagwire-project');
      const minRevision = req.getHeader(kMinRevisionHeader);
      handle(res, kRouteOfrepBulk, project, req.getHeader('if-none-match'), req.getHeader('content-length'), minRevision);
    },
  });
}

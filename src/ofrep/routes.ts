// Main-thread side of OFREP: read the POST body (1 MiB cap, within the process's body budget) and put
// the request into the same evaluation batch as GET /v1/flags/{id} (src/eval/batcher.ts). Nothing is
// parsed here: the eval workers parse the body and evaluate (evaluate.ts). Registered by the evaluation
// service.
import type { HttpRequest, TemplatedApp } from 'uWebSockets.js';
import { kMaxBodyBytes, type BodyBudget } from '../http/body.js';
import { send, type PendingResponse } from '../http/http.js';
import { kRouteOfrepBulk, kRouteOfrepFlag, type Route } from '../eval/protocol.js';
import type { Metrics } from '../metrics/metrics.js';
import { kOfrepBusyBody, kOfrepOverloadedBody, ofrepFailureBody } from './evaluate.js';

/** The batcher's add(): false when the queue is full or the server is stopping. */
export type SubmitEvaluation = (res: PendingResponse, route: Route, id: string, body: Uint8Array, extra: string) => boolean;

const kRetryAfter = [['Retry-After', '1']] as const;
const kTooLargeDetails = `The request body is larger than ${kMaxBodyBytes} bytes (1 MiB); send a smaller context.`;
const kBulkTooLarge = ofrepFailureBody(null, 'GENERAL', kTooLargeDetails);

export function registerOfrepRoutes(app: TemplatedApp, submit: SubmitEvaluation, bodies: BodyBudget, metrics: Metrics | null): void {
  // Read everything off `req` first (stack-allocated), then the body (which attaches onAborted).
  const handle = (res: PendingResponse, route: Route, id: string, extra: string, contentLength: string): void => {
    bodies.read(res, contentLength, (result) => {
      if (result.ok) {
        const accepted = submit(res, route, id, result.body, extra);
        // The batcher copied the body into its batch, where its own byte bound (64 MiB) covers it.
        result.release();
        if (accepted) return;
        metrics?.request(route, 503);
        send(res, 503, kOfrepOverloadedBody, 'application/json', kRetryAfter);
      } else if (result.reason === 'busy') {
        metrics?.request(route, 503);
        // The rest of the body is not read: close the connection after the answer.
        send(res, 503, kOfrepBusyBody, 'application/json', kRetryAfter, true);
      } else {
        metrics?.request(route, 413);
        const body = route === kRouteOfrepFlag ? ofrepFailureBody(id, 'GENERAL', kTooLargeDetails) : kBulkTooLarge;
        send(res, 413, body, 'application/json', undefined, true);
      }
    });
  };

  app.post('/ofrep/v1/evaluate/flags/:key', (res: PendingResponse, req: HttpRequest) => {
    handle(res, kRouteOfrepFlag, req.getParameter(0) ?? '', req.getHeader('x-flagwire-project'), req.getHeader('content-length'));
  });
  // Bulk: the batch request's id slot holds the project (header), its extra slot If-None-Match.
  app.post('/ofrep/v1/evaluate/flags', (res: PendingResponse, req: HttpRequest) => {
    const project = req.getHeader('x-flagwire-project');
    handle(res, kRouteOfrepBulk, project, req.getHeader('if-none-match'), req.getHeader('content-length'));
  });
}

// A route set's request with a body, from uWS to the evaluation queue (routes.ts EvalQueue): the body read
// within its share of the body budget, queued (the batcher copies it into its batch, so the reservation
// is released at once), or answered with the route set's own refusal: over the cap 413, the budget spent
// 503, the queue full 503. A refused body that is not drained (src/http/body.ts kDrainBytes) closes the
// connection after the answer. One home for OFREP's and Unleash's front-end API's POST routes.
import type { BodyBudget } from '../http/body.js';
import type { PendingResponse } from '../http/http.js';
import type { RouteCounts } from '../routes/route-table.js';
import type { Route } from './protocol.js';
import type { EvalQueue } from './routes.js';

/** The bodies a route set answers a request it cannot queue with, in its own envelope. */
export interface QueueRefusals {
  /** Over 1 MiB (413): made only then, so a route whose refusal names the request's id pays nothing otherwise. */
  readonly tooLarge: (id: string) => Uint8Array;
  /** The body budget spent (503, Retry-After). */
  readonly busy: Uint8Array;
  /** The queue full or the server stopping (503, Retry-After). */
  readonly overloaded: Uint8Array;
}

/**
 * Reads the body of a request of `route` and queues it (queue.add with `id`, `extra` and `minRevision`);
 * refusals counted in `metrics`. Parts passed as they are, not as a closure: one allocation per request
 * (the body reader's callback), as before this was shared.
 */
export function queueWithBody(
  res: PendingResponse,
  contentLength: string,
  route: Route,
  id: string,
  extra: string,
  minRevision: number,
  {
    queue,
    bodies,
    metrics,
  }: { readonly queue: EvalQueue; readonly bodies: BodyBudget; readonly metrics: Pick<RouteCounts, 'request'> | null },
  refusals: QueueRefusals,
): void {
  bodies.read(res, contentLength, (result) => {
    if (result.ok) {
      let accepted: boolean;
      try {
        accepted = queue.add(res, route, id, result.body, extra, minRevision);
      } finally {
        result.release();
      }
      if (accepted) return;
      metrics?.request(route, 503);
      queue.refuse(res, 503, refusals.overloaded, true);
    } else if (result.reason === 'busy') {
      metrics?.request(route, 503);
      queue.refuse(res, 503, refusals.busy, true, result.closes);
    } else {
      metrics?.request(route, 413);
      queue.refuse(res, 413, refusals.tooLarge(id), false, result.closes);
    }
  });
}

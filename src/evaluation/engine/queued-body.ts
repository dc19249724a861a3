// A route set's request with a body, from uWS to the evaluation queue (routes.ts EvalQueue): the body read
// within its share of the body budget, queued (the batcher copies it into its batch, so the reservation
// is released at once), or answered with the route set's own refusal: over the evaluation body cap 413,
// its credential's bytes per second spent 429, the budget spent 503, the queue full 503. A refused body
// that is not drained (src/http/body.ts kDrainBytes) closes the connection after the answer. One home for
// OFREP's and Unleash's front-end API's POST routes.
//
// The cap and the credential's bytes are checked here, on the front-end thread, from the declared
// Content-Length before anything of the body is read (a chunked body's bytes once it is read): a body no
// context within the bound fits in (context-bounds.ts kMaxContextBodyBytes), or one key's flood of
// large bodies, never reaches a worker, whose time every project's evaluations share. Only a body's
// bytes past kUnchargedBodyBytes are charged: an ordinary context costs a worker what any request does,
// whatever the rate, so a busy key of small contexts is never refused for its bytes.
import type { Clock } from '../../clock.js';
import type { BodyBudget } from '../../http/body.js';
import type { PendingResponse } from '../../http/http.js';
import type { RateLimiter } from '../../http/rate-limit.js';
import type { RouteCounts } from '../../routes/route-table.js';
import { kMaxContextBodyBytes } from './context-bounds.js';
import type { Route } from './protocol.js';
import type { EvalQueue } from './routes.js';

/** The bodies a route set answers a request it cannot queue with, in its own envelope. */
export interface QueueRefusals {
  /** Over kMaxContextBodyBytes (413): made only then, so a route whose refusal names the request's id pays nothing otherwise. */
  readonly tooLarge: (id: string) => Uint8Array;
  /** Its credential's evaluation body bytes per second spent (429, Retry-After). */
  readonly tooFast: Uint8Array;
  /** The body budget spent (503, Retry-After). */
  readonly busy: Uint8Array;
  /** The queue full or the server stopping (503, Retry-After). */
  readonly overloaded: Uint8Array;
}

/** What every request with a body of a route set is read and queued with. */
export interface QueueParts {
  readonly queue: EvalQueue;
  /** The credential-free share of the process's body budget. */
  readonly bodies: BodyBudget;
  /** Each credential's evaluation body bytes per second (src/http/body.ts BodyBudgets.evalBytes). */
  readonly evalBytes: RateLimiter;
  readonly clock: Clock;
  readonly metrics: Pick<RouteCounts, 'request'> | null;
}

/**
 * A body's bytes not charged to its credential: an ordinary context, and as much as a GET's context, which
 * travels in uWS's 4 KiB request head, uncharged.
 */
export const kUnchargedBodyBytes = 4096;

/** Why a body past the evaluation cap is refused: every route set's 413 says the same. */
export const kEvalBodyTooLarge =
  `The request body is larger than ${kMaxContextBodyBytes} bytes, more than any context within the bound takes: ` +
  'send only the attributes your flags read (docs/operations.md: Evaluation work).';

/** Why a credential's body is refused for its rate: every route set's 429 says the same. */
export const kEvalBodyTooFast =
  'This client key (on OFREP, this client address) sent more bytes of large evaluation bodies in the last second ' +
  'than its share (FLAGWIRE_EVAL_BODY_BYTES_PER_SECOND); the body was not read. Retry after the Retry-After seconds, ' +
  'and send only the attributes your flags read (docs/operations.md: Evaluation work).';

/**
 * Reads the body of a request of `route` and queues it (queue.add with `id`, `extra` and `minRevision`),
 * its bytes charged to `credential`; refusals counted in `parts.metrics`. Parts passed as they are, not as
 * a closure: one allocation per request (the body reader's callback), as before this was shared.
 */
export function queueWithBody(
  res: PendingResponse,
  contentLength: string,
  route: Route,
  id: string,
  extra: string,
  minRevision: number,
  credential: string,
  parts: QueueParts,
  refusals: QueueRefusals,
): void {
  const { queue, bodies, evalBytes, clock, metrics } = parts;
  // A declared body within the cap is charged before it is read; one past the cap is the reader's 413
  // and charges nothing. (A malformed length is NaN: the reader refuses it.)
  const declared = contentLength === '' ? 0 : Number(contentLength);
  if (declared <= kMaxContextBodyBytes && !charged(evalBytes, clock, credential, declared)) {
    metrics?.request(route, 429);
    // A body within the cap is drained (kDrainBytes): the connection is kept.
    queue.refuse(res, 429, refusals.tooFast, true);
    return;
  }
  bodies.read(
    res,
    contentLength,
    (result) => {
      if (result.ok) {
        let accepted: boolean;
        try {
          // A chunked body is charged once read: its length was not known before.
          const size = result.body.byteLength;
          if (contentLength === '' && !charged(evalBytes, clock, credential, size)) {
            metrics?.request(route, 429);
            queue.refuse(res, 429, refusals.tooFast, true);
            return;
          }
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
    },
    undefined,
    kMaxContextBodyBytes,
  );
}

/** Charges a body of `bytes` to `credential` (only what passes kUnchargedBodyBytes); false when its share is spent. */
function charged(evalBytes: RateLimiter, clock: Clock, credential: string, bytes: number): boolean {
  return bytes <= kUnchargedBodyBytes || evalBytes.take(credential, clock.now(), bytes - kUnchargedBodyBytes);
}

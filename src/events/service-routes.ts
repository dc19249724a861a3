// The events routes (issue 58, item 2; docs/events.md): POST /ofrep/v1/events, Flagwire's batch of
// exposures and outcomes (proposed for OFREP, open-feature/protocol issue 71), and POST /v1/data/collector,
// GO Feature Flag's collector body, which its stock providers send. Both take a client key with the
// `events` use and read the body within the body budget (unless the key's project is refused by the rate:
// then its 429 is answered from the headers, event-counter.ts); the events thread (events-thread.ts) inflates
// it with a bound (body.ts), names each bad event in the answer and counts the rest once (receive.ts),
// and the route answers 200 only once they are on disk.
// Counted on an embedded node and on nodes sharing PostgreSQL; a relay refuses (refuseUnlessCounted says why).
import type { HttpRequest } from 'uWebSockets.js';
import type { ServiceRouteDeps, ServiceRouteSpec } from '../capability/capability.js';
import { ClientKeyAccess, clientKeySecret } from '../client-keys/access.js';
import { type PendingResponse, send } from '../http/http.js';
import { revisionHeaders } from '../http/revisions.js';
import { apiErrors, json } from '../routes/openapi-parts.js';
import { clientAddresses, readServiceBody, sendRefusal } from '../routes/service-route-parts.js';
import { type BatchRefused, refuseUnlessCounted } from './event-counter.js';
import type { BatchFormat } from './events-thread.js';
import { GoffCollectorBody } from './goff-collector.js';
import { HeldRefusals } from './held-refusals.js';
import type { EventsAnswer } from './receive.js';
import { EventBatch, EventsAccepted } from './schemas.js';

const kEventsPath = '/ofrep/v1/events';
const kCollectorPath = '/v1/data/collector';

const kRefusals = apiErrors([400, 401, 403, 404, 413, 429, 503]);

/**
 * The refusals held on this thread, both routes' (a module is one per thread: each front-end thread
 * holds its own, within HeldRefusals' bound), one timer between them.
 */
const held = new HeldRefusals();

export const kEventsRoutes = {
  postEvents: {
    method: 'post',
    pattern: kEventsPath,
    auth: 'clientKey',
    docs: {
      operationId: 'postEvents',
      tag: 'Events',
      summary:
        "Send a batch of exposures and outcomes with a client key (events use): each bad event named, the rest counted once, on disk when answered (Flagwire's extension, proposed for OFREP)",
      waitsForRevision: false,
      parameters: [
        {
          name: 'key',
          in: 'query',
          schema: { type: 'string' },
          description: 'The client key, where Authorization cannot be sent (navigator.sendBeacon); Authorization wins when both are',
        },
      ],
      request: { schema: EventBatch, required: true, alsoTextPlain: true },
      responses: { '200': json(EventsAccepted, 'Counted: how many, and each event refused with why'), ...kRefusals },
    },
    handler: (deps, route) => eventsHandler(deps, route, kEventsPath, 'ofrep', (answer) => answer),
  },
  postGoffCollector: {
    method: 'post',
    pattern: kCollectorPath,
    auth: 'clientKey',
    docs: {
      operationId: 'postGoffCollector',
      tag: 'Events',
      summary:
        "GO Feature Flag's data collector, as its stock providers send it (feature events are exposures, tracking events outcomes), with a client key (events use)",
      waitsForRevision: false,
      request: { schema: GoffCollectorBody, required: true },
      responses: { '200': json(EventsAccepted, 'Counted, as POST /ofrep/v1/events answers, and ingestedContentCount'), ...kRefusals },
    },
    handler: (deps, route) =>
      eventsHandler(deps, route, kCollectorPath, 'goff', (answer) => ({
        ...answer,
        ingestedContentCount: answer.accepted,
      })),
  },
} satisfies Record<string, ServiceRouteSpec>;

function eventsHandler(
  deps: ServiceRouteDeps,
  route: number,
  path: string,
  format: BatchFormat,
  answerOf: (answer: EventsAnswer) => object,
): (res: PendingResponse, req: HttpRequest) => void {
  const access = new ClientKeyAccess(deps.store, deps.authFailures);
  const addressOf = clientAddresses(deps.config);
  const goff = format === 'goff';

  const refuse = (res: PendingResponse, refusal: BatchRefused): number => {
    const retry = refusal.retryAfter === null ? [] : ([['Retry-After', String(refusal.retryAfter)]] as const);
    return sendRefusal(res, refusal.refusal, deps, path, 'events batch', retry);
  };

  const receive = async (bytes: Uint8Array, headers: Headers): Promise<number> => {
    refuseUnlessCounted(deps.config);
    const now = deps.clock.now();
    deps.store.resetReadTxn();
    const key = access.grant(headers.authorization, headers.apiKey, 'events', headers.ip, now);
    const { contentEncoding, contentType } = headers;
    const outcome = await deps.events.receive({ format, bytes, contentEncoding, contentType, key, now }, headers.secret);
    if ('refusal' in outcome) return refuse(headers.res, outcome);
    send(headers.res, 200, JSON.stringify(answerOf(outcome.answer)), 'application/json', revisionHeaders(deps.store.revision()));
    return 200;
  };

  return (res, req) => {
    const authorization = req.getHeader('authorization');
    // navigator.sendBeacon sets no header: the OFREP route takes the client key (public, events only) as ?key= too.
    const apiKey = goff ? req.getHeader('x-api-key') : (req.getQuery('key') ?? '');
    const secret = clientKeySecret(authorization, apiKey);
    // A key whose project the rate refuses is answered from its headers, half a second to a second later
    // (held-refusals.ts: a flood's connections then ask at most twice a second): its body is not read, and the
    // connection stays open. uWS skips the rest of an unread body in its parser, without calling us, and
    // reads the connection's next request after it; closing instead costs the node about twice the CPU
    // per refusal (the reconnections' accepts: bench/RESULTS.md, Costs behind the code's choices) and
    // risks the 429 itself: a
    // socket closed with unread bytes is reset, and a reset may drop the answer before the client reads
    // it. A body never finished holds nothing: uWS's idle timeout closes its connection. (A client may
    // close it itself: Node's fetch, undici, does when the answer comes while it still writes the body.)
    const early = deps.events.refusedBeforeReading(secret, deps.clock.now());
    if (early !== null) {
      held.hold(res, () => deps.metrics?.request(route, refuse(res, early)));
      return;
    }
    const headers: Headers = {
      res,
      ip: addressOf(res, req),
      authorization,
      apiKey,
      secret,
      contentEncoding: req.getHeader('content-encoding'),
      contentType: goff ? req.getHeader('content-type') : beaconAsJson(req.getHeader('content-type')),
    };
    readServiceBody(res, req.getHeader('content-length'), deps, route, (body, release) => {
      // Held until it is counted or refused, then handed back to the budget.
      receive(body, headers)
        .catch((err: unknown) => sendRefusal(res, err, deps, path, 'events batch failed'))
        .then((status) => deps.metrics?.request(route, status))
        .finally(release);
    });
  };
}

/**
 * A text/plain body read as the JSON it holds: navigator.sendBeacon sends a string as
 * text/plain;charset=UTF-8, and a page sending its last batch at unload cannot wait for the CORS
 * preflight another type needs. The body is then read and checked as any other (UTF-8 included).
 */
function beaconAsJson(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase() === 'text/plain' ? 'application/json' : contentType;
}

interface Headers {
  readonly res: PendingResponse;
  readonly ip: string;
  readonly authorization: string;
  readonly apiKey: string;
  /** The client key's secret as sent (clientKeySecret): what the front end's refusals are kept under. */
  readonly secret: string;
  readonly contentEncoding: string;
  readonly contentType: string;
}

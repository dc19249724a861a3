// What the handlers of routes outside /api/v1 (a capability's serviceRoutes: GET /v1/flag-sets/...,
// GET /v1/relay) share: the client's address, behind trusted proxies too, for the lockout; and a refusal
// answered in the spec's envelope, naming the store's revision.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { answerableError, errorEnvelope, FlagwireError, retryAfterSeconds } from '../errors.js';
import { TrustedProxies } from '../http/client-address.js';
import { type BodyBudget, bodyRefusal } from '../http/body.js';
import { type PendingResponse, send } from '../http/http.js';
import { revisionHeaders } from '../http/revisions.js';
import type { RouteCounts } from '../routes/route-table.js';
import type { StoreReader, StoreRevision } from '../store/interfaces.js';

/** spec: Limits. What an address past the per-address rate limit is told, at the Management API and /mcp alike. */
export const kRateLimitedError = new FlagwireError(
  'TOO_MANY_REQUESTS',
  'the Management API allows a limited number of requests per minute per address; wait a minute before retrying',
);
const kRateLimited = Buffer.from(`Too Many Requests: ${kRateLimitedError.detail}.\n`);
export const kRateLimitRetry = ['Retry-After', '60'] as const;

/** The spec's plain 429 for an address past the per-address rate limit, naming the store's `revision`. */
export function sendRateLimited(res: HttpResponse, revision: StoreRevision): void {
  send(res, 429, kRateLimited, 'text/plain; charset=utf-8', revisionHeaders(revision, kRateLimitRetry));
}

/** The client's address of a request, made once per front end: the peer, or the client a trusted proxy names. */
export function clientAddresses(config: Readonly<Config>): (res: HttpResponse, req: HttpRequest) => string {
  const proxies = config.trustedProxies.length === 0 ? null : new TrustedProxies(config.trustedProxies);
  return (res, req) => {
    const peer = Buffer.from(res.getRemoteAddressAsText()).toString();
    return proxies === null ? peer : proxies.clientAddress(peer, req);
  };
}

/**
 * Answers `err` in the spec's envelope (an unexpected one logged as `what`, at `path`), with `headers`
 * beside and, unless `headers` name one, the Retry-After its code asks for (errors.ts retryAfterSeconds);
 * returns the status sent.
 */
export function sendRefusal(
  res: HttpResponse,
  err: unknown,
  deps: { config: Readonly<Config>; log: Logger; store: Pick<StoreReader, 'revision'> },
  path: string,
  what: string,
  headers: readonly (readonly [string, string])[] = [],
): number {
  const error = answerableError(err, (e) => deps.log.error({ err: e, path }, what));
  // A caller's own Retry-After (an events refusal's) stands.
  const retry = headers.some(([name]) => name === 'Retry-After') ? null : retryAfterSeconds(error, deps.config.writeTimeoutMs);
  send(
    res,
    error.status,
    JSON.stringify(errorEnvelope(error, deps.config.docsUrl)),
    'application/json',
    revisionHeaders(deps.store.revision(), ...headers, ...(retry === null ? [] : [['Retry-After', String(retry)] as const])),
  );
  return error.status;
}

/**
 * Reads a service route's request body within `deps.bodies` and hands it to `use` with its release.
 * A body the budget refuses (over 1 MiB: 413; the budget spent: 503) is answered in the spec's envelope
 * and counted under `route`, and the connection closes after it: the rest of the body is not read.
 */
export function readServiceBody(
  res: PendingResponse,
  contentLength: string,
  deps: {
    bodies: BodyBudget;
    config: Readonly<Config>;
    store: Pick<StoreReader, 'revision'>;
    metrics?: Pick<RouteCounts, 'request'> | null;
  },
  route: number,
  use: (body: Buffer, release: () => void) => void,
): void {
  deps.bodies.read(res, contentLength, (result) => {
    if (result.ok) {
      use(result.body, result.release);
      return;
    }
    const refusal = bodyRefusal(result.reason);
    deps.metrics?.request(route, refusal.status);
    const body = JSON.stringify(errorEnvelope(refusal, deps.config.docsUrl));
    send(res, refusal.status, body, 'application/json', revisionHeaders(deps.store.revision()), result.closes);
  });
}

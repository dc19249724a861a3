// spec: CORS. Preflights are answered without a token, for every path.
import { closesConnection, kCorsOrigin, kNoSniff, trackAbort, type PendingResponse } from './http.js';
import { kMinRevisionName } from './revisions.js';

/**
 * spec: CORS, allowed request headers: exactly these on the spec's routes (/api/v1, /v1) and any other.
 * So a page may not send Flagwire-Min-Revision there (docs/decisions.md: Revisions); it reads
 * Flagwire-Revision everywhere (each answer exposes it: the spec says nothing of exposed headers).
 */
const kAllowHeaders = 'Content-Type, Authorization';
/**
 * OFREP from browsers also sends X-Flagwire-Project and If-None-Match (docs/decisions.md: OFREP), and a
 * reconnecting EventSource sends Last-Event-ID (docs/operations.md: Change stream): only the OFREP and
 * stream paths allow them. OFREP's also allow Flagwire-Min-Revision: a page's read-your-writes, and
 * Content-Encoding: a page may gzip its batch of events (POST /ofrep/v1/events).
 */
const kOfrepAllowHeaders = `${kAllowHeaders}, X-Flagwire-Project, If-None-Match, Last-Event-ID, ${kMinRevisionName}, Content-Encoding`;
const kStreamAllowHeaders = `${kAllowHeaders}, Last-Event-ID`;
/**
 * Unleash's front-end API (src/unleash/hosted-routes.ts): what unleash-proxy-client sends, If-None-Match
 * and its own headers (older releases name them with x-).
 */
const kUnleashAllowHeaders =
  `${kAllowHeaders}, If-None-Match, unleash-appname, unleash-connection-id, unleash-sdk, ` +
  'x-unleash-appname, x-unleash-connection-id, x-unleash-sdk';

/** `path`: the request path, read in the handler (uWS's request is gone once it returns). */
export function answerPreflight(res: PendingResponse, path: string): void {
  const allowHeaders = path.startsWith('/ofrep/')
    ? kOfrepAllowHeaders
    : path.startsWith('/v1/stream/')
      ? kStreamAllowHeaders
      : path.startsWith('/api/frontend') || path.startsWith('/api/proxy')
        ? kUnleashAllowHeaders
        : kAllowHeaders;
  // Pipelined preflights to a client that does not read fill the socket: see send().
  if (!res.tracked) trackAbort(res);
  res.cork(() => {
    res.writeStatus('204 No Content');
    res.writeHeader(kCorsOrigin[0], kCorsOrigin[1]);
    res.writeHeader(kNoSniff[0], kNoSniff[1]);
    res.writeHeader('Access-Control-Allow-Methods', 'GET, POST, PATCH, OPTIONS');
    res.writeHeader('Access-Control-Allow-Headers', allowHeaders);
    res.writeHeader('Access-Control-Max-Age', '86400');
    res.endWithoutBody(0, closesConnection(res));
  });
}

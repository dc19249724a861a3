// Response helpers shared by every route: status lines, CORS headers, JSON bodies, corking.
import { STATUS_CODES } from 'node:http';
import type { HttpResponse, TemplatedApp } from 'uWebSockets.js';

// Every status line with its standard reason phrase (Node's table, RFC 9110's words), made once: a status
// Flagwire sends is never written without one.
const kStatusText: Record<number, string> = Object.fromEntries(
  Object.entries(STATUS_CODES).map(([code, reason]) => [Number(code), `${code} ${reason}`]),
);

export function statusLine(status: number): string {
  return kStatusText[status] ?? `${status} Unknown`;
}

/** spec: CORS. Every response allows any origin, without credentials. */
export const kCorsOrigin = ['Access-Control-Allow-Origin', '*'] as const;
/**
 * On every answer, whatever its route or status: a browser must not guess another type than the one
 * sent (a JSON error echoing a client's text, read as HTML or script, could run it).
 */
export const kNoSniff = ['X-Content-Type-Options', 'nosniff'] as const;

/** A response that may be answered after the handler returned: `aborted` is set by onAborted. */
export interface PendingResponse extends HttpResponse {
  aborted?: boolean;
  /** An abort handler is attached (trackAbort). */
  tracked?: boolean;
  /** The front end's shutdown, set for every request by guardDrain (src/http/in-flight.ts). */
  drain?: { readonly draining: boolean };
  /**
   * The request declares a body that no reader has taken, and an answer given now must close the
   * connection rather than drain it (closesUnread, src/http/body.ts). Set by guardFraming for a request
   * with a body, cleared by the body reader, which decides for its own answers from then on.
   */
  unreadBodyCloses?: boolean;
}

/**
 * Whether an answer closes its connection whatever its route: every answer while the front end drains
 * for shutdown, and an answer given before the request's body is read when that body cannot be drained.
 * One home for both, so that no route answering from its headers (a 401, a 404, a bad header) has to
 * remember the body it did not read.
 */
export function closesConnection(res: PendingResponse): boolean {
  return res.drain?.draining === true || res.unreadBodyCloses === true;
}

/**
 * Marks the response aborted when the client goes away; anything answering later checks the flag.
 * `onAbort` runs then too (uWS keeps one abort handler per response, so this is the only place to add one).
 */
export function trackAbort(res: PendingResponse, onAbort?: () => void): void {
  res.tracked = true;
  res.onAborted(() => {
    res.aborted = true;
    onAbort?.();
  });
}

/**
 * Writes a whole response. Safe to call outside the handler's synchronous top: it corks, and does
 * nothing if the client has gone.
 */
export function send(
  res: PendingResponse,
  status: number,
  body: string | Uint8Array,
  contentType = 'application/json',
  headers?: readonly (readonly [string, string])[],
  closeConnection = false,
): void {
  writeResponse(res, status, body, contentType, headers, closeConnection, true);
}

/**
 * As send, without the spec's `Access-Control-Allow-Origin: *`: for the web console, whose pages and
 * endpoints are same-origin only (another site's script must not read them).
 */
export function sendSameOrigin(
  res: PendingResponse,
  status: number,
  body: string | Uint8Array,
  contentType: string,
  headers?: readonly (readonly [string, string])[],
  closeConnection = false,
): void {
  writeResponse(res, status, body, contentType, headers, closeConnection, false);
}

function writeResponse(
  res: PendingResponse,
  status: number,
  body: string | Uint8Array,
  contentType: string,
  headers: readonly (readonly [string, string])[] | undefined,
  closeConnection: boolean,
  cors: boolean,
): void {
  if (res.aborted) return;
  // A body the socket cannot take at once (a client that does not read) leaves the response pending
  // after end(), with the rest buffered until the socket drains or uWS's idle timeout closes it. uWS
  // allows a handler to return with a pending response only if it has an abort handler; without one it
  // ends the whole process ("Returning from a request handler without responding or attaching an
  // abort handler is forbidden"). Answers given inside the handler have none yet.
  if (!res.tracked) trackAbort(res);
  res.aborted = true;
  res.cork(() => {
    res.writeStatus(statusLine(status));
    if (cors) res.writeHeader(kCorsOrigin[0], kCorsOrigin[1]);
    res.writeHeader(kNoSniff[0], kNoSniff[1]);
    res.writeHeader('Content-Type', contentType);
    if (headers) for (const [k, v] of headers) res.writeHeader(k, v);
    res.end(body, closeConnection || closesConnection(res));
  });
}

/**
 * 304 Not Modified with `headers` (ETag among them) and the spec's CORS header. RFC 9110 §15.4.5: no
 * content; uWS writes a Content-Length whenever it is given an argument, so none is given unless the
 * connection closes (0 then: the one length that describes no body).
 */
export function sendNotModified(res: PendingResponse, headers: readonly (readonly [string, string])[]): void {
  if (res.aborted) return;
  if (!res.tracked) trackAbort(res);
  res.aborted = true;
  res.cork(() => {
    res.writeStatus(statusLine(304));
    res.writeHeader(kCorsOrigin[0], kCorsOrigin[1]);
    res.writeHeader(kNoSniff[0], kNoSniff[1]);
    for (const [k, v] of headers) res.writeHeader(k, v);
    if (closesConnection(res)) res.endWithoutBody(0, true);
    else res.endWithoutBody();
  });
}

export function sendJson(res: PendingResponse, status: number, value: unknown, headers?: readonly (readonly [string, string])[]): void {
  send(res, status, JSON.stringify(value), 'application/json', headers);
}

/** A set of routes with resources to release at shutdown (the evaluation pool). */
export interface RouteGroup {
  register(app: TemplatedApp): void;
  close(): Promise<void>;
}

// Request framing that uWebSockets.js accepts but a proxy in front may read differently (request
// smuggling, RFC 9112 §6.3 and §11.2): refused with a 400 before any route sees the request, and the
// connection closed, since the end of this request and the start of the next are in doubt. The same
// look at the two headers marks a request that has a body (PendingResponse's unreadBodyCloses), so that
// an answer given before the body is read knows whether to close (closesConnection, http.ts) without a
// second look on the hot path.
//
// What uWS's parser itself refuses (a Content-Length list or sign, both Transfer-Encoding and
// Content-Length) never reaches a handler; what it accepts and gets wrong does:
//   - several Content-Length headers with different values: uWS frames by the first;
//   - any Transfer-Encoding but exactly `chunked` (`xchunked`, `chunked, identity`, `gzip, chunked`, or
//     a second Transfer-Encoding header): uWS frames all of them as chunked.
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { closesUnread } from './body.js';
import { kContentLengthKey, kTransferEncodingKey } from './header-keys.js';
import type { PendingResponse } from './http.js';
import { interceptRoutes } from './intercept-routes.js';

/** What is wrong with the framing of a request that has a Content-Length or a Transfer-Encoding, or null. */
function framingProblem(req: HttpRequest): string | null {
  let length: string | null = null;
  let encodings = 0;
  let problem: string | null = null;
  req.forEach((name, value) => {
    if (problem !== null) return;
    if (name === 'content-length') {
      if (length !== null && length !== value)
        problem = 'The request has several Content-Length headers with different values; send exactly one.';
      length = value;
    } else if (name === 'transfer-encoding') {
      encodings++;
      if (encodings > 1 || value.trim().toLowerCase() !== 'chunked') {
        problem = 'The request\'s Transfer-Encoding is not supported: send "Transfer-Encoding: chunked" once, or a Content-Length.';
      }
    }
  });
  return problem;
}

/**
 * Guards every route registered on `app` from now on: a request whose framing is in doubt is answered
 * by `refuse` (which must close the connection) and never reaches the route. A request with a body is
 * marked with what an answer before its body is read does to the connection (PendingResponse's
 * unreadBodyCloses). Hot path: a request with neither header (every GET the Evaluation API serves) costs
 * two header look-ups (by bytes: header-keys.ts) and nothing else.
 */
export function guardFraming(app: TemplatedApp, refuse: (res: HttpResponse, problem: string) => void): TemplatedApp {
  return interceptRoutes(app, (_method, _pattern, handler) => (res: PendingResponse, req) => {
    const length = req.getHeader(kContentLengthKey);
    if (length === '' && req.getHeader(kTransferEncodingKey) === '') return handler(res, req);
    const problem = framingProblem(req);
    if (problem !== null) return refuse(res, problem);
    // '' here: chunked, an end not known.
    if (length !== '0') res.unreadBodyCloses = closesUnread(length);
    return handler(res, req);
  });
}

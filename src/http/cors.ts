// spec: CORS. Preflights are answered without a token, for every path.
import { kCorsOrigin, trackAbort, type PendingResponse } from './http.js';

export function answerPreflight(res: PendingResponse): void {
  // Pipelined preflights to a client that does not read fill the socket: see send().
  if (!res.tracked) trackAbort(res);
  res.cork(() => {
    res.writeStatus('204 No Content');
    res.writeHeader(kCorsOrigin[0], kCorsOrigin[1]);
    res.writeHeader('Access-Control-Allow-Methods', 'GET, POST, PATCH, OPTIONS');
    // X-Flagwire-Project and If-None-Match: OFREP from browsers (README: OFREP).
    res.writeHeader('Access-Control-Allow-Headers', 'Content-Type, Authorization, X-Flagwire-Project, If-None-Match');
    res.writeHeader('Access-Control-Max-Age', '86400');
    res.endWithoutBody(0);
  });
}

// /mcp: the MCP server over Streamable HTTP (spec: Transports), served by the stock SDK's web-standard
// transport in its stateless mode, a server and transport per request, answering JSON (never an SSE
// stream: the server sends nothing of its own accord, so GET is 405, as the spec allows). The session is
// this file's: an id that proves itself (sessions.ts), so any front-end thread of the node serves any of
// its sessions and the node keeps none; DELETE is 405, as the spec allows, since nothing ends one before
// its age. Before the SDK sees anything of a request, this file checks, in order: that MCP is on
// (FLAGWIRE_MCP; off, 404), the Management API's per-address rate limit (the same limiter: /mcp's calls
// are Management API calls), the Origin against DNS rebinding (only loopback origins and
// FLAGWIRE_MCP_ORIGINS: a page on another site that resolves to this node is refused), the bearer token
// exactly as the Management API checks it (lockout per address included), the body within the
// Management API's cap before it is parsed, and the session.
import type { HttpResponse } from 'uWebSockets.js';
import type { ServiceRouteDeps, ServiceRouteSpec } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import { type PendingResponse, sendSameOrigin } from '../http/http.js';
import { type AuthContext, authorizeToken } from '../model/records/token-access.js';
import type { RouteHandler } from '../routes/route-table.js';
import { clientAddresses, readServiceBody, sendRateLimited, sendRefusal } from '../routes/service-route-parts.js';
import { identifyToken } from '../tokens/auth.js';
import { mcpHttpModule, mcpTypes } from './sdk.js';
import { kAuthKey, mcpServer } from './server.js';
import { McpSessionIds } from './sessions.js';

export const kMcpPath = '/mcp';

/** The version serverInfo names: the MCP surface's, which moves with the Management API's. */
const kMcpVersion = '1.0.0';

/** What the handler reads of a request before it may go async (uWS's request lives only in the callback). */
interface McpRequest {
  readonly method: 'POST' | 'GET' | 'DELETE';
  readonly accept: string;
  readonly contentType: string;
  readonly sessionId: string;
  readonly protocolVersion: string;
}

/** The three routes share one handler per front end. */
const kHandlers = new WeakMap<ServiceRouteDeps, (method: McpRequest['method'], route: number) => RouteHandler>();

function mcpRoute(method: 'post' | 'get' | 'del'): ServiceRouteSpec {
  const name = method === 'del' ? 'DELETE' : (method.toUpperCase() as 'POST' | 'GET');
  return {
    method,
    pattern: kMcpPath,
    auth: 'token',
    handler: (deps, route) => {
      let made = kHandlers.get(deps);
      if (made === undefined) {
        made = mcpHandlers(deps);
        kHandlers.set(deps, made);
      }
      return made(name, route);
    },
  };
}

export const kMcpRoutes = {
  mcpPost: mcpRoute('post'),
  mcpGet: mcpRoute('get'),
  mcpDelete: mcpRoute('del'),
} as const satisfies Record<string, ServiceRouteSpec>;

const kOff = new FlagwireError('NOT_FOUND', 'MCP is off on this node: FLAGWIRE_MCP=on serves it at /mcp (docs/mcp.md).');
const kLoopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

function mcpHandlers(deps: ServiceRouteDeps): (method: McpRequest['method'], route: number) => RouteHandler {
  const settings = deps.config.mcp;
  const refuse = (res: HttpResponse, err: unknown, route: number) =>
    deps.metrics?.request(route, sendRefusal(res, err, deps, kMcpPath, 'unexpected error at /mcp'));
  if (settings === null) return (_method, route) => (res) => refuse(res, kOff, route);
  const sessions = new McpSessionIds(deps.nodeKey, settings.sessionMaxAgeMs);
  const origins = new Set(settings.origins);
  const addressOf = clientAddresses(deps.config);
  const { isInitializeRequest } = mcpTypes();
  const { WebStandardStreamableHTTPServerTransport } = mcpHttpModule();

  const answer = async (res: PendingResponse, request: McpRequest, auth: AuthContext, parsed: unknown, now: number): Promise<number> => {
    let sessionId = request.sessionId;
    if (sessionId !== '') {
      if (!sessions.valid(sessionId, auth.token.id, now))
        return rpcError(res, 404, -32001, 'Session not found: it expired or was never opened here; initialize a new one.');
    } else if (isInitialize(parsed)) {
      sessionId = sessions.issue(auth.token.id, now);
    } else {
      return rpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required (initialize first).');
    }
    // deps itself, not a copy: its config is replaced once the listen port is known (baseUrl in a link).
    const server = mcpServer(deps, kMcpVersion);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      const headers: Record<string, string> = { accept: request.accept, 'content-type': request.contentType };
      if (request.protocolVersion !== '') headers['mcp-protocol-version'] = request.protocolVersion;
      const web = new Request(`${deps.config.baseUrl}${kMcpPath}`, { method: 'POST', headers });
      const authInfo = { token: '', clientId: auth.token.id, scopes: [], extra: { [kAuthKey]: auth } };
      const response = await transport.handleRequest(web, { parsedBody: parsed, authInfo });
      const body = response.body === null ? '' : await response.text();
      const sent: [string, string][] = response.ok ? [['Mcp-Session-Id', sessionId]] : [];
      sendSameOrigin(res, response.status, body, response.headers.get('content-type') ?? 'application/json', sent);
      return response.status;
    } finally {
      void server.close();
    }
  };
  function isInitialize(parsed: unknown): boolean {
    return Array.isArray(parsed) ? parsed.some((m) => isInitializeRequest(m)) : isInitializeRequest(parsed);
  }

  return (method, route) => (res, req) => {
    const request: McpRequest = {
      method,
      accept: req.getHeader('accept'),
      contentType: req.getHeader('content-type'),
      sessionId: req.getHeader('mcp-session-id'),
      protocolVersion: req.getHeader('mcp-protocol-version'),
    };
    const origin = req.getHeader('origin');
    const authorization = req.getHeader('authorization');
    const contentLength = req.getHeader('content-length');
    const ip = addressOf(res, req);
    const now = deps.clock.now();
    // spec: Limits, as the Management API counts its requests: before anything else of the request.
    if (deps.rateLimiter !== null && !deps.rateLimiter.take(ip, now)) {
      deps.store.resetReadTxn();
      sendRateLimited(res, deps.store.revision());
      deps.metrics?.request(route, 429);
      return;
    }
    let auth: AuthContext;
    try {
      refuseForeignOrigin(origin, origins);
      deps.authFailures.check(ip, now);
      deps.store.resetReadTxn();
      let token: ReturnType<typeof identifyToken>;
      try {
        token = identifyToken(deps.store, authorization);
      } catch (err) {
        deps.authFailures.record(ip, now);
        throw err;
      }
      auth = authorizeToken(deps.store, token, now);
    } catch (err) {
      refuse(res, err, route);
      return;
    }
    const run = (parsed: unknown) =>
      void answer(res, request, auth, parsed, now).then(
        (status) => {
          // On the token's activity as its Management API requests are (`flagwire token activity`).
          deps.activity.used(auth.token.id, method, kMcpPath, status, now);
          deps.metrics?.request(route, status);
        },
        (err: unknown) => refuse(res, err, route),
      );
    if (method !== 'POST') {
      // GET: no stream of the server's own, it sends nothing but answers (spec: GET, 405 when not
      // offered). DELETE: a session ends on its age alone (spec: Session Management, 405 allowed).
      sendSameOrigin(res, 405, '', 'text/plain; charset=utf-8', [['Allow', 'POST']]);
      deps.metrics?.request(route, 405);
      return;
    }
    readServiceBody(res, contentLength, deps, route, (body, release) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        release();
        deps.metrics?.request(route, rpcError(res, 400, -32700, 'Parse error: the body is not JSON.'));
        return;
      }
      release();
      run(parsed);
    });
  };
}

/** A JSON-RPC error answered over HTTP (what the SDK's transport answers for the same cases); returns the status. */
function rpcError(res: PendingResponse, status: number, code: number, message: string): number {
  sendSameOrigin(res, status, JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), 'application/json');
  return status;
}

/**
 * spec: Transports, security warning. A browser's request names its page's origin; one from a site
 * that rebound its name to this node's address is refused. No Origin (a program, not a page) passes.
 */
function refuseForeignOrigin(origin: string, allowed: ReadonlySet<string>): void {
  if (origin === '' || allowed.has(origin)) return;
  let host: string;
  try {
    host = new URL(origin).hostname;
  } catch {
    host = '';
  }
  if (kLoopbackHosts.has(host)) return;
  throw new FlagwireError(
    'CROSS_SITE_REQUEST',
    `Origin ${origin.slice(0, 100)} may not call /mcp: only loopback origins and FLAGWIRE_MCP_ORIGINS may (DNS rebinding).`,
  );
}

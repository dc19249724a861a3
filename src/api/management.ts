// The Management API under /api/v1: routing, the request pipeline and the five handlers.
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { answerableError, errorEnvelope, FlagwireError, retryAfterSeconds } from '../errors.js';
import { requireEnvironmentAllowed, resolveEnvParam, type EnvRoute } from '../model/environments.js';
import { requirePatchTarget, requireProjectFlag } from '../model/lookups.js';
import { authorizeToken, requireWrite, type AuthContext } from '../model/token-access.js';
import type { Token } from '../model/tokens.js';
import type { SnapshotReader } from '../store/interfaces.js';
import { bodyRefusal, type BodyBudget } from '../http/body.js';
import { TrustedProxies } from '../http/client-address.js';
import { send, sendJson, trackAbort, type PendingResponse } from '../http/http.js';
import type { InFlight } from '../http/in-flight.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { Metrics } from '../metrics/metrics.js';
import type { WriterClient } from '../writer/client.js';
import type { ActivityRecorder } from './activity.js';
import { identifyToken } from './auth.js';
import type { AuthFailures } from './auth-failures.js';
import { flagList, patchResult, representFlag, tokenDescription } from './representation.js';

export interface ManagementDeps {
  store: SnapshotReader;
  writer: WriterClient;
  clock: Clock;
  /** Replaced once the listen port is known (see withListenPort). */
  config: Readonly<Config>;
  log: Logger;
  inFlight: InFlight;
  /** The Management API's share of the process's request-body budget (POST and PATCH bodies). */
  bodies: BodyBudget;
  /** Null only in the bench's twin that measures what the limiter costs (a test hook, never in production). */
  rateLimiter: RateLimiter | null;
  authFailures: AuthFailures;
  activity: ActivityRecorder;
  /** Request, rate-limit and auth-failure counts; null or absent when metrics are off. */
  metrics?: Metrics | null;
}

/** What a handler gets: everything read off the request before the handler may go async. */
interface ApiRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string;
  contentType: string;
  flagId: string | null;
}

type Route = 'token' | 'flags' | 'flag';

// Query parameters that would carry a secret in a URL: refused so the secret is never used from there.
const kUrlTokenParams = ['token', 'access_token', 'api_key', 'apikey', 'authorization'];

/** Denials that are recorded on the token and e-mailed (spec: Events): a real token refused. */
const kDenialCodes: ReadonlySet<string> = new Set([
  'TOKEN_REVOKED',
  'TOKEN_EXPIRED',
  'INSUFFICIENT_PERMISSION',
  'ENVIRONMENT_NOT_PERMITTED',
  'FORBIDDEN',
]);
const kRateLimited = Buffer.from(
  'Too Many Requests: the Management API allows a limited number of requests per minute per address; wait a minute before retrying.\n',
);
const kRateLimitHeaders = [['Retry-After', '60']] as const;

export function registerManagementRoutes(app: TemplatedApp, deps: ManagementDeps): void {
  const { rateLimiter, authFailures, activity } = deps;
  // Null without FLAGWIRE_TRUSTED_PROXIES: the limits count by the TCP peer, at no extra cost per request.
  const proxies = deps.config.trustedProxies.length === 0 ? null : new TrustedProxies(deps.config.trustedProxies);

  /** Answers with `err` in the envelope; `token` (when known) gets the request on its activity. */
  const fail = (res: PendingResponse, request: ApiRequest, token: Token | null, err: unknown, closeConnection = false) => {
    const error = answerableError(err, (e) =>
      deps.log.error({ err: e, method: request.method, path: request.path }, 'unexpected error in the Management API'),
    );
    if (token !== null) {
      const now = deps.clock.now();
      activity.used(token.id, request.method, request.path, error.status, now);
      if (kDenialCodes.has(error.code)) activity.denied(token.id, `${error.title}: ${error.detail}`, request.method, request.path, now);
    }
    if (deps.metrics) {
      deps.metrics.apiRequest(request.path, error.status);
      if (error.code === 'TOO_MANY_AUTH_FAILURES') deps.metrics.authLockouts++;
    }
    const retry = retryAfterSeconds(error, deps.config.writeTimeoutMs);
    const headers = retry === null ? undefined : [['Retry-After', String(retry)] as const];
    send(res, error.status, JSON.stringify(errorEnvelope(error, deps.config.docsUrl)), 'application/json', headers, closeConnection);
  };
  const succeed = (res: PendingResponse, request: ApiRequest, token: Token, status: number, value: unknown) => {
    activity.used(token.id, request.method, request.path, status, deps.clock.now());
    deps.metrics?.apiRequest(request.path, status);
    sendJson(res, status, value);
  };

  app.any('/api/v1/*', (res: HttpResponse, req: HttpRequest) => {
    const now = deps.clock.now();
    const peer = Buffer.from(res.getRemoteAddressAsText()).toString();
    const ip = proxies === null ? peer : proxies.clientAddress(peer, req);
    // spec: Limits. The rate limit runs before anything else of the request, auth and body included.
    // Preflights never get here: the app's OPTIONS route answers them (src/server/app.ts).
    if (rateLimiter !== null && !rateLimiter.take(ip, now)) {
      if (deps.metrics) {
        deps.metrics.rateLimited++;
        deps.metrics.apiRequest(req.getUrl(), 429);
      }
      send(res, 429, kRateLimited, 'text/plain; charset=utf-8', kRateLimitHeaders);
      return;
    }
    const request: ApiRequest = {
      method: req.getMethod().toUpperCase(),
      path: req.getUrl(),
      query: new URLSearchParams(req.getQuery() ?? ''),
      authorization: req.getHeader('authorization'),
      contentType: req.getHeader('content-type'),
      flagId: null,
    };
    const contentLength = req.getHeader('content-length');
    let token: Token | null = null;
    try {
      authFailures.check(ip, now);
      const route = matchRoute(request);
      for (const name of kUrlTokenParams) {
        if (request.query.has(name)) {
          throw new FlagwireError(
            'INVALID_REQUEST',
            `Tokens are never accepted in the URL: remove "${name}" from the query and send "Authorization: Bearer <token>".`,
          );
        }
      }
      deps.store.resetReadTxn();
      try {
        token = identifyToken(deps.store, request.authorization);
      } catch (err) {
        authFailures.record(ip, now);
        if (deps.metrics) deps.metrics.authFailures++;
        throw err;
      }
      const auth = authorizeToken(deps.store, token, now);
      if (request.method === 'GET') {
        // Answered on a later turn of the event loop, not inside this callback. uWS parses every
        // request pipelined in one packet in one go; answered synchronously, a client pipelining
        // hundreds of list requests (each O(flags) to build) would hold the main thread, and every
        // other client, for seconds. With the answer pending, uWS closes a connection that sends its
        // next request early, and other clients' requests run in between.
        trackAbort(res);
        const done = deps.inFlight.start();
        const known = token;
        setImmediate(() => {
          try {
            if (res.aborted) return;
            deps.store.resetReadTxn();
            succeed(res, request, known, 200, read(route, request, auth, deps));
          } catch (err) {
            fail(res, request, known, err);
          } finally {
            done();
          }
        });
        return;
      }
      requireWrite(auth);
      // 404 and 403 before reading a body for a flag that cannot be patched (the writer checks both
      // again, in the transaction that writes); a problem with `env` itself is a 400, reported by the
      // writer with the body's problems (spec: PATCH rule 9).
      if (route === 'flag') {
        requirePatchTarget(deps.store, auth.project.id, request.flagId!, queryParam(request.query, 'env'), auth.token.environments);
      }
      const done = deps.inFlight.start();
      const known = token;
      // A client that goes away before its body is complete never reaches the callback below: its
      // in-flight slot is released on abort, or shutdown would wait its whole drain budget for it.
      deps.bodies.read(
        res,
        contentLength,
        (body) => {
          if (!body.ok) {
            // The rest of the body is not read: close the connection after the answer.
            fail(res, request, known, bodyRefusal(body.reason), true);
            done();
            return;
          }
          // The body's reservation is released when the writer thread holds its copy no more, not at the
          // answer: a write refused with Storage busy stays queued there until the lock comes free.
          write(route, request, auth, body.body, body.release, deps)
            .then(
              ({ status, value }) => succeed(res, request, known, status, value),
              (err: unknown) => fail(res, request, known, err),
            )
            .finally(done);
        },
        done,
      );
    } catch (err) {
      fail(res, request, token, err);
    }
  });
}

/** Every route behind /api/v1/* (path template, methods): matchRoute's table; the OpenAPI test reads it too. */
export const kManagementRoutes = {
  token: { path: '/api/v1/token', methods: ['GET'] },
  flags: { path: '/api/v1/flags', methods: ['GET', 'POST'] },
  flag: { path: '/api/v1/flags/{flag_id}', methods: ['GET', 'PATCH'] },
} as const satisfies Record<Route, { path: string; methods: readonly string[] }>;

/** Route and method, or 404 (spec: any nonexistent path under /api/v1). */
function matchRoute(request: ApiRequest): Route {
  const { method, path } = request;
  let route: Route | null = null;
  let methods: readonly string[] = [];
  if (path === kManagementRoutes.token.path) {
    route = 'token';
    methods = kManagementRoutes.token.methods;
  } else if (path === kManagementRoutes.flags.path) {
    route = 'flags';
    methods = kManagementRoutes.flags.methods;
  } else if (path.startsWith('/api/v1/flags/') && path.indexOf('/', 14) === -1 && path.length > 14) {
    try {
      request.flagId = decodeURIComponent(path.slice(14));
      route = 'flag';
      methods = kManagementRoutes.flag.methods;
    } catch {
      route = null;
    }
  }
  if (route === null) throw new FlagwireError('NOT_FOUND', `There is no ${path} in the Management API; see the docs for its routes.`);
  if (!methods.includes(method)) {
    // The flag route is named by its pattern, not the path: a 404 never echoes a flag id, so its body is
    // the same whether the id exists in another project or nowhere.
    const name = route === 'flag' ? '/api/v1/flags/{id}' : path;
    throw new FlagwireError('NOT_FOUND', `${method} is not a route of ${name}; it accepts ${methods.join(', ')}.`);
  }
  return route;
}

function queryParam(query: URLSearchParams, name: string): string | null {
  return query.get(name);
}

/** Checks `env` of a read against the project and the token; returns the environment to read. */
function checkEnv(auth: AuthContext, env: string | null, route: EnvRoute): string | null {
  const resolved = resolveEnvParam(auth.project, env, false, route);
  requireEnvironmentAllowed(auth.token.environments, resolved);
  return resolved;
}

function read(route: Route, request: ApiRequest, auth: AuthContext, deps: ManagementDeps): unknown {
  const { store } = deps;
  if (route === 'token') return tokenDescription(auth.token, auth.project);
  const env = queryParam(request.query, 'env');
  if (route === 'flags') {
    // An environment-restricted token still lists every flag; naming an environment is checked.
    const resolved = checkEnv(auth, env, 'list');
    const name = queryParam(request.query, 'name');
    const flags = store.listFlags(auth.project.id).filter((f) => name === null || f.name === name);
    return flagList(flags, auth.project, resolved, (id) => store.getUsage(id));
  }
  const flag = requireProjectFlag(store, auth.project.id, request.flagId!);
  return representFlag(flag, auth.project, checkEnv(auth, env, 'flag'), store.getUsage(flag.id));
}

/**
 * Hands the body, as received, to the writer with the token's id: its apiFlagCreate/apiFlagPatch
 * authorise the token again in the transaction that applies the change, parse the body and apply
 * every rule, and report all problems together (with the `env` problem of a patch).
 */
async function write(
  route: Route,
  request: ApiRequest,
  auth: AuthContext,
  raw: Buffer,
  release: () => void,
  deps: ManagementDeps,
): Promise<{ status: number; value: unknown }> {
  // An exact copy: `raw` may be a view into Buffer's shared 8 KiB pool, which structured clone would
  // send whole to the writer thread, other requests' bytes included.
  const received = { bytes: new Uint8Array(raw), contentType: request.contentType };
  const tokenId = auth.token.id;
  if (route === 'flags') {
    const flag = await deps.writer.call('apiFlagCreate', { tokenId, received }, release);
    return { status: 201, value: representFlag(flag, auth.project, null, deps.store.getUsage(flag.id)) };
  }
  const env = queryParam(request.query, 'env');
  const result = await deps.writer.call('apiFlagPatch', { tokenId, flagId: request.flagId!, env, received }, release);
  return { status: 200, value: patchResult(result.changed, result.flag, env, deps.store.getUsage(result.flag.id)) };
}

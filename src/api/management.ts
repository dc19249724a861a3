// The Management API under /api/v1: its request pipeline (rate limit, auth, body read, error rendering)
// and its dispatch to the handlers (handlers.ts), one per route declared in src/routes/route-table.ts.
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { answerableError, errorEnvelope, FlagwireError, retryAfterSeconds } from '../errors.js';
import { authorizeToken, requireWrite, type AuthContext } from '../model/token-access.js';
import type { Token } from '../model/tokens.js';
import type { SnapshotReader } from '../store/interfaces.js';
import { bodyRefusal, type BodyBudget } from '../http/body.js';
import { TrustedProxies } from '../http/client-address.js';
import { send, sendJson, trackAbort, type PendingResponse } from '../http/http.js';
import type { InFlight } from '../http/in-flight.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { kManagementRoutes, registerRoutes, type ManagementRoute } from '../routes/route-table.js';
import { matchPath } from '../http/route-pattern.js';
import type { Metrics } from '../metrics/metrics.js';
import type { WriterClient } from '../writer/client.js';
import type { ActivityRecorder } from './activity.js';
import { identifyToken } from './auth.js';
import type { AuthFailures } from './auth-failures.js';
import { JsonText, kManagementHandlers, type ApiRequest, type ReadHandler, type WriteHandler } from './handlers.js';

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
  const pipeline = new ManagementPipeline(deps);
  registerRoutes(app, { management: (res, req) => pipeline.handle(res, req) });
}

/** Every request under /api/v1/* (preflights aside: the app's OPTIONS route answers them, src/server/app.ts). */
class ManagementPipeline {
  // Null without FLAGWIRE_TRUSTED_PROXIES: the limits count by the TCP peer, at no extra cost per request.
  private readonly proxies: TrustedProxies | null;

  constructor(private readonly deps: ManagementDeps) {
    this.proxies = deps.config.trustedProxies.length === 0 ? null : new TrustedProxies(deps.config.trustedProxies);
  }

  handle(res: HttpResponse, req: HttpRequest): void {
    const { deps } = this;
    const now = deps.clock.now();
    const peer = Buffer.from(res.getRemoteAddressAsText()).toString();
    const ip = this.proxies === null ? peer : this.proxies.clientAddress(peer, req);
    // spec: Limits. The rate limit runs before anything else of the request, auth and body included.
    if (deps.rateLimiter !== null && !deps.rateLimiter.take(ip, now)) {
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
      params: {},
    };
    const contentLength = req.getHeader('content-length');
    let token: Token | null = null;
    try {
      deps.authFailures.check(ip, now);
      const route = matchRoute(request);
      refuseUrlTokens(request.query);
      deps.store.resetReadTxn();
      token = this.identify(request, ip, now);
      const auth = authorizeToken(deps.store, token, now);
      const handler = kManagementHandlers[route.name];
      if (handler.kind === 'read') this.answerRead(res, request, auth, handler);
      else this.answerWrite(res, request, auth, handler, contentLength);
    } catch (err) {
      this.fail(res, request, token, err);
    }
  }

  /** The request's token; an absent, malformed or unknown one counts as a failed authentication of `ip`. */
  private identify(request: ApiRequest, ip: string, now: number): Token {
    try {
      return identifyToken(this.deps.store, request.authorization);
    } catch (err) {
      this.deps.authFailures.record(ip, now);
      if (this.deps.metrics) this.deps.metrics.authFailures++;
      throw err;
    }
  }

  private answerRead(res: PendingResponse, request: ApiRequest, auth: AuthContext, handler: ReadHandler): void {
    const { deps } = this;
    // Answered on a later turn of the event loop, not inside the request's callback. uWS parses every
    // request pipelined in one packet in one go; answered synchronously, a client pipelining
    // hundreds of list requests (each O(flags) to build) would hold the main thread, and every
    // other client, for seconds. With the answer pending, uWS closes a connection that sends its
    // next request early, and other clients' requests run in between.
    trackAbort(res);
    const done = deps.inFlight.start();
    setImmediate(() => {
      try {
        if (res.aborted) return;
        deps.store.resetReadTxn();
        this.succeed(res, request, auth.token, 200, handler.run(request, auth, deps));
      } catch (err) {
        this.fail(res, request, auth.token, err);
      } finally {
        done();
      }
    });
  }

  private answerWrite(res: PendingResponse, request: ApiRequest, auth: AuthContext, handler: WriteHandler, contentLength: string): void {
    const { deps } = this;
    if (handler.permission !== 'read') requireWrite(auth);
    handler.precheck?.(request, auth, deps);
    const done = deps.inFlight.start();
    const known = auth.token;
    // A client that goes away before its body is complete never reaches the callback below: its
    // in-flight slot is released on abort, or shutdown would wait its whole drain budget for it.
    deps.bodies.read(
      res,
      contentLength,
      (body) => {
        if (!body.ok) {
          // The rest of the body is not read: close the connection after the answer.
          this.fail(res, request, known, bodyRefusal(body.reason), true);
          done();
          return;
        }
        // An exact copy: the body may be a view into Buffer's shared 8 KiB pool, which structured clone
        // would send whole to the writer thread, other requests' bytes included. The body's reservation
        // is released when the writer thread holds its copy no more, not at the answer: a write refused
        // with Storage busy stays queued there until the lock comes free.
        const received = { bytes: new Uint8Array(body.body), contentType: request.contentType };
        handler
          .run(request, auth, received, body.release, deps)
          .then(
            ({ status, value }) => this.succeed(res, request, known, status, value),
            (err: unknown) => this.fail(res, request, known, err),
          )
          .finally(done);
      },
      done,
    );
  }

  /** Answers with `err` in the envelope; `token` (when known) gets the request on its activity. */
  private fail(res: PendingResponse, request: ApiRequest, token: Token | null, err: unknown, closeConnection = false): void {
    const { deps } = this;
    const error = answerableError(err, (e) =>
      deps.log.error({ err: e, method: request.method, path: request.path }, 'unexpected error in the Management API'),
    );
    if (token !== null) {
      const now = deps.clock.now();
      deps.activity.used(token.id, request.method, request.path, error.status, now);
      if (kDenialCodes.has(error.code))
        deps.activity.denied(token.id, `${error.title}: ${error.detail}`, request.method, request.path, now);
    }
    if (deps.metrics) {
      deps.metrics.apiRequest(request.path, error.status);
      if (error.code === 'TOO_MANY_AUTH_FAILURES') deps.metrics.authLockouts++;
    }
    const retry = retryAfterSeconds(error, deps.config.writeTimeoutMs);
    const headers = retry === null ? undefined : [['Retry-After', String(retry)] as const];
    send(res, error.status, JSON.stringify(errorEnvelope(error, deps.config.docsUrl)), 'application/json', headers, closeConnection);
  }

  private succeed(res: PendingResponse, request: ApiRequest, token: Token, status: number, value: unknown): void {
    this.deps.activity.used(token.id, request.method, request.path, status, this.deps.clock.now());
    this.deps.metrics?.apiRequest(request.path, status);
    if (value instanceof JsonText) send(res, status, value.text, 'application/json');
    else sendJson(res, status, value);
  }
}

function refuseUrlTokens(query: URLSearchParams): void {
  for (const name of kUrlTokenParams) {
    if (query.has(name)) {
      throw new FlagwireError(
        'INVALID_REQUEST',
        `Tokens are never accepted in the URL: remove "${name}" from the query and send "Authorization: Bearer <token>".`,
      );
    }
  }
}

/** The route for the request's method and path (its flag id set on `request`), or 404 (spec: any nonexistent path under /api/v1). */
function matchRoute(request: ApiRequest): ManagementRoute {
  const { method, path } = request;
  let pattern: string | null = null;
  const methods: string[] = [];
  for (const route of kManagementRoutes) {
    const params = matchPath(route.path, path);
    if (params === null) continue;
    if (route.method === method) {
      request.flagId = params.flag_id ?? null;
      request.params = params;
      return route;
    }
    pattern = route.path.pattern;
    methods.push(route.method);
  }
  if (pattern === null) throw new FlagwireError('NOT_FOUND', `There is no ${path} in the Management API; see the docs for its routes.`);
  // A route with an id is named by its pattern, not the path: a 404 never echoes a flag id, so its body
  // is the same whether the id exists in another project or nowhere.
  const name = pattern.includes(':') ? pattern.replace(/:[a-z_]+/g, '{id}') : path;
  throw new FlagwireError('NOT_FOUND', `${method} is not a route of ${name}; it accepts ${methods.join(', ')}.`);
}

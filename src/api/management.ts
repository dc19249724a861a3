// The Management API under /api/v1: its request pipeline (rate limit, auth, body read, error rendering)
// and its dispatch to the handlers (src/routes/handler.ts), one per route its capability declares (src/capabilities.ts).
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { answerableError, errorEnvelope, FlagwireError, retryAfterSeconds } from '../errors.js';
import { changeRequestedBody } from '../approvals/change-requested.js';
import { ChangeRequested } from '../writer/change-requested.js';
import { authorizeToken, requireWrite, type AuthContext } from '../model/records/token-access.js';
import type { Token } from '../model/tokens.js';
import type { SnapshotReader, StoreRevision } from '../store/interfaces.js';
import { bodyRefusal, keepBody, type BodyBudget } from '../http/body.js';
import { TrustedProxies } from '../http/client-address.js';
import { send, sendNotModified, trackAbort, type PendingResponse } from '../http/http.js';
import type { InFlight } from '../http/in-flight.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { kRateLimitedError, kRateLimitRetry, sendRateLimited } from '../routes/service-route-parts.js';
import {
  kMinRevisionHeader,
  kRevisionNotReachedDetail,
  kTooManyWaitingDetail,
  requireMinRevision,
  revisionHeaders,
  type RevisionWaiter,
} from '../http/revisions.js';
import { answerRelayReadOnly } from './relay-refusal.js';
import { kManagementRoutesOutsideApi, matchManagementRoute, type ManagementMatch, type ManagementRoute } from '../all-routes.js';
import { kRoutes, registerRoutes } from '../routes/route-table.js';
import type { Metrics } from '../metrics/metrics.js';
import type { WriterClient } from '../writer/client.js';
import type { SideThread } from '../side-work/side-thread.js';
import type { EventCounter } from '../events/event-counter.js';
import type { UsageSink } from '../evaluation/engine/usage.js';
import type { ChangeFeed } from '../stream/change-feed.js';
import type { ActivityRecorder } from '../tokens/activity.js';
import type { FlagSetReadRecorder } from '../sync/read-recorder.js';
import { identifyToken, refuseUrlTokens } from '../tokens/auth.js';
import type { AuthFailures } from '../http/auth-failures.js';
import { JsonText, StreamedAnswer, TaggedJson, type ApiRequest, type ReadHandler, type WriteHandler } from '../routes/handler.js';
import { sendStreamed, type StreamFailed } from '../http/streamed-body.js';
import { matchesIfNoneMatch } from '../http/entity-tags.js';

export interface ManagementDeps {
  store: SnapshotReader;
  writer: WriterClient;
  /** Work that grows with a request's body and reads the store: a flag file's plan, a fragment's change prepared (src/side-work). */
  sideThread: SideThread;
  /** The tally file of events (src/events/event-counter.ts). */
  events: EventCounter;
  /** Flag usage counted outside the eval workers (src/evaluation/engine/usage.ts: Unleash's SDKs' reports). */
  usage: UsageSink;
  /** Reads of flagd flag sets (src/sync/read-recorder.ts: GET /v1/flag-sets), for the lifecycle's usageKnown. */
  flagSetReads: FlagSetReadRecorder;
  /** The change streams (src/stream/change-feed.ts), which a capability's stream follows. */
  changes: ChangeFeed;
  clock: Clock;
  /** Replaced once the listen port is known (see withListenPort). */
  config: Readonly<Config>;
  log: Logger;
  inFlight: InFlight;
  /** The Management API's share of the process's request-body budget (POST and PATCH bodies). */
  bodies: BodyBudget;
  /** Where requests with a Flagwire-Min-Revision wait (the front end's, src/http/revisions.ts). */
  revisions: RevisionWaiter;
  /** Null only in the bench's twin that measures what the limiter costs (a test hook, never in production). */
  rateLimiter: RateLimiter | null;
  authFailures: AuthFailures;
  activity: ActivityRecorder;
  /** Request, rate-limit and auth-failure counts; null or absent when metrics are off. */
  metrics?: Metrics | null;
}

export function registerManagementRoutes(app: TemplatedApp, deps: ManagementDeps): void {
  const pipeline = new ManagementPipeline(deps);
  const handle = (res: HttpResponse, req: HttpRequest) => pipeline.handle(res, req);
  // A relay refuses all of /api/v1 (relay-refusal.ts); the routes outside it (snapshots) it serves from its copy.
  registerRoutes(app, kRoutes, { management: deps.config.upstream === null ? handle : (res, req) => pipeline.refuseAsRelay(res, req) });
  for (const route of kManagementRoutesOutsideApi) app[route.method](route.pattern, handle);
}

/**
 * Every request under /api/v1/* (preflights aside: the app's OPTIONS route answers them, src/server/app.ts).
 * Every answer names a store revision (Flagwire-Revision, src/http/revisions.ts): a read's, the snapshot it
 * read; a write's, the revision it committed at (the writer's reply); an error's, this node's when it is
 * answered. A request with Flagwire-Min-Revision is served once this node's copy has that revision: it
 * waits after its token was checked, before anything else is read (a write's precheck, a read's handler).
 */
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
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    // Matched once, here, and passed along: every answer's metrics label is its route number, a 429's
    // too (the match reads only the path and method: the limit still runs before anything of the request).
    const match = matchManagementRoute(method, path);
    // spec: Limits. The rate limit runs before anything else of the request, auth and body included.
    if (deps.rateLimiter !== null && !deps.rateLimiter.take(ip, now)) {
      if (deps.metrics) {
        deps.metrics.rateLimited++;
        deps.metrics.request(match.metric, 429);
      }
      // The spec's plain 429, except on a route that answers in another standard's error body (the
      // OpenFeature CLI's manifest API), whose clients decode only that body.
      const errorBody = match.route?.errorBody ?? null;
      if (errorBody === null) sendRateLimited(res, this.revisionNow());
      else {
        const body = JSON.stringify(errorBody(kRateLimitedError, deps.config.docsUrl));
        send(res, 429, body, 'application/json', revisionHeaders(this.revisionNow(), kRateLimitRetry));
      }
      return;
    }
    const request: ApiRequest = {
      method,
      path,
      query: new URLSearchParams(req.getQuery() ?? ''),
      authorization: req.getHeader('authorization'),
      contentType: req.getHeader('content-type'),
      ifNoneMatch: req.getHeader('if-none-match'),
      ifMatch: req.getHeader('if-match'),
      flagId: match.params.flag_id ?? null,
      params: match.params,
      metric: match.metric,
      // A path no route has (or not with this method) is refused in the envelope.
      errorBody: match.route === null ? null : match.route.errorBody,
    };
    const contentLength = req.getHeader('content-length');
    const rawMinRevision = req.getHeader(kMinRevisionHeader);
    let token: Token | null = null;
    try {
      deps.authFailures.check(ip, now);
      const route = requireRoute(match, request);
      refuseUrlTokens(request.query);
      const minRevision = requireMinRevision(rawMinRevision);
      deps.store.resetReadTxn();
      token = this.identify(request, ip, now);
      const auth = authorizeToken(deps.store, token, now);
      const { handler } = route;
      if (handler.kind === 'read') this.answerRead(res, request, auth, handler, minRevision);
      else this.answerWrite(res, request, auth, handler, contentLength, minRevision);
    } catch (err) {
      this.fail(res, request, token, err);
    }
  }

  /** A relay's answer to every request under /api/v1, counted under the route it names. */
  refuseAsRelay(res: HttpResponse, req: HttpRequest): void {
    this.deps.metrics?.request(matchManagementRoute(req.getMethod().toUpperCase(), req.getUrl()).metric, 409);
    answerRelayReadOnly(res, this.deps.config, this.deps.writer.relay, this.revisionNow());
  }

  /** This node's store revision now (a fresh snapshot): what an answer computed from no particular snapshot names. */
  private revisionNow(): StoreRevision {
    const { store, revisions } = this.deps;
    try {
      store.resetReadTxn();
      return store.revision();
    } catch {
      // An answer (an error's, maybe this very failure's) is never lost to the read: the newest one seen.
      return revisions.latest;
    }
  }

  /**
   * Runs `then` once this node's copy has `minRevision` (at once when it has it, or when none was asked
   * for), or answers 503 Revision not reached when the wait runs out (Server busy when as many requests
   * wait as the node allows). `finished` runs when the request ends without `then`.
   */
  private atRevision(
    res: PendingResponse,
    request: ApiRequest,
    token: Token,
    minRevision: number,
    then: () => void,
    finished: () => void,
  ): void {
    const { revisions } = this.deps;
    if (minRevision === 0 || revisions.has(minRevision)) return then();
    const waiting = revisions.wait(minRevision, (reached) => {
      if (reached && !res.aborted) return then();
      if (!res.aborted) this.fail(res, request, token, new FlagwireError('REVISION_NOT_REACHED', kRevisionNotReachedDetail));
      finished();
    });
    if (waiting) return;
    this.fail(res, request, token, new FlagwireError('SERVER_BUSY', kTooManyWaitingDetail));
    finished();
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

  private answerRead(res: PendingResponse, request: ApiRequest, auth: AuthContext, handler: ReadHandler, minRevision: number): void {
    const { deps } = this;
    // Answered on a later turn of the event loop, not inside the request's callback. uWS parses every
    // request pipelined in one packet in one go; answered synchronously, a client pipelining
    // hundreds of list requests (each O(flags) to build) would hold the main thread, and every
    // other client, for seconds. With the answer pending, uWS closes a connection that sends its
    // next request early, and other clients' requests run in between.
    trackAbort(res);
    const done = deps.inFlight.start();
    const answer = () => {
      let pending = false;
      try {
        if (res.aborted) return;
        deps.store.resetReadTxn();
        const storeRevision = deps.store.revision();
        const value = handler.run(request, auth, deps);
        if (value instanceof Promise) {
          pending = true;
          value
            .then(
              (settled: unknown) => this.succeed(res, request, auth.token, 200, settled, storeRevision),
              (err: unknown) => this.fail(res, request, auth.token, err),
            )
            .finally(done);
        } else this.succeed(res, request, auth.token, 200, value, storeRevision);
      } catch (err) {
        this.fail(res, request, auth.token, err);
      } finally {
        if (!pending) done();
      }
    };
    this.atRevision(res, request, auth.token, minRevision, () => setImmediate(answer), done);
  }

  private answerWrite(
    res: PendingResponse,
    request: ApiRequest,
    auth: AuthContext,
    handler: WriteHandler,
    contentLength: string,
    minRevision: number,
  ): void {
    const { deps } = this;
    if (handler.permission !== 'read') requireWrite(auth);
    // A write that must wait for its revision reads its body first (uWS hands a body over only while
    // the request is read; its token is checked, as the body budget wants), and is prechecked after the
    // wait, against the copy at that revision.
    const waits = minRevision > 0 && !deps.revisions.has(minRevision);
    if (!waits) handler.precheck?.(request, auth, deps);
    const done = deps.inFlight.start();
    const known = auth.token;
    // A client that goes away before its body is complete never reaches the callback below: its
    // in-flight slot is released on abort, or shutdown would wait its whole drain budget for it.
    deps.bodies.read(
      res,
      contentLength,
      (body) => {
        if (!body.ok) {
          this.fail(res, request, known, bodyRefusal(body.reason), body.closes);
          done();
          return;
        }
        // The request's own bytes (keepBody), handed to the writer thread or the plan thread. The body's
        // reservation is released when that thread holds it no more, not at the answer: a write refused
        // with Storage busy stays queued there until the lock comes free.
        const received = { bytes: keepBody(body.body), contentType: request.contentType };
        const run = () =>
          handler
            .run(request, auth, received, body.release, deps)
            .then(
              // A handler that names no store revision (one that does not write): this node's at the answer.
              ({ status, value, storeRevision }) => this.succeed(res, request, known, status, value, storeRevision ?? this.revisionNow()),
              (err: unknown) => this.fail(res, request, known, err),
            )
            .finally(done);
        if (!waits) return void run();
        const gone = () => {
          body.release();
          done();
        };
        this.atRevision(
          res,
          request,
          known,
          minRevision,
          () => {
            try {
              deps.store.resetReadTxn();
              handler.precheck?.(request, auth, deps);
            } catch (err) {
              this.fail(res, request, known, err);
              return gone();
            }
            void run();
          },
          gone,
        );
      },
      done,
    );
  }

  /**
   * Answers with `err` in the envelope, or in the body its route declares (errorBody); `token` (when
   * known) gets the request on its activity.
   */
  private fail(res: PendingResponse, request: ApiRequest, token: Token | null, err: unknown, closeConnection = false): void {
    const { deps } = this;
    // Not applied, but held as a change request (docs/approvals.md): 202 with the request.
    if (err instanceof ChangeRequested && token !== null) {
      return this.succeed(res, request, token, 202, changeRequestedBody(err), this.revisionNow());
    }
    const error = answerableError(err, (e) =>
      deps.log.error({ err: e, method: request.method, path: request.path }, 'unexpected error in the Management API'),
    );
    if (token !== null) deps.activity.refused(token.id, error, request.method, request.path, deps.clock.now());
    if (deps.metrics) {
      deps.metrics.request(request.metric, error.status);
      if (error.code === 'TOO_MANY_AUTH_FAILURES') deps.metrics.authLockouts++;
    }
    const retry = retryAfterSeconds(error, deps.config.writeTimeoutMs);
    const headers = revisionHeaders(this.revisionNow(), ...(retry === null ? [] : [['Retry-After', String(retry)] as const]));
    const { docsUrl } = deps.config;
    const body = request.errorBody === null ? errorEnvelope(error, docsUrl) : request.errorBody(error, docsUrl);
    send(res, error.status, JSON.stringify(body), 'application/json', headers, closeConnection);
  }

  /** `storeRevision`: the store revision the answer was computed at (Flagwire-Revision). */
  private succeed(
    res: PendingResponse,
    request: ApiRequest,
    token: Token,
    status: number,
    value: unknown,
    storeRevision: StoreRevision,
  ): void {
    if (value instanceof TaggedJson) return this.succeedTagged(res, request, token, status, value, storeRevision);
    if (value instanceof StreamedAnswer) return this.succeedStreamed(res, request, token, status, value, storeRevision);
    this.deps.activity.used(token.id, request.method, request.path, status, this.deps.clock.now());
    this.deps.metrics?.request(request.metric, status);
    if (value instanceof JsonText)
      return send(res, status, value.text, 'application/json', revisionHeaders(storeRevision, ...value.headers));
    send(res, status, JSON.stringify(value), 'application/json', revisionHeaders(storeRevision));
  }

  /**
   * A streamed answer: counted when it ends (a failure before its first byte answered as any error, one
   * after it logged and the connection closed: the client sees a body cut short). In flight until then,
   * so a shutdown's drain waits for it within its bound rather than closing what it reads beneath it.
   */
  private succeedStreamed(
    res: PendingResponse,
    request: ApiRequest,
    token: Token,
    status: number,
    value: StreamedAnswer,
    storeRevision: StoreRevision,
  ): void {
    const headers = revisionHeaders(storeRevision, ...value.headers);
    const done = this.deps.inFlight.start();
    const sent = sendStreamed(res, status, value.contentType, headers, value.chunks);
    sent.then(done, done);
    sent.then(
      () => {
        this.deps.activity.used(token.id, request.method, request.path, status, this.deps.clock.now());
        this.deps.metrics?.request(request.metric, status);
      },
      (err: StreamFailed) => {
        if (!err.headersSent) return this.fail(res, request, token, err.cause);
        this.deps.log.error({ err: err.cause, method: request.method, path: request.path }, 'a streamed answer failed after its status');
        this.deps.metrics?.request(request.metric, 500);
        if (!res.aborted) {
          res.aborted = true;
          res.close();
        }
      },
    );
  }

  /** A tagged answer: 304 without a body when If-None-Match names its tag, else `status` with its ETag. */
  private succeedTagged(
    res: PendingResponse,
    request: ApiRequest,
    token: Token,
    status: number,
    value: TaggedJson,
    storeRevision: StoreRevision,
  ): void {
    const notModified = matchesIfNoneMatch(request.ifNoneMatch, Buffer.from(value.etag, 'latin1'));
    const answered = notModified ? 304 : status;
    this.deps.activity.used(token.id, request.method, request.path, answered, this.deps.clock.now());
    this.deps.metrics?.request(request.metric, answered);
    const headers = revisionHeaders(storeRevision, ['ETag', value.etag], ...value.headers);
    if (notModified) sendNotModified(res, headers);
    else send(res, status, value.text, 'application/json', headers);
  }
}

/** The matched route, or 404 (spec: any nonexistent path under /api/v1). */
function requireRoute(match: ManagementMatch, request: ApiRequest): ManagementRoute {
  if (match.route !== null) return match.route;
  const { method, path } = request;
  const last = match.pathRoutes.at(-1);
  if (last === undefined) throw new FlagwireError('NOT_FOUND', `There is no ${path} in the Management API; see the docs for its routes.`);
  // A route with an id is named by its pattern, not the path: a 404 never echoes a flag id, so its body
  // is the same whether the id exists in another project or nowhere.
  const pattern = last.path.pattern;
  const name = pattern.includes(':') ? pattern.replace(/:[a-z_]+/g, '{id}') : path;
  const methods = match.pathRoutes.map((route) => route.method);
  throw new FlagwireError('NOT_FOUND', `${method} is not a route of ${name}; it accepts ${methods.join(', ')}.`);
}

// The web console at /console: its page and scripts (assets.ts), and its JSON endpoints under
// /console/api (api.ts), registered on the app with one call. Same-origin only: no response carries
// the Management API's Access-Control-Allow-Origin, and every change must come from this origin
// (Origin header) with the session's CSRF token, beyond the cookie's SameSite=Strict.
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { EventCounter } from '../events/event-counter.js';
import type { SideThread } from '../side-work/side-thread.js';
import { answerableError, errorEnvelope, FlagwireError, retryAfterSeconds } from '../errors.js';
import { changeRequestedBody } from '../approvals/change-requested.js';
import { ChangeRequested } from '../writer/change-requested.js';
import { bodyRefusal, keepBody, type BodyBudget } from '../http/body.js';
import { TrustedProxies } from '../http/client-address.js';
import { kRoutes, registerRoutes } from '../routes/route-table.js';
import { sendSameOrigin, trackAbort, type PendingResponse } from '../http/http.js';
import type { InFlight } from '../http/in-flight.js';
import type { ReceivedBody } from '../model/request-body.js';
import type { SnapshotReader } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';
import { matchApiRoute, type ApiCall } from './api.js';
import { loadAssets, kPageHeaders } from './assets.js';
import { kFavicon } from './favicon.js';
import { compileForm } from '../console-route/forms.js';
import { sessionPrincipal } from '../console-route/call.js';
import { scopedStore, scopeOf } from '../actor/org-scope.js';
import { isCsrfToken, sessionCookie } from '../sessions/session-cookie.js';
import { ConsoleSessions, InvitationRequest, JoinRequest, SignInRequest, type CurrentSession, type SignedIn } from './sessions.js';
import type { SignInLimits } from '../http/sign-in-limits.js';

export interface ConsoleDeps {
  store: SnapshotReader;
  writer: WriterClient;
  clock: Clock;
  /** Read at each request: the listen port is known only after registration (withListenPort). */
  config(): Readonly<Config>;
  log: Logger;
  inFlight: InFlight;
  /** The anonymous share of the body budget: sign-in bodies arrive before any credential. */
  bodies: BodyBudget;
  signInLimits: SignInLimits;
  /** The tally's reads (an experiment's results). */
  events: EventCounter;
  /** Work that grows with a body and reads the store (a fragment's change prepared: src/side-work). */
  sideThread: SideThread;
}

/** The request's values, read in the handler before anything async (uWS's request lives on the stack). */
interface ConsoleRequest {
  method: string;
  /** The path after /console/api/. */
  rest: string;
  query: URLSearchParams;
  cookie: string;
  origin: string;
  csrf: string;
  contentType: string;
  contentLength: string;
  /** The If-Match header ('' when absent): an approval may name the request's version by its ETag. */
  ifMatch: string;
  address: string;
  /** Reached over HTTPS: the base URL is https, or a trusted proxy says so (X-Forwarded-Proto). */
  secure: boolean;
  /** The origins a change may come from: this server's, as the browser addressed it and as configured. */
  origins: readonly string[];
}

const kApiHeaders = [['Cache-Control', 'no-store']] as const;
const kIconHeaders = [['Cache-Control', 'public, max-age=86400']] as const;
export const kCsrfHeader = 'x-flagwire-csrf';
const kSignInForm = compileForm(SignInRequest);
const kJoinForm = compileForm(JoinRequest);
const kInvitationForm = compileForm(InvitationRequest);

export function registerConsole(app: TemplatedApp, deps: ConsoleDeps): void {
  const config = deps.config();
  const proxies = config.trustedProxies.length === 0 ? null : new TrustedProxies(config.trustedProxies);
  const sessions = new ConsoleSessions(deps.store, deps.writer, deps.clock, deps.signInLimits, config.consoleSessionMs);
  const assets = loadAssets();

  const page = (res: HttpResponse) => sendSameOrigin(res, 200, assets.page, 'text/html; charset=utf-8', kPageHeaders);
  registerRoutes(app, kRoutes, {
    consolePage: page,
    consolePageSlash: page,
    consoleAsset: (res, req) => {
      const asset = assets.files.get(req.getParameter(0) ?? '');
      const body = asset?.body() ?? null;
      if (asset === undefined || body === null) sendSameOrigin(res, 404, 'Not found\n', 'text/plain; charset=utf-8', kPageHeaders);
      else sendSameOrigin(res, 200, body, asset.contentType, [...kPageHeaders, ['Cache-Control', 'no-cache']]);
    },
    // No CORS for the console: a preflight is answered without Access-Control-Allow-*, so a browser never
    // sends another origin's request with custom headers (the app's catch-all preflight allows any origin).
    // Asked by the browser on every page of the origin: the console's tab gets an icon, not a 404.
    favicon: (res) => sendSameOrigin(res, 200, kFavicon, 'image/x-icon', kIconHeaders),
    consolePreflight: (res) => sendSameOrigin(res, 204, '', 'text/plain', kApiHeaders),
    consoleApi: (res, req) => handleApi(res, req, { deps, proxies, sessions }),
  });
}

type Headers = readonly (readonly [string, string])[];

/** What every /console/api request is handled with, made once at registration. */
interface ApiContext {
  readonly deps: ConsoleDeps;
  readonly proxies: TrustedProxies | null;
  readonly sessions: ConsoleSessions;
}

/** One /console/api request's answers: every path through handleApi ends in exactly one of them. */
class ApiAnswer {
  constructor(
    private readonly res: PendingResponse,
    private readonly request: ConsoleRequest,
    private readonly deps: ConsoleDeps,
  ) {}

  /** The error's envelope (an unexpected one logged and answered as a 500), with Retry-After where it has one. */
  readonly fail = (err: unknown, headers: Headers = [], closeConnection = false): void => {
    const { deps, request } = this;
    // Not applied, but held as a change request (docs/approvals.md): 202 with the request.
    if (err instanceof ChangeRequested) {
      sendSameOrigin(this.res, 202, JSON.stringify(changeRequestedBody(err)), 'application/json', [...kApiHeaders, ...headers]);
      return;
    }
    const error = answerableError(err, (e) =>
      deps.log.error({ err: e, method: request.method, path: request.rest }, 'unexpected error in the web console'),
    );
    const config = deps.config();
    const seconds = retryAfterSeconds(error, config.writeTimeoutMs);
    const retry = seconds === null ? [] : [['Retry-After', String(seconds)] as const];
    sendSameOrigin(
      this.res,
      error.status,
      JSON.stringify(errorEnvelope(error, config.docsUrl)),
      'application/json',
      [...kApiHeaders, ...retry, ...headers],
      closeConnection,
    );
  };

  succeed(value: unknown, headers: Headers = []): void {
    sendSameOrigin(this.res, 200, JSON.stringify(value ?? null), 'application/json', [...kApiHeaders, ...headers]);
  }

  /** Answers with what `work` resolves to; keeps the server's drain waiting for it. */
  run(work: () => unknown, headers: Headers = []): void {
    const done = this.deps.inFlight.start();
    Promise.resolve()
      .then(work)
      .then(
        (value) => this.succeed(value, headers),
        (err: unknown) => this.fail(err),
      )
      .finally(done);
  }
}

function handleApi(res: PendingResponse, req: HttpRequest, ctx: ApiContext): void {
  const request = readRequest(res, req, ctx.deps.config(), ctx.proxies);
  const answer = new ApiAnswer(res, request, ctx.deps);
  try {
    dispatchApi(res, request, ctx, answer);
  } catch (err) {
    answer.fail(err);
  }
}

/** Checks the origin, then signs in, signs out, or runs the matched route for the signed-in user. */
function dispatchApi(res: PendingResponse, request: ConsoleRequest, ctx: ApiContext, answer: ApiAnswer): void {
  const { deps, sessions } = ctx;
  const changes = request.method !== 'GET' && request.method !== 'HEAD';
  // spec-beyond: CSRF. Every change must say it comes from this origin; browsers always send Origin on
  // a POST, PATCH or DELETE, so a missing one is refused too.
  if (changes && !request.origins.includes(request.origin)) {
    throw new FlagwireError(
      'CROSS_SITE_REQUEST',
      `Changes are accepted only from this server's own pages (Origin ${request.origin === '' ? 'missing' : `"${request.origin}"`}).`,
    );
  }
  if (request.rest === 'sign-in' && request.method === 'POST') {
    readBody(res, request, deps, answer.fail, (received) =>
      startSession(ctx, request, answer, () => {
        const body = kSignInForm.read(received);
        return sessions.signIn(body.email, body.password, request.address);
      }),
    );
    return;
  }
  // The invitation link's page: no session yet, the link's token is the credential (sessions.join).
  if (request.rest === 'join' && request.method === 'POST') {
    readBody(res, request, deps, answer.fail, (received) =>
      startSession(ctx, request, answer, () => sessions.join(kJoinForm.read(received))),
    );
    return;
  }
  // The join page reads its invitation first (the organisation, the address, the role): the link's token again.
  if (request.rest === 'join/invitation' && request.method === 'POST') {
    readBody(res, request, deps, answer.fail, (received) => answer.run(() => sessions.invitation(kInvitationForm.read(received))));
    return;
  }
  const current = sessions.current(request.cookie);
  if (request.rest === 'sign-out' && request.method === 'POST') {
    // Signing out without a session still clears the cookie; with one, it ends it in the store.
    trackAbort(res);
    if (current !== null && !isCsrfToken(current.session, request.csrf)) throw csrfRefused();
    answer.run(async () => {
      if (current !== null) await sessions.signOut(current.session);
      return { signedIn: false };
    }, [['Set-Cookie', sessionCookie('', 0, request.secure)]]);
    return;
  }
  if (current === null) {
    throw new FlagwireError('NOT_SIGNED_IN', 'Sign in first: the request has no session, or its session expired or was ended.');
  }
  const matched = matchApiRoute(request.method, request.rest);
  if (changes && !isCsrfToken(current.session, request.csrf)) throw csrfRefused();
  if (changes) {
    readBody(res, request, deps, answer.fail, (received) => answer.run(() => callRoute(deps, request, matched, current, received)));
  } else {
    trackAbort(res);
    answer.run(() => callRoute(deps, request, matched, current, null));
  }
}

function callRoute(
  deps: ConsoleDeps,
  request: ConsoleRequest,
  matched: ReturnType<typeof matchApiRoute>,
  current: CurrentSession,
  received: ReceivedBody | null,
): unknown {
  deps.store.resetReadTxn();
  const principal = sessionPrincipal(current.session);
  const scope = scopeOf(principal);
  const apiCall: ApiCall = {
    params: matched.params,
    query: request.query,
    received,
    ifMatch: request.ifMatch,
    user: current.user,
    session: current.session,
    principal,
    store: scope === null ? deps.store : scopedStore(deps.store, scope),
    writer: deps.writer,
    events: deps.events,
    sideThread: deps.sideThread,
    config: deps.config(),
    now: deps.clock.now(),
  };
  return matched.route.run(apiCall);
}

/** A sign-in or a join: the new session's cookie, and the user and CSRF token for the page. */
function startSession(ctx: ApiContext, request: ConsoleRequest, answer: ApiAnswer, work: () => Promise<SignedIn>): void {
  const { deps } = ctx;
  const done = deps.inFlight.start();
  Promise.resolve()
    .then(work)
    .then(
      (signedIn) => {
        // The session id goes only into the HttpOnly cookie, never into the JSON the page's script reads.
        const cookie = sessionCookie(signedIn.id, signedIn.session.expiresAt - deps.clock.now(), request.secure);
        answer.succeed({ user: signedIn.user, csrfToken: signedIn.session.csrfToken, expiresAt: signedIn.session.expiresAt }, [
          ['Set-Cookie', cookie],
        ]);
      },
      (err: unknown) => answer.fail(err),
    )
    .finally(done);
}

function csrfRefused(): FlagwireError {
  return new FlagwireError(
    'CROSS_SITE_REQUEST',
    "The request lacks this page's CSRF token (X-Flagwire-CSRF); reload the console and retry.",
  );
}

function readRequest(res: HttpResponse, req: HttpRequest, config: Readonly<Config>, proxies: TrustedProxies | null): ConsoleRequest {
  const peer = Buffer.from(res.getRemoteAddressAsText()).toString();
  const secure = config.baseUrl.startsWith('https:') || proxies?.forwardedProto(peer, req.getHeader('x-forwarded-proto')) === 'https';
  const host = req.getHeader('host');
  const origins = [new URL(config.baseUrl).origin];
  if (host !== '') origins.push(`${secure ? 'https' : 'http'}://${host}`);
  return {
    method: req.getMethod().toUpperCase(),
    rest: req.getUrl().slice('/console/api/'.length),
    query: new URLSearchParams(req.getQuery() ?? ''),
    cookie: req.getHeader('cookie'),
    origin: req.getHeader('origin'),
    csrf: req.getHeader(kCsrfHeader),
    contentType: req.getHeader('content-type'),
    contentLength: req.getHeader('content-length'),
    ifMatch: req.getHeader('if-match'),
    address: proxies === null ? peer : proxies.clientAddress(peer, req),
    secure,
    origins,
  };
}

function readBody(
  res: PendingResponse,
  request: ConsoleRequest,
  deps: ConsoleDeps,
  fail: (err: unknown, headers: readonly (readonly [string, string])[], closeConnection: boolean) => void,
  then: (received: ReceivedBody) => void,
): void {
  const done = deps.inFlight.start();
  deps.bodies.read(
    res,
    request.contentLength,
    (body) => {
      done();
      if (!body.ok) {
        fail(bodyRefusal(body.reason), [], body.closes);
        return;
      }
      // The request's own bytes (keepBody): released from the budget now, kept by the route, moved to the writer.
      const received = { bytes: keepBody(body.body), contentType: request.contentType };
      body.release();
      then(received);
    },
    done,
  );
}

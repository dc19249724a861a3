// The uWebSockets.js app: every route of the service, wired to its handlers.
import * as uWS from 'uWebSockets.js';
import { registerManagementRoutes, type ManagementDeps } from '../api/management.js';
import { answerRelayReadOnly } from '../api/relay-refusal.js';
import { errorBody, errorEnvelope, FlagwireError } from '../errors.js';
import { answerPreflight } from '../http/cors.js';
import { guardFraming } from '../http/framing.js';
import { guardDrain } from '../http/in-flight.js';
import { renderDocsPage } from './docs-page.js';
import { encodeHealth } from './health.js';
import { send, type RouteGroup } from '../http/http.js';
import { kRoutes, registerRoutes } from '../routes/route-table.js';
import { kCapabilityServiceRoutes, routeNumber } from '../all-routes.js';
import { kRouteDocs, kRouteHealth, kRouteUnmatched } from '../metrics/metrics.js';
import { registerOpenApiRoute } from '../openapi/route.js';
import { recordRoutes } from './route-recorder.js';
import type { BodyBudget } from '../http/body.js';
import { registerConsole } from '../web-console/routes.js';
import type { SignInLimits } from '../http/sign-in-limits.js';
import type { RateLimiter } from '../http/rate-limit.js';

export interface AppDeps extends ManagementDeps {
  evaluation: RouteGroup;
  /** Readiness, metrics, change stream: each registers its routes (before the catch-all). */
  features?: readonly { register(app: uWS.TemplatedApp): void }[];
  /** The web console's body budget (the anonymous share: sign-in bodies come before any credential). */
  consoleBodies: BodyBudget;
  /** The web console's sign-in limits: the process's, shared by every front-end thread. */
  signInLimits: SignInLimits;
  /** Unleash SDK reports per project: the process's, shared by every front-end thread. */
  reportRate: RateLimiter;
  /** A random key made at start, the same on every front-end thread of this process: what a route signs ids the node alone issues with (MCP session ids). */
  nodeKey: Uint8Array;
}

/**
 * The docs page is plain HTML with no script, style, image or form: it may load nothing at all, so
 * markup injected into it could neither run nor send anything anywhere.
 */
const kDocsPageHeaders = [
  ['Content-Security-Policy', "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"],
] as const;

/** `/` answers by the request's Accept: a cache must not give a browser's answer to an API client. */
const kVaryAccept = [['Vary', 'Accept']] as const;
const kToConsole = [['Location', '/console'], ...kVaryAccept] as const;
/** What a client that does not follow redirects shows: where the console is. */
const kToConsoleBody = 'Found: the web console is at /console\n';

/** A relay has no web console: every one of its routes answers the relay's refusal (src/api/relay-refusal.ts). */
function registerRelayConsole(app: uWS.TemplatedApp, deps: AppDeps): void {
  const refuse = (res: uWS.HttpResponse) => answerRelayReadOnly(res, deps.config, deps.writer.relay, null);
  registerRoutes(app, kRoutes, {
    consolePage: refuse,
    consolePageSlash: refuse,
    consoleAsset: refuse,
    consolePreflight: refuse,
    consoleApi: refuse,
  });
}

export function createApp(deps: AppDeps): uWS.TemplatedApp {
  const metrics = deps.metrics ?? null;
  // Every route, test hooks included, behind the shutdown's drain (src/http/in-flight.ts: outermost, so
  // a request arriving once drained is closed before anything of it is read) and the framing check
  // (src/http/framing.ts; closing the connection after the 400 drops whatever bytes followed the
  // doubtful request).
  const app = guardFraming(guardDrain(recordRoutes(uWS.App()), deps.inFlight), (res, problem) => {
    if (metrics) metrics.framingRefused++;
    const body = JSON.stringify(errorEnvelope(new FlagwireError('INVALID_REQUEST', problem), deps.config.docsUrl));
    send(res, 400, body, 'application/json', undefined, true);
  });
  const docsPage = Buffer.from(renderDocsPage());
  const health = () => encodeHealth(deps.store.schemaVersion());
  let healthBody = health();

  // Every preflight, /api/v1 included: uWS prefers a route for the request's method to an `any` route,
  // so the Management API's handler, with its rate limit and failed-auth lockout, never sees an OPTIONS
  // request (spec: CORS, a preflight needs no token; test/api/limits.test.ts).
  registerRoutes(app, kRoutes, {
    preflight: (res, req) => answerPreflight(res, req.getUrl()),
    health: (res) => {
      metrics?.request(kRouteHealth, 200);
      send(res, 200, healthBody);
    },
    docs: (res) => {
      metrics?.request(kRouteDocs, 200);
      send(res, 200, docsPage, 'text/html; charset=utf-8', kDocsPageHeaders);
    },
  });
  // Public, and before /api/v1/* (whose every request needs a token).
  registerOpenApiRoute(app, metrics);
  registerManagementRoutes(app, deps);
  for (const [name, route] of kCapabilityServiceRoutes) app[route.method](route.pattern, route.handler(deps, routeNumber(name)));
  deps.evaluation.register(app);
  if (deps.config.upstream !== null) registerRelayConsole(app, deps);
  else
    registerConsole(app, {
      store: deps.store,
      writer: deps.writer,
      clock: deps.clock,
      config: () => deps.config,
      log: deps.log,
      inFlight: deps.inFlight,
      bodies: deps.consoleBodies,
      signInLimits: deps.signInLimits,
      events: deps.events,
      sideThread: deps.sideThread,
    });
  for (const feature of deps.features ?? []) feature.register(app);
  const notFound = Buffer.from(JSON.stringify(errorBody(new FlagwireError('NOT_FOUND', 'No such route.'))));
  registerRoutes(app, kRoutes, {
    // The spec defines no `/`: a browser (it asks for HTML) is sent to the console, anything else gets
    // the 404 any other path gets, counted as unmatched.
    browserRoot: (res, req) => {
      if (req.getHeader('accept').includes('text/html')) {
        send(res, 302, kToConsoleBody, 'text/plain; charset=utf-8', kToConsole);
        return;
      }
      metrics?.request(kRouteUnmatched, 404);
      send(res, 404, notFound, 'application/json', kVaryAccept);
    },
    unmatched: (res) => {
      metrics?.request(kRouteUnmatched, 404);
      send(res, 404, notFound);
    },
  });
  healthBody = health();
  return app;
}

// What a route declares, and the service's own routes, declared once: its method and path pattern, who
// may call it, whether and under which label the metrics count it, and its OpenAPI operation (summary,
// parameters, request and response schemas). The Management API's routes are declared by the
// capabilities that own them (each one's routes.ts, listed in src/capabilities.ts). Derived:
//   - from this table, the uWS registration: each route set attaches its handlers by route name
//     (registerRoutes below);
//   - from this table and the capabilities' routes, the table of every route (src/all-routes.ts),
//     and from it the metrics' route labels and each counted route's number, the OpenAPI document's
//     paths and the Management API's dispatch behind its /api/v1/* entry, matched once per request
//     (matchManagementRoute).
// test/routes/route-table.test.ts and test/openapi check that every declared route is registered,
// labelled and documented, and that nothing registered is undeclared.
//
// A route declares no number: src/all-routes.ts numbers the labels in the table's order, and whatever
// counts a route is given its number there, at start-up.
import type { TSchema } from '../typebox.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { Health, ReadinessBody } from '../model/probes.js';
import { json, kFramingError } from './openapi-parts.js';

/** uWS's registration methods ('del' is DELETE). */
export type RouteMethod = 'get' | 'post' | 'put' | 'patch' | 'del' | 'options' | 'any';

/**
 * Who may call a route: 'none' (public), 'token' (a Management API bearer token), 'clientKey' (a
 * project's client key, src/client-keys, never an API token: the routes browsers and apps send to),
 * 'session' (a web console session), 'scim' (an organisation's SCIM secret, src/scim), 'test' (test hooks,
 * registered only with FLAGWIRE_TEST_HOOKS=1).
 */
export type RouteAuth = 'none' | 'token' | 'clientKey' | 'session' | 'scim' | 'test';

export type OpenApiTag = 'Management API' | 'Evaluation API' | 'OFREP' | 'Events' | 'Sync' | 'Unleash' | 'Service';

/** A route's OpenAPI operation; its security follows from the route's auth. */
export interface RouteDocs {
  readonly operationId: string;
  readonly tag: OpenApiTag;
  readonly summary: string;
  readonly parameters?: readonly object[];
  /**
   * The JSON request body's schema (one of the components, src/routes/openapi-parts.ts); `alsoTextPlain`:
   * the same JSON is taken as text/plain too (what navigator.sendBeacon sends with a string).
   */
  readonly request?: { readonly schema: TSchema; readonly required: boolean; readonly alsoTextPlain?: true };
  /** By status: responses whose schemas are components (json() in src/routes/openapi-parts.ts). */
  readonly responses: Readonly<Record<string, object>>;
  /**
   * false: the answer names the revision it was built at but never waits for Flagwire-Min-Revision
   * (polled or streamed: a flag set, Unleash's client features), so the parameter is not documented.
   */
  readonly waitsForRevision?: false;
}

export interface RouteDeclaration {
  readonly method: RouteMethod;
  /** uWS's form: `:name` is a path parameter, a trailing `*` any rest of the path. */
  readonly pattern: string;
  /**
   * 'uws' (the default): registered on the app. 'management': one of the Management API's routes, which
   * uWS routes to its /api/v1/* entry and the Management API dispatches (src/api/management.ts).
   */
  readonly via?: 'uws' | 'management';
  readonly auth: RouteAuth;
  /**
   * false: not counted in the metrics (a page, an asset, a preflight). Absent: counted under its label,
   * with the route number src/all-routes.ts derives for that label (never declared here).
   */
  readonly counted?: false;
  /** Its metrics label, when not the pattern in OpenAPI's form. */
  readonly label?: string;
  /** Its OpenAPI operation; absent: not in the document (not a public API). */
  readonly docs?: RouteDocs;
}

/**
 * A route of the service's own table: registered on uWS. The Management API's routes are each
 * capability's (src/capabilities.ts), dispatched behind the `management` entry below.
 */
export interface ServiceRoute extends RouteDeclaration {
  readonly via?: 'uws';
}

/** The service's own routes, in the OpenAPI document's order after the Management API's (documented routes first). */
export const kRoutes = {
  // Public, and a static route: uWS routes it here, not to the Management API's /api/v1/* entry.
  openApi: {
    method: 'get',
    pattern: '/api/v1/openapi.json',
    auth: 'none',
    docs: {
      operationId: 'openApi',
      tag: 'Service',
      summary: 'This document',
      responses: {
        '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } },
        ...kFramingError,
      },
    },
  },
  health: {
    method: 'get',
    pattern: '/health',
    auth: 'none',
    docs: {
      operationId: 'health',
      tag: 'Service',
      summary: 'Liveness: the process answers',
      responses: { '200': json(Health, 'Alive'), ...kFramingError },
    },
  },
  ready: {
    method: 'get',
    pattern: '/ready',
    auth: 'none',
    docs: {
      operationId: 'ready',
      tag: 'Service',
      summary: 'Readiness: the store and every eval worker answer (load balancers route on it)',
      responses: { '200': json(ReadinessBody, 'Ready to serve'), ...kFramingError, '503': json(ReadinessBody, 'Not ready (or stopping)') },
    },
  },
  metrics: {
    method: 'get',
    pattern: '/metrics',
    auth: 'none',
    docs: {
      operationId: 'metrics',
      tag: 'Service',
      summary: 'Prometheus metrics (absent with FLAGWIRE_METRICS=off)',
      responses: {
        '200': { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
        ...kFramingError,
      },
    },
  },
  docs: {
    method: 'get',
    pattern: '/docs',
    auth: 'none',
    docs: {
      operationId: 'docs',
      tag: 'Service',
      summary: "Error documentation, one anchor per error (the envelope's docs links)",
      responses: {
        '200': { description: 'Error documentation (one anchor per error)', content: { 'text/html': { schema: { type: 'string' } } } },
        ...kFramingError,
      },
    },
  },
  // Every CORS preflight, /api/v1 included (src/http/cors.ts).
  preflight: { method: 'options', pattern: '/*', auth: 'none', counted: false },
  // The Management API's entry: the capabilities' Management API routes are dispatched from here; any
  // other path under /api/v1 is a 404 counted under this label.
  management: { method: 'any', pattern: '/api/v1/*', auth: 'token' },
  // The web console (src/web-console/routes.ts): same-origin pages and JSON endpoints, not a public API.
  consolePage: { method: 'get', pattern: '/console', auth: 'none', counted: false },
  consolePageSlash: { method: 'get', pattern: '/console/', auth: 'none', counted: false },
  consoleAsset: { method: 'get', pattern: '/console/assets/:file', auth: 'none', counted: false },
  consolePreflight: { method: 'options', pattern: '/console/*', auth: 'none', counted: false },
  consoleApi: { method: 'any', pattern: '/console/api/*', auth: 'session', counted: false },
  // What a browser asks of the origin itself: `/` typed in the address bar (HTML: to the console; an API
  // client keeps the catch-all's 404, counted as unmatched) and the tab's icon (docs/decisions.md).
  browserRoot: { method: 'get', pattern: '/', auth: 'none', counted: false },
  favicon: { method: 'get', pattern: '/favicon.ico', auth: 'none', counted: false },
  // Test hooks (src/server/test-hooks.ts), with FLAGWIRE_TEST_HOOKS=1 only.
  testRoutes: { method: 'get', pattern: '/__test/routes', auth: 'test', counted: false },
  testClock: { method: 'post', pattern: '/__test/clock', auth: 'test', counted: false },
  testFault: { method: 'post', pattern: '/__test/fault', auth: 'test', counted: false },
  testFlush: { method: 'post', pattern: '/__test/flush', auth: 'test', counted: false },
  testWriterIdle: { method: 'post', pattern: '/__test/writer-idle', auth: 'test', counted: false },
  // Last: every request no route above matched.
  unmatched: { method: 'any', pattern: '/*', auth: 'none', label: 'unmatched' },
} as const satisfies Record<string, ServiceRoute>;

/** `/v1/flags/:flag_id` in OpenAPI's form: `/v1/flags/{flag_id}`. */
export function openApiPath(pattern: string): string {
  return pattern.replace(/:([a-z_]+)/g, '{$1}');
}

/** A route's method as OpenAPI names it: uWS's `del` is `delete`. */
export function openApiMethod(method: RouteDeclaration['method']): string {
  return method === 'del' ? 'delete' : method;
}

/** A counted route's metrics label. */
export function routeLabel(route: RouteDeclaration): string {
  return route.label ?? openApiPath(route.pattern);
}

export type RouteHandler = (res: HttpResponse, req: HttpRequest) => void;

/**
 * Registers each handler at its route's method and pattern, in the order given (uWS prefers a static
 * segment to a parameter and a parameter to a wildcard whatever the order).
 */
export function registerRoutes<T extends RouteDeclarations>(
  app: TemplatedApp,
  routes: T,
  handlers: { readonly [K in keyof T]?: RouteHandler },
): void {
  for (const [name, handler] of Object.entries(handlers) as [keyof T, RouteHandler][]) {
    const route: RouteDeclaration = routes[name];
    app[route.method](route.pattern, handler);
  }
}

/** Routes declared by name: the service's own (kRoutes), a capability's, a route set's. */
export type RouteDeclarations = Readonly<Record<string, RouteDeclaration>>;

/**
 * The numbers of a table of routes, by name: what src/all-routes.ts derives from every declaration
 * (routeNumbers), given at start-up to whatever counts those routes or carries their number (an
 * evaluation route set, the change stream). Nothing below the capabilities' list derives a number.
 */
export type RouteNumbers<T extends RouteDeclarations> = { readonly [K in keyof T]: number };

/** Where answers are counted by route number and status (src/metrics/metrics.ts; null where metrics are off). */
export interface RouteCounts {
  request(route: number, status: number): void;
}

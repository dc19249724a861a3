// Every route: each capability's Management API routes (src/capabilities.ts) and the service's own
// (src/routes/route-table.ts), in one table, and what is derived from it: the metrics' route labels, the
// Management API's dispatch and its route numbers. The OpenAPI document reads the same table
// (src/openapi/document.ts). test/routes/route-table.test.ts checks the derivations.
import { kCapabilityRoutes, kCapabilityServiceRoutes } from './capabilities.js';
import type { ManagementHandler } from './routes/handler.js';
import type { ManagementRouteSpec } from './capability/capability.js';
import { compilePattern, decodeParams, matchesSegments, type PathPattern } from './http/route-pattern.js';
import { kRoutes, routeLabel, type RouteDeclaration } from './routes/route-table.js';

/**
 * The capabilities' Management API routes by route number: the order they were numbered in, so the
 * API's document lists them as it always has whatever the capabilities' order (a number's routes, such
 * as a path's GET and POST, in their capability's order).
 */
const kApiRoutes: readonly (readonly [string, ManagementRouteSpec])[] = [...kCapabilityRoutes].sort(([, a], [, b]) => a.metric - b.metric);

/**
 * Every route by name, in the OpenAPI document's order: the Management API's routes, the capabilities'
 * other routes, then the service's own. A name declared twice is a start-up error.
 */
export const kAllRoutes: Readonly<Record<string, RouteDeclaration>> = allRoutes();

function allRoutes(): Record<string, RouteDeclaration> {
  const table: Record<string, RouteDeclaration> = {};
  for (const [name, route] of [...kApiRoutes, ...kCapabilityServiceRoutes, ...Object.entries(kRoutes)]) {
    if (Object.hasOwn(table, name)) throw new Error(`route ${name} is declared twice`);
    table[name] = route;
  }
  return table;
}

/** The metrics' route labels, by route number; throws when numbers leave a gap or two labels claim one number. */
function routeLabels(): string[] {
  const labels: string[] = [];
  for (const route of Object.values(kAllRoutes)) {
    if (route.metric === null) continue;
    const label = routeLabel(route);
    if (labels[route.metric] !== undefined && labels[route.metric] !== label)
      throw new Error(`route number ${route.metric} has two labels: ${labels[route.metric]} and ${label}`);
    labels[route.metric] = label;
  }
  for (let i = 0; i < labels.length; i++) if (labels[i] === undefined) throw new Error(`no route has number ${i}`);
  if (labels.length > 256) throw new Error("route numbers must fit the evaluation batch's u8");
  return labels;
}

/**
 * The Management API's routes declared outside /api/v1 (the native snapshot, src/snapshots): uWS gives
 * each an entry of its own into the same pipeline, which /api/v1/* covers for the others.
 */
export const kManagementRoutesOutsideApi: readonly ManagementRouteSpec[] = kApiRoutes
  .map(([, route]) => route)
  .filter((route) => !route.pattern.startsWith('/api/v1/'));

/** The metrics' route labels, by route number. */
export const kRouteLabels: readonly string[] = routeLabels();

/** A Management API route, compiled for its dispatch (src/api/management.ts) and its metrics label. */
export interface ManagementRoute {
  readonly name: string;
  /** Its HTTP method, as uWS's getMethod() gives it upper-cased. */
  readonly method: string;
  readonly path: PathPattern;
  readonly metric: number;
  readonly handler: ManagementHandler;
}

/** The Management API's routes, in the document's order (a path's methods in that order). */
export const kManagementRoutes: readonly ManagementRoute[] = kApiRoutes.map(([name, route]) => ({
  name,
  method: route.method === 'del' ? 'DELETE' : route.method.toUpperCase(),
  path: compilePattern(route.pattern),
  metric: route.metric,
  handler: route.handler,
}));

/**
 * A Management API request's route, matched once by its pipeline (src/api/management.ts) and passed
 * along: to the handler (its name and parameters), to the 404 (the methods the path accepts) and to
 * the metrics (its route number).
 */
export interface ManagementMatch {
  /** The route of the path and method; null: a 404 (no route has the path, or none has the method). */
  readonly route: ManagementRoute | null;
  /** The route's path parameters, decoded ({} when `route` is null). */
  readonly params: Readonly<Record<string, string>>;
  /** The routes of the path (parameters decodable), whatever their method: what a method's 404 names. */
  readonly pathRoutes: readonly ManagementRoute[];
  /**
   * The request's route number: the first route with the path's shape whatever the method (an
   * undecodable id is still the flag route's), or the /api/v1/* entry's when none has it.
   */
  readonly metric: number;
}

/** The Management API route of `method` (upper case) and `path`, in one walk of the table. */
export function matchManagementRoute(method: string, path: string): ManagementMatch {
  const segments = path.split('/');
  let metric: number | null = null;
  const pathRoutes: ManagementRoute[] = [];
  for (const route of kManagementRoutes) {
    if (!matchesSegments(route.path, segments)) continue;
    metric ??= route.metric;
    const params = decodeParams(route.path, segments);
    if (params === null) continue;
    if (route.method === method) return { route, params, pathRoutes, metric };
    pathRoutes.push(route);
  }
  return { route: null, params: {}, pathRoutes, metric: metric ?? kRoutes.management.metric };
}

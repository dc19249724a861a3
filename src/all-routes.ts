// Every route: each capability's (src/capabilities.ts) and the service's own (src/routes/route-table.ts),
// in one table, and what is derived from it: the metrics' route labels and every counted route's
// number, the Management API's dispatch and its uWS entries outside /api/v1. The OpenAPI document reads
// the same table (src/openapi/document.ts). test/routes/route-table.test.ts and
// test/capability/registry.test.ts check the derivations.
//
// Route numbers are derived, never declared: a counted route's number is the index of its label among
// the labels in the table's order (the routes of one path share it), so a new route is given one by
// being declared. Whatever reads a number (the metrics, the evaluation batch, a route set's handlers,
// the Management API's dispatch) is given it here, once, at start-up.
//
// The capabilities' routes are loaded on use (OnUse, src/capability/capability.ts): this module loads them
// when it loads, and only a front end imports it, so the writer thread and the command line never do.
import { kCapabilityList } from './capabilities.js';
import type { ManagementHandler, RouteErrorBody } from './routes/handler.js';
import { type Capability, loadPart, type ManagementRouteSpec, type ServiceRouteSpec } from './capability/capability.js';
import { compilePattern, decodeParams, matchesSegments, type PathPattern } from './http/route-pattern.js';
import { kRoutes, routeLabel, type RouteDeclaration, type RouteDeclarations, type RouteNumbers } from './routes/route-table.js';

/** Every route of a list of capabilities and the service, and the metrics' numbering of them. */
export interface RouteTable {
  /**
   * Every route by name, in the OpenAPI document's order: the capabilities' Management API routes, their
   * other routes (service and hosted, in the capabilities' order), then the service's own.
   */
  readonly routes: Readonly<Record<string, RouteDeclaration>>;
  /** The capabilities' Management API routes by name, in the table's order. */
  readonly api: readonly (readonly [string, ManagementRouteSpec])[];
  /** The capabilities' routes outside the Management API (their serviceRoutes) by name, in the table's order. */
  readonly service: readonly (readonly [string, ServiceRouteSpec])[];
  /** The metrics' route labels, by route number: each counted label once, in the table's order. */
  readonly labels: readonly string[];
  /** A counted route's number by its name: the index of its label. */
  readonly numbers: ReadonlyMap<string, number>;
}

/**
 * The route table of `capabilities` (src/capabilities.ts's list; a test adds one of its own). A name
 * declared twice, or more labels than the evaluation batch's u8 can number, is a start-up error.
 */
export async function routeTable(capabilities: readonly Capability[]): Promise<RouteTable> {
  const [apiParts, serviceParts, hostedParts] = await Promise.all([
    loadPart(capabilities, 'routes'),
    loadPart(capabilities, 'serviceRoutes'),
    loadPart(capabilities, 'hostedRoutes'),
  ]);
  const api = apiParts.flatMap((routes) => Object.entries(routes ?? {}));
  const service = serviceParts.flatMap((routes) => Object.entries(routes ?? {}));
  const others = capabilities.flatMap((_, i) => [...Object.entries(serviceParts[i] ?? {}), ...Object.entries(hostedParts[i] ?? {})]);
  const routes: Record<string, RouteDeclaration> = {};
  const labels: string[] = [];
  const numbers = new Map<string, number>();
  const declared: [string, RouteDeclaration][] = [...api, ...others, ...Object.entries(kRoutes)];
  for (const [name, route] of declared) {
    if (Object.hasOwn(routes, name)) throw new Error(`route ${name} is declared twice`);
    routes[name] = route;
    if (route.counted === false) continue;
    const label = routeLabel(route);
    let number = labels.indexOf(label);
    if (number === -1) number = labels.push(label) - 1;
    numbers.set(name, number);
  }
  // An evaluation route's number travels in the evaluation batch as a u8 (src/evaluation/engine/protocol.ts).
  if (labels.length > 256) throw new Error("route numbers must fit the evaluation batch's u8");
  return { routes, api, service, labels, numbers };
}

const kRouteTable = await routeTable(kCapabilityList);

/** Every route by name, in the OpenAPI document's order. */
export const kAllRoutes: Readonly<Record<string, RouteDeclaration>> = kRouteTable.routes;

/** The metrics' route labels, by route number. */
export const kRouteLabels: readonly string[] = kRouteTable.labels;

/** The number of the counted route `name`: throws (at start-up, where every caller asks) for any other name. */
export function routeNumber(name: string): number {
  const number = kRouteTable.numbers.get(name);
  if (number === undefined) throw new Error(`no counted route is named ${name}`);
  return number;
}

/**
 * The numbers of a table of routes declared by a capability (an evaluation route set's, the change
 * streams'), by name: what the front end gives the part that serves them, once, at start-up. Throws
 * for a table whose routes are not the declared ones.
 */
export function routeNumbers<T extends RouteDeclarations>(routes: T): RouteNumbers<T> {
  const numbers: Record<string, number> = {};
  for (const [name, route] of Object.entries(routes)) {
    if (kAllRoutes[name] !== route) throw new Error(`route ${name} is not declared by a capability`);
    numbers[name] = routeNumber(name);
  }
  return numbers as RouteNumbers<T>;
}

/** Every capability's routes outside the Management API, by route name, in the order the capabilities are listed. */
export const kCapabilityServiceRoutes: readonly (readonly [string, ServiceRouteSpec])[] = kRouteTable.service;

/**
 * The Management API's routes declared outside /api/v1 (the native snapshot, src/snapshots): uWS gives
 * each an entry of its own into the same pipeline, which /api/v1/* covers for the others.
 */
export const kManagementRoutesOutsideApi: readonly ManagementRouteSpec[] = kRouteTable.api
  .map(([, route]) => route)
  .filter((route) => !route.pattern.startsWith('/api/v1/'));

/** A Management API route, compiled for its dispatch (src/api/management.ts) and its metrics label. */
export interface ManagementRoute {
  readonly name: string;
  /** Its HTTP method, as uWS's getMethod() gives it upper-cased. */
  readonly method: string;
  readonly path: PathPattern;
  readonly metric: number;
  readonly handler: ManagementHandler;
  /** Its declaration's errorBody; null: the envelope. */
  readonly errorBody: RouteErrorBody | null;
}

/** The Management API's routes, in the document's order (a path's methods in that order). */
export const kManagementRoutes: readonly ManagementRoute[] = kRouteTable.api.map(([name, route]) => ({
  name,
  method: route.method === 'del' ? 'DELETE' : route.method.toUpperCase(),
  path: compilePattern(route.pattern),
  metric: routeNumber(name),
  handler: route.handler,
  errorBody: route.errorBody ?? null,
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

/** The /api/v1/* entry's number: what a path no Management API route has is counted under. */
const kManagementEntry = routeNumber('management');

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
  return { route: null, params: {}, pathRoutes, metric: metric ?? kManagementEntry };
}

// The web console's JSON endpoints under /console/api: one table of routes, each a method, a path
// pattern and what it does, every one declared by a capability (`consoleRoutes`, src/capabilities.ts:
// the session's is the sessions capability's, the home page's the organisations', the playground
// evaluation's). Reads check that the user belongs to the project (src/console-route/access.ts); every
// change is one writer command, the same function the CLI and the Management API call, with the
// signed-in user as who acts, so roles, plans and texts are the writer's.
import { kCapabilityList } from '../capabilities.js';
import { loadPart } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import { compilePattern, matchPath } from '../http/route-pattern.js';
import type { ApiRoute } from '../console-route/call.js';

export type { ApiCall, ApiRoute } from '../console-route/call.js';

/** Every capability's console routes, loaded when this module loads (only a front end imports it: OnUse, src/capability/capability.ts). */
export const kApiRoutes: readonly ApiRoute[] = (await loadPart(kCapabilityList, 'consoleRoutes')).flatMap((routes) => routes ?? []);

export interface MatchedRoute {
  route: ApiRoute;
  params: Record<string, string>;
}

const kCompiledRoutes = kApiRoutes.map((route) => ({ route, path: compilePattern(route.pattern) }));

/** The route for `method` and the path after /console/api/, or why there is none (404 or 405-as-404). */
export function matchApiRoute(method: string, rest: string): MatchedRoute {
  let pathMatched = false;
  for (const { route, path } of kCompiledRoutes) {
    const params = matchPath(path, rest);
    if (params === null) continue;
    pathMatched = true;
    if (route.method === method) return { route, params };
  }
  throw new FlagwireError(
    'NOT_FOUND',
    pathMatched ? `${method} is not a method of /console/api/${rest}.` : `There is no /console/api/${rest}.`,
  );
}

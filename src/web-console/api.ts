// The web console's JSON endpoints under /console/api: one table of routes, each a method, a path
// pattern and what it does, gathered from the page that uses them (api/*.ts). Reads check that the
// user belongs to the project (access.ts); every change is one writer command, the same function the
// CLI and the Management API call, with the signed-in user as `asUserId`, so roles, plans and texts
// are the writer's.
import { FlagwireError } from '../errors.js';
import { kAuditRoutes } from './api/audit.js';
import type { ApiRoute } from './api/call.js';
import { kFlagRoutes } from './api/flags.js';
import { kHomeRoutes } from './api/home.js';
import { kMailRoutes } from './api/mail.js';
import { kMemberRoutes } from './api/members.js';
import { kSettingsRoutes } from './api/settings.js';
import { kTokenRoutes } from './api/tokens.js';

export type { ApiCall, ApiRoute } from './api/call.js';

export const kApiRoutes: readonly ApiRoute[] = [
  ...kHomeRoutes,
  ...kFlagRoutes,
  ...kSettingsRoutes,
  ...kTokenRoutes,
  ...kAuditRoutes,
  ...kMemberRoutes,
  ...kMailRoutes,
];

export interface MatchedRoute {
  route: ApiRoute;
  params: Record<string, string>;
}

/** The route for `method` and the path after /console/api/, or why there is none (404 or 405-as-404). */
export function matchApiRoute(method: string, rest: string): MatchedRoute {
  const segments = rest.split('/');
  let pathMatched = false;
  for (const route of kApiRoutes) {
    const pattern = route.pattern.split('/');
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < pattern.length && ok; i++) {
      const p = pattern[i]!;
      if (p.startsWith(':')) {
        try {
          params[p.slice(1)] = decodeURIComponent(segments[i]!);
        } catch {
          ok = false;
        }
        ok = ok && segments[i] !== '';
      } else {
        ok = p === segments[i];
      }
    }
    if (!ok) continue;
    pathMatched = true;
    if (route.method === method) return { route, params };
  }
  throw new FlagwireError(
    'NOT_FOUND',
    pathMatched ? `${method} is not a method of /console/api/${rest}.` : `There is no /console/api/${rest}.`,
  );
}

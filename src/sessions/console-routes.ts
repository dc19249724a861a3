// The web console's session route: who is signed in, and the CSRF token and expiry of the session the
// console's request already resolved (src/web-console/sessions.ts).
import type { ApiCall, ApiRoute } from '../console-route/call.js';

export function sessionView(call: ApiCall) {
  return { user: call.user, csrfToken: call.session.csrfToken, expiresAt: call.session.expiresAt };
}
export type SessionView = ReturnType<typeof sessionView>;

export const kSessionConsoleRoutes: readonly ApiRoute[] = [{ method: 'GET', pattern: 'session', run: sessionView }];

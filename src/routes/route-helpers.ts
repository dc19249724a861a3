// What several capabilities' Management API routes share: the token as who asks.
import type { Principal } from '../actor/audit-actor.js';
import type { AuthContext } from '../model/token-access.js';

/** The request's token as who asks: the writer authorises it again as it applies the change. */
export function tokenPrincipal(auth: AuthContext): Principal {
  return { kind: 'token', tokenId: auth.token.id };
}

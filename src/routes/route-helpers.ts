// What several capabilities' Management API routes share: the token as who asks, and the checks of a
// write to one flag made before its body is read (a flag's PATCH, and a release plan's scheduled change
// or rollout, which patch it).
import type { Principal } from '../audit/audit-actor.js';
import { requirePatchTarget } from '../model/lookups.js';
import type { AuthContext } from '../model/token-access.js';
import type { ApiRequest, HandlerDeps } from './handler.js';

/** The request's token as who asks: the writer authorises it again as it applies the change. */
export function tokenPrincipal(auth: AuthContext): Principal {
  return { kind: 'token', tokenId: auth.token.id };
}

/**
 * A write to one flag (PATCH, a scheduled change, a rollout): 404 and 403 before its body is read for a
 * flag that cannot be changed (the writer checks both again, in the transaction that writes); a problem
 * with `env` itself is a 400, reported by the writer with the body's problems (spec: PATCH rule 9).
 */
export function precheckFlagChange(request: ApiRequest, auth: AuthContext, { store }: HandlerDeps): void {
  requirePatchTarget(store, auth.project.id, request.flagId!, request.query.get('env'), auth.token.environments);
}

// Whether a Management API token may act now (spec: Authentication, Management API; States and
// transitions). One rule for both places that ask it: the request path (src/api/management.ts), and
// the writer's transaction that applies the token's change (src/flags/flag-commands.ts), which asks
// again because the token, its project or its organisation may have changed while the change waited
// for the write lock: a write is authorised when it is applied, not only when it arrives.
import { FlagwireError } from '../../errors.js';
import type { Org } from '../accounts.js';
import type { RecordReader } from './lookups.js';
import { secretStatus } from '../permissions.js';
import { isManagementEligible } from '../plans.js';
import type { Project } from '../projects.js';
import type { Token } from '../tokens.js';
import { getOrg } from './org-records.js';
import { getProject } from './project-records.js';
import { getToken } from './token-records.js';

export interface AuthContext {
  token: Token;
  project: Project;
  org: Org;
}

export type AccessReader = Pick<RecordReader, 'getKeyed'>;

export function unknownToken(): FlagwireError {
  return new FlagwireError('UNKNOWN_TOKEN', 'This token does not exist; create one in the console.');
}

/** A real token may still be refused: 401 when revoked or expired, 402 when its organisation may not use the API now. */
export function authorizeToken(r: AccessReader, token: Token, now: number): AuthContext {
  const status = secretStatus(token, now);
  if (status === 'revoked') {
    throw new FlagwireError(
      'TOKEN_REVOKED',
      token.revokedReason === undefined
        ? 'This token has been revoked; use its replacement or create a new one.'
        : `This token has been revoked: ${token.revokedReason}.`,
    );
  }
  if (status === 'expired') throw new FlagwireError('TOKEN_EXPIRED', 'This token has expired; create a new one in the console.');
  const project = getProject(r, token.projectId);
  const org = project?.orgId ? getOrg(r, project.orgId) : undefined;
  if (!project || !org) throw new FlagwireError('UNKNOWN_TOKEN', 'This token no longer belongs to a project.');
  if (!isManagementEligible(org, now)) {
    throw new FlagwireError(
      'PLAN_REQUIRED',
      'The Management API needs the Teams or Enterprise plan (or an active Teams trial) in good standing; this token works again once the organisation is.',
    );
  }
  return { token, project, org };
}

export function requireWrite(auth: AuthContext): void {
  if (auth.token.permission !== 'write') {
    throw new FlagwireError('INSUFFICIENT_PERMISSION', 'This token has read permission; this endpoint needs write permission.');
  }
}

/**
 * The writer's check of a token's write as it is applied: the token as the transaction reads it (on
 * PostgreSQL, the node's copy brought to the revision whose lock the transaction holds), the same
 * checks in the same order as the request's, so a refusal is the answer a request sent now gets.
 */
export function authorizeTokenWrite(r: AccessReader, tokenId: string, now: number): AuthContext {
  const token = getToken(r, tokenId);
  if (token === undefined) throw unknownToken();
  const auth = authorizeToken(r, token, now);
  requireWrite(auth);
  return auth;
}

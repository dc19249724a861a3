// Bearer-token authentication of the Management API (spec: Authentication, Management API).
import { FlagwireError } from '../errors.js';
import type { Org } from '../model/accounts.js';
import { hashSecret, kTokenPrefix } from '../model/ids.js';
import { isManagementEligible } from '../model/plans.js';
import type { Project } from '../model/projects.js';
import type { Token } from '../model/tokens.js';
import type { StoreReader } from '../store/interfaces.js';

export interface AuthContext {
  token: Token;
  project: Project;
  org: Org;
}

// `<scheme> <token>`: the scheme is matched case-insensitively (RFC 9110 §11.1: `bearer` is `Bearer`),
// the token exactly, as its hash is looked up.
const kCredentials = /^(\S+)\s+(\S+)\s*$/;
const kTokenShape = new RegExp(`^${kTokenPrefix}_[A-Za-z0-9]{16,128}$`);

/**
 * The token an `Authorization` header names, or a 401 for a missing, malformed or unknown token:
 * the failures that count toward the per-IP lockout.
 */
export function identifyToken(store: StoreReader, header: string): Token {
  if (header === '') {
    throw new FlagwireError('MISSING_TOKEN', 'Send the API token in the header "Authorization: Bearer <token>".');
  }
  const match = kCredentials.exec(header);
  const secret = match !== null && match[1]!.toLowerCase() === 'bearer' ? match[2]! : '';
  if (!kTokenShape.test(secret)) {
    throw new FlagwireError('MALFORMED_TOKEN', `The Authorization header must be "Bearer ${kTokenPrefix}_<secret>".`);
  }
  const token = store.getTokenByHash(hashSecret(secret));
  if (!token) throw new FlagwireError('UNKNOWN_TOKEN', 'This token does not exist; create one in the console.');
  return token;
}

/** A real token may still be refused: 401 when revoked or expired, 402 when its organisation may not use the API now. */
export function authorizeToken(store: StoreReader, token: Token, now: number): AuthContext {
  if (token.revokedAt !== null) throw new FlagwireError('TOKEN_REVOKED', 'This token has been revoked; use its replacement or create a new one.');
  if (token.expiresAt !== 0 && token.expiresAt <= now) {
    throw new FlagwireError('TOKEN_EXPIRED', 'This token has expired; create a new one in the console.');
  }
  const project = store.getProject(token.projectId);
  const org = project?.orgId ? store.getOrg(project.orgId) : undefined;
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

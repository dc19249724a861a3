// Management API tokens and what each was last used for (its activity).
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.

export type Permission = 'read' | 'write';

export interface Token {
  id: string;
  projectId: string;
  name: string;
  permission: Permission;
  /** Environment names the token is limited to; [] means every environment. */
  environments: string[];
  /** Unix ms; 0 means never. */
  expiresAt: number;
  createdAt: number;
  createdBy: string;
  /**
   * The user whose rotation made this token (the replacement of another): they were handed its secret,
   * so a change made with it counts as theirs too (docs/approvals.md). Absent: made by `token create`,
   * or by a rotation before rotations were recorded.
   */
  rotatedBy?: string;
  revokedAt: number | null;
  /**
   * Why it was revoked, when something other than a person's Revoke did it (SCIM's deprovisioning of its
   * creator: src/scim): the 401 says it, so a pipeline's failure tells why. Absent: revoked by a person, or live.
   */
  revokedReason?: string;
  /**
   * Unix ms until which a rotated token's old secret still authenticates (rotate's grace period); absent
   * when there was none. Optional: records written before grace periods existed have none.
   */
  graceEndsAt?: number;
  /** Hex SHA-256 of the secret; the secret itself is never stored. */
  secretHash: string;
}

/** What a caller sees of a token: never the secret or its hash. */
export type TokenView = Omit<Token, 'secretHash'>;

export interface TokenRequestRecord {
  at: number;
  method: string;
  path: string;
  status: number;
}

export interface TokenDenialRecord {
  at: number;
  reason: string;
  method: string;
  path: string;
}

export interface TokenActivity {
  tokenId: string;
  lastUsedAt: number | null;
  recent: TokenRequestRecord[];
  denials: TokenDenialRecord[];
  /** When the last denial e-mail was queued; at most one per 24 hours. */
  lastDenialMailAt: number | null;
}

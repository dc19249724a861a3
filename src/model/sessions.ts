// Web console sign-in: a user's password (as a memory-hard hash) and the sessions signed in with it.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.

export interface Credential {
  userId: string;
  /** `scrypt$N$r$p$salt$key` (src/model/passwords.ts); the password itself is never stored. */
  passwordHash: string;
  updatedAt: number;
}

export interface Session {
  /** Hex SHA-256 of the session id: the id itself lives only in the browser's cookie. */
  idHash: string;
  userId: string;
  /** Sent back by the page with every change (the CSRF token); useless without the session's cookie. */
  csrfToken: string;
  createdAt: number;
  /** Unix ms; the session is refused from then on. */
  expiresAt: number;
  /**
   * The organisation whose identity provider signed the person in (single sign-on): the session reaches
   * that organisation alone (src/actor/org-scope.ts). Absent for a password or invitation sign-in.
   */
  orgId?: string;
}

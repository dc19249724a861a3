// Single sign-on's records (OpenID Connect; issue 61 item 1; docs/sso.md): an organisation's OIDC settings,
// the states of sign-ins that came back (each good once), and which identity provider subject is which
// person. Plain data, as every record Flagwire keeps.
import type { Role } from '../model/accounts.js';
import { keyedRecords } from '../store/record-kinds.js';

export interface SsoSettings {
  orgId: string;
  /** The identity provider's issuer URL: discovery is read from <issuer>/.well-known/openid-configuration. */
  issuer: string;
  clientId: string;
  /**
   * The client secret, kept as webhooks keep their signing secret: it must be sent to the identity
   * provider, so it cannot be hashed; no answer, audit entry or export view ever shows it.
   */
  clientSecret: string;
  /** Scopes asked for besides `openid`. */
  scopes: string[];
  /** The ID token claim that lists the person's groups. */
  groupsClaim: string;
  /** Group (as the identity provider names it, matched without case) -> the organisation role its members hold. */
  groupRoles: Record<string, Role>;
  /** A person unknown to the organisation becomes a member at their first sign-in (never while SCIM provisions it). */
  createMembers: boolean;
  /** Password sign-in refused for the organisation's members, except breakGlassUserId's. */
  ssoOnly: boolean;
  /** The one local Owner who keeps signing in with a password while ssoOnly is on. */
  breakGlassUserId: string | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * A sign-in's state, used: written when the browser comes back from the identity provider, so that
 * the state is good once on every node, and dropped after its expiry. (The sign-in under way itself is
 * the browser's sealed cookie, flow-cookie.ts; records an older Flagwire stored at the start carry more
 * fields, unread, and expire alike.)
 */
export interface SsoUsedState {
  /** Hex SHA-256 of the `state` sent to the identity provider. */
  stateHash: string;
  orgId: string;
  expiresAt: number;
}

/** Who an identity provider's subject (`iss` + `sub`) is here. */
export interface SsoIdentity {
  orgId: string;
  subject: string;
  userId: string;
}

export const kSsoSettingsRecords = keyedRecords<SsoSettings>()({
  name: 'ssoSettings',
  database: 'ssoSettings',
  relayed: false,
  key: (s) => s.orgId,
  deletedAs: 'ssoRemoved',
});

export const kSsoFlowRecords = keyedRecords<SsoUsedState>()({
  name: 'ssoFlow',
  database: 'ssoFlows',
  relayed: false,
  key: (f) => f.stateHash,
  // An organisation's used states: the expired ones dropped at its next sign-in.
  indexes: { org: { keysOf: (f: SsoUsedState) => [f.orgId] } },
  deletedAs: 'ssoFlowEnded',
});

export const kSsoIdentityRecords = keyedRecords<SsoIdentity>()({
  name: 'ssoIdentity',
  database: 'ssoIdentities',
  relayed: false,
  key: (i) => `${i.orgId}/${i.subject}`,
  indexes: { user: { keysOf: (i: SsoIdentity) => [i.userId] } },
  deletedAs: 'ssoIdentityRemoved',
});

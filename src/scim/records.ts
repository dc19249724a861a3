// SCIM 2.0 provisioning's records (RFC 7643; docs/scim.md): an organisation's SCIM settings (its bearer
// secret, kept hashed as API tokens are, and which groups give which role), and the Users and Groups the
// identity provider provisioned into it. A SCIM User is a person (src/model/accounts.ts User) with a
// membership of the organisation while active; what the identity provider says of them beyond that (its
// userName, externalId, names, e-mail addresses) is kept here, per organisation, and never changes the
// person's own record, which other organisations see too. Plain data, as every record Flagwire keeps.
import type { Role } from '../model/accounts.js';
import { keyedRecords } from '../store/record-kinds.js';
import type { StoreReader } from '../store/interfaces.js';

export interface ScimSettings {
  orgId: string;
  /** Hex SHA-256 of the bearer secret (src/model/ids.ts hashSecret); the secret itself is never stored. */
  secretHash: string;
  createdAt: number;
  /** When the secret was last made (enable, or rotate). */
  secretAt: number;
  /** Group displayName (as given, matched without case) -> the organisation role its members hold. */
  groupRoles: Record<string, Role>;
}

export interface ScimName {
  formatted?: string;
  givenName?: string;
  familyName?: string;
}

export interface ScimEmail {
  value: string;
  type?: string;
  primary?: boolean;
}

/** Every SCIM resource's own bookkeeping: RFC 7643 §3.1 meta, and the version its ETag names. */
export interface ScimMeta {
  orgId: string;
  id: string;
  externalId: string | null;
  created: number;
  lastModified: number;
  /** One more at each change: meta.version is W/"<version>" (RFC 7644 §3.14). */
  version: number;
}

/** A provisioned person: `id` is the person's user id (`usr_…`). */
export interface ScimUser extends ScimMeta {
  userName: string;
  name: ScimName | null;
  displayName: string | null;
  emails: ScimEmail[];
  /** False: deprovisioned (no membership, sessions ended, their tokens revoked); the record stays. */
  active: boolean;
}

/** A group: `id` is `grp_…`; `members` the user ids of its members (SCIM Users of the organisation). */
export interface ScimGroup extends ScimMeta {
  displayName: string;
  members: string[];
}

const byOrg = { keysOf: (r: ScimMeta) => [r.orgId] };

/**
 * A userName as it is unique and filtered (RFC 7643 §4.1.1: caseExact false): without case, as filter.ts
 * compares it. At most 512 code units (a userName is at most kMaxText, 256; lower case doubles none but
 * U+0130), so it always files.
 */
export function scimUserNameKey(userName: string): string {
  return userName.toLowerCase();
}

export const kScimSettingsRecords = keyedRecords<ScimSettings>()({
  name: 'scimSettings',
  database: 'scimSettings',
  relayed: false,
  key: (s) => s.orgId,
  // A request's secret is found in one lookup.
  indexes: { secret: { keysOf: (s) => [s.secretHash] } },
  deletedAs: 'scimDisabled',
});

export const kScimUserRecords = keyedRecords<ScimUser>()({
  name: 'scimUser',
  database: 'scimUsers',
  relayed: false,
  key: (u) => `${u.orgId}/${u.id}`,
  // By userName without case (tallied: how many an organisation holds) and by externalId: an identity
  // provider's sync asks for one user by either before each write, and each write checks both are
  // unique in the organisation. Neither may cost a read of every user (kMaxScimUsers of them).
  indexes: {
    org: byOrg,
    userName: { keysOf: (u) => [[u.orgId, scimUserNameKey(u.userName)]], tallied: true },
    externalId: { keysOf: (u) => (u.externalId === null ? [] : [[u.orgId, u.externalId]]) },
  },
  deletedAs: 'scimUserDeleted',
});

export const kScimGroupRecords = keyedRecords<ScimGroup>()({
  name: 'scimGroup',
  database: 'scimGroups',
  relayed: false,
  key: (g) => `${g.orgId}/${g.id}`,
  indexes: { org: byOrg },
  deletedAs: 'scimGroupDeleted',
});

/** The organisation's users under `key` of lookup `index` (userName or externalId): at most one, unless being renamed. */
export function orgUsersBy(r: StoreReader, orgId: string, index: 'userName' | 'externalId', key: string): ScimUser[] {
  return r.listKeyedBy(kScimUserRecords, index, [orgId, index === 'userName' ? scimUserNameKey(key) : key]);
}

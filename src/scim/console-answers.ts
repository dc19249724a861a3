// What the SCIM console page reads (GET orgs/:orgId/scim, console-routes.ts): types only, of modules
// that declare nothing of Node's, as the browser's tsconfig checks them through
// src/web-console/api/answers.ts; test/web-console/answer-types.ts checks at build time that the route's
// answer and this type agree, both ways.
import type { Role } from '../model/accounts.js';

/** A provisioned person as the page lists them: what SCIM says of them, and the role they hold now (null: none, deactivated). */
export interface ScimUserEntry {
  id: string;
  userName: string;
  displayName: string | null;
  active: boolean;
  role: Role | null;
  lastModified: number;
}

/** A provisioned group: how many members it has and the role its name is mapped to (null: none). */
export interface ScimGroupEntry {
  id: string;
  displayName: string;
  members: number;
  role: Role | null;
  lastModified: number;
}

/**
 * GET orgs/:orgId/scim, for the organisation's Owners: whether SCIM is on, where the identity provider
 * sends its requests, when the secret was made, the group mappings, and what was provisioned: the
 * latest-changed users and groups (at most `shown` of each; `userCount` and `groupCount` say how many
 * there are) and `lastSync`, when the identity provider last changed a user or group still here.
 */
export interface ScimView {
  orgId: string;
  orgName: string;
  enabled: boolean;
  baseUrl: string;
  secretAt: number | null;
  groupRoles: Record<string, Role>;
  users: ScimUserEntry[];
  userCount: number;
  groups: ScimGroupEntry[];
  groupCount: number;
  shown: number;
  lastSync: number | null;
}

// Organisations, their plans and standing, users and their roles in an organisation.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.

export const kPlans = ['free', 'pro', 'teams', 'enterprise', 'teams-trial'] as const;
export type Plan = (typeof kPlans)[number];

export const kRoles = ['owner', 'admin', 'editor', 'viewer'] as const;

/** RFC 5321's limit for a path; it also keeps an address a valid key of the store's e-mail index. */
export const kMaxEmailLength = 254;
export type Role = (typeof kRoles)[number];

/**
 * The highest role `groupRoles` (a group's name, matched without case -> a role) gives any of `groups`;
 * null when none of them is mapped. SCIM's groups and single sign-on's group claim both map roles so.
 */
export function highestMappedRole(groupRoles: Readonly<Record<string, Role>>, groups: Iterable<string>): Role | null {
  const mapped = new Map(Object.entries(groupRoles).map(([name, role]) => [name.toLowerCase(), role]));
  let best: Role | null = null;
  for (const group of groups) {
    const role = mapped.get(group.toLowerCase());
    if (role !== undefined && (best === null || kRoles.indexOf(role) < kRoles.indexOf(best))) best = role;
  }
  return best;
}

export type Standing = 'good' | 'lapsed';

export interface Org {
  id: string;
  name: string;
  plan: Plan;
  /** Unix ms; only meaningful on `teams-trial`. */
  trialEndsAt: number | null;
  standing: Standing;
  createdAt: number;
}

export interface User {
  id: string;
  email: string;
  name: string;
  createdAt: number;
}

export interface Membership {
  orgId: string;
  userId: string;
  role: Role;
}

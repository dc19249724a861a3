// Organisations, their plans and standing, users and their roles in an organisation.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.

export const kPlans = ['free', 'pro', 'teams', 'enterprise', 'teams-trial'] as const;
export type Plan = (typeof kPlans)[number];

export const kRoles = ['owner', 'admin', 'editor', 'viewer'] as const;

/** RFC 5321's limit for a path; it also keeps an address a valid key of the store's e-mail index. */
export const kMaxEmailLength = 254;
export type Role = (typeof kRoles)[number];

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

// The records Flagwire keeps. Plain data: they are msgpack-encoded in LMDB and cross threads as is.

export const kPlans = ['free', 'pro', 'teams', 'enterprise', 'teams-trial'] as const;
export type Plan = (typeof kPlans)[number];

export const kRoles = ['owner', 'admin', 'editor', 'viewer'] as const;
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

export type ProjectKind = 'single' | 'multi';

export interface Project {
  id: string;
  name: string;
  kind: ProjectKind;
  /** Exactly one of orgId and ownerUserId is set: organisation project or personal project. */
  orgId: string | null;
  ownerUserId: string | null;
  /** Environment names in creation order; always [] on a single-environment project. */
  environments: string[];
  createdAt: number;
}

export interface AudienceRule {
  attribute: string;
  values: string[];
}

export interface Audience {
  id: string;
  projectId: string;
  name: string;
  rules: AudienceRule[];
  updatedAt: number;
}

export interface FlagState {
  enabled: boolean;
  trafficPercentage: number;
  audienceId: string | null;
}

/** One environment of a group flag. `cohorts` is the environment's own override; null inherits the flag-wide list. */
export interface EnvState extends FlagState {
  cohorts: string[] | null;
}

interface FlagBase {
  id: string;
  projectId: string;
  name: string;
  description: string;
  tags: string[];
  /** A single flag's cohort list, or a group flag's flag-wide list. */
  cohorts: string[];
  createdAt: number;
  updatedAt: number;
}

export interface SingleFlag extends FlagBase {
  kind: 'flag';
  state: FlagState;
}

export interface GroupFlag extends FlagBase {
  kind: 'groupflag';
  /** Environments without an entry are at their defaults (see kDefaultEnvState). */
  environments: Record<string, EnvState>;
}

export type Flag = SingleFlag | GroupFlag;

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
  revokedAt: number | null;
  /** Hex SHA-256 of the secret; the secret itself is never stored. */
  secretHash: string;
}

export interface AuditEntry {
  seq: number;
  at: number;
  projectId: string;
  actor: string;
  actorName: string;
  action: string;
  flagId: string | null;
  env: string | null;
  /** Changed fields: before and after. */
  changes: Record<string, { before: unknown; after: unknown }>;
}

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

export interface MailMessage {
  seq: number;
  at: number;
  to: string;
  subject: string;
  text: string;
  sentAt: number | null;
  /** Delivery attempts over SMTP so far, the next one's earliest time, and the last failure. */
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  /** Set when delivery was given up after too many attempts. */
  failedAt: number | null;
}

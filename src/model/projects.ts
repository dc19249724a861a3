// Projects and their audiences.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.
import type { Role } from './accounts.js';

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
  /**
   * The environments whose changes the web console asks to confirm (docs/web-console.md: Protected
   * environments); absent when none is, so a project that never used it keeps its record as it was.
   */
  protectedEnvironments?: string[];
  /**
   * The approval policy (docs/approvals.md): one rule per guarded environment; absent when none is
   * guarded, so a project that never used it keeps its record as it was.
   */
  approvals?: ApprovalRule[];
  /**
   * Days its raw events are kept (docs/events.md: Raw events); absent: none are kept, so a project
   * that never kept them keeps its record as it was.
   */
  rawEventRetentionDays?: number;
  createdAt: number;
}

/** How changes to one guarded environment are approved (src/approvals). */
export interface ApprovalRule {
  /** The environment; null: a single-environment project's one environment. */
  env: string | null;
  /** Approvals a change needs: 1 to 5, each from a different person. */
  required: number;
  /** The roles whose members may approve. */
  roles: Role[];
  /** Whether the person who made the change may approve it (counting as one). */
  allowSelf: boolean;
  /** Tokens (ids) whose changes apply without approval: a pipeline's deliberate choice. */
  bypassTokens: string[];
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

// Projects and their audiences.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.

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

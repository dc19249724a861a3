// The audit log of a project's changes.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.

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

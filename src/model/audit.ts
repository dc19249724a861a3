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
  /**
   * A change applied by an approved change request (docs/approvals.md): the request and who approved it;
   * the entry's actor is the request's author. Absent on every other entry.
   */
  request?: { id: string; approvedBy: { id: string; name: string }[] };
}

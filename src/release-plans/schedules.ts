// Scheduled changes (issue 27): a change a flag accepts (a PATCH body), applied at a given time by the
// node's scheduler (src/release-plans/scheduler.ts), audited as `plan:<id>`. Plain data, like every
// record Flagwire keeps: the store writes them as they are and they cross threads as is.

export type ScheduleStatus = 'pending' | 'applied' | 'failed' | 'cancelled';

export interface ScheduledChange {
  /** `sch_…`; the audit names the change it makes as actor `plan:<id>`. */
  id: string;
  projectId: string;
  flagId: string;
  /** A group flag's environment the change is for; null on a single flag. */
  env: string | null;
  /** The change: a PATCH body of /api/v1/flags/{id} (any of its keys), checked again when it is applied. */
  patch: Record<string, unknown>;
  /** When it falls due (Unix ms). */
  at: number;
  createdAt: number;
  /** Who scheduled it: an audit actor (`token:<id>`, `console`, `user:<id>`) and its name. */
  createdBy: string;
  createdByName: string;
  status: ScheduleStatus;
  /** When it was applied, failed or was cancelled (Unix ms); null while pending. */
  doneAt: number | null;
  /** What happened: `changed`, `no change`, or why it failed or who cancelled it; null while pending. */
  outcome: string | null;
}

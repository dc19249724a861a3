// Change requests (issue 46; docs/approvals.md): a change to a guarded environment, held until it is
// approved, and the release plans that were approved so. Plain data, like every record Flagwire keeps:
// the store writes them as they are and they cross threads as is.
import type { Change } from '../store/changes.js';
import type { NewAuditEntry } from '../store/interfaces.js';
import { keyedRecords } from '../store/record-kinds.js';

export type RequestStatus = 'pending' | 'applied' | 'rejected' | 'withdrawn';
export const kRequestStatuses: readonly RequestStatus[] = ['pending', 'applied', 'rejected', 'withdrawn'];

/** Someone who acted on a request: an audit actor (`user:<id>`, `token:<id>`, `console`) and its name. */
export interface RequestActor {
  id: string;
  name: string;
}

export interface RequestEvent extends RequestActor {
  at: number;
}

export interface RequestNote extends RequestEvent {
  text: string;
}

/**
 * Who made a request's change (or an edit of it), as every rule about authors reads it (authors.ts): a
 * token's change counts as made by the person who created the token, and by whoever rotated it, too.
 */
export interface RequestAuthor extends RequestActor {
  /** A token's change: the token's creator (`user:<id>`). */
  createdBy?: RequestActor;
  /** A token's change: the person whose rotation made the token, when the token records one. */
  rotatedBy?: RequestActor;
}

/**
 * The actor ids an author counts as: itself, and a token's creator and rotator. Read from the record
 * alone, so the pending requests' index by author (below) and the rules of authors.ts share it.
 */
export function identitiesOf(author: RequestAuthor): string[] {
  return [author.id, author.createdBy?.id, author.rotatedBy?.id].filter((id) => id !== undefined);
}

/** Every actor id the request counts as made by. */
export function requestIdentities(request: ChangeRequest): Set<string> {
  return new Set([request.author, ...(request.coAuthors ?? [])].flatMap(identitiesOf));
}

/** An approval that did not count when the request was applied: its approver's role or membership then. */
export interface LapsedApproval extends RequestEvent {
  why: string;
}

export interface ChangeRequest {
  /** `chr_…`. */
  id: string;
  projectId: string;
  status: RequestStatus;
  /** The guarded environments it changes (null: a single-environment project's one). */
  environments: (string | null)[];
  /** What the change is, in a line: its audit actions and the names they name. */
  summary: string;
  author: RequestAuthor;
  /**
   * Others whose edits it holds: who counts as the same person as its author (another of their tokens,
   * a token of theirs and its rotator). Absent: none.
   */
  coAuthors?: RequestAuthor[];
  /** 1 when opened, one more at each edit that changes it: what an approval names (absent: 1, written before versions). */
  version?: number;
  createdAt: number;
  updatedAt: number;
  /** What applying it writes: the change set the command made, in order (audit entries apart). */
  changes: Change[];
  /**
   * The records each change replaces, as they were when it was made or last edited (null: none):
   * base[i] for changes[i]. Applying it is refused if any of them moved since (no lost update).
   */
  base: unknown[];
  /**
   * The release plans (`sch_…`, `rol_…`) and pending change requests (`chr_…`) whose approved or asked-for
   * change would read what this one changes (an audience, a shared fragment): it alters them. Absent on
   * requests made before it was kept.
   */
  alters?: string[];
  /** The audit entries the change wrote, appended when it is applied (with its approvers). */
  audit: NewAuditEntry[];
  /** The approvals given; once applied, those that counted. */
  approvals: RequestEvent[];
  /** Once applied: the approvals given that did not count then (absent: none). */
  lapsed?: LapsedApproval[];
  comments: RequestNote[];
  /** Who rejected or withdrew it, or whose approval applied it; null while pending. */
  decided: (RequestEvent & { text: string }) | null;
}

/**
 * A release plan made by an approved request, or by a bypass token of its environment: what it changes
 * when it runs needs no further approval.
 */
export interface ApprovedPlan {
  planId: string;
  /** The request that made it; null: a bypass token made it (`bypassTokenId`). */
  requestId: string | null;
  bypassTokenId?: string;
  at: number;
}

export const kChangeRequestRecords = keyedRecords<ChangeRequest>()({
  name: 'changeRequest',
  database: 'changeRequests',
  relayed: false,
  key: (request) => request.id,
  // A project's requests, and its pending ones: the gate reads the pending ones at every write to a
  // project with a policy, and never reads the requests of other projects, or those decided. By status:
  // the pending ones of every project, which the console's header counts for the person signed in. By
  // author: the pending ones each actor id counts as an author of (identitiesOf), which the gate reads for
  // every command it refuses that names who asks (gate.ts ownPendingBeneath), so that a refusal costs
  // the asker's own requests, not every pending one of every project.
  indexes: {
    project: { keysOf: (request) => [request.projectId] },
    pending: { keysOf: (request) => (request.status === 'pending' ? [request.projectId] : []) },
    status: { keysOf: (request) => [request.status] },
    pendingBy: { keysOf: (request) => (request.status === 'pending' ? [...requestIdentities(request)] : []) },
  },
});

export const kApprovedPlanRecords = keyedRecords<ApprovedPlan>()({
  name: 'approvedPlan',
  database: 'approvedPlans',
  relayed: false,
  key: (plan) => plan.planId,
});

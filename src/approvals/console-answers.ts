// What the approvals capability's console routes answer (console-routes.ts), as the browser reads them:
// types only, of modules that declare nothing of Node's (the browser's tsconfig checks them through
// src/web-console/api/answers.ts, which hands them on). A request's view is declared here again, as the
// browser may not import request-view.ts (it reads the store); test/web-console/answer-types.ts checks
// at build time that every route's answer and its type here agree, both ways.
import type { Role } from '../model/accounts.js';
import type { ApprovalRule } from '../model/projects.js';
import type { ProjectAccess } from '../console-route/project-access.js';

interface RequestEvent {
  id: string;
  name: string;
  at: number;
}

/** Who made the change; a token's, with the people it counts as made by. */
interface RequestAuthor {
  id: string;
  name: string;
  createdBy?: { id: string; name: string };
  rotatedBy?: { id: string; name: string };
}

/** A change request as every surface shows it: request-view.ts's ChangeRequestView. */
export interface ChangeRequestView {
  id: string;
  projectId: string;
  status: 'pending' | 'applied' | 'rejected' | 'withdrawn';
  environments: (string | null)[];
  summary: string;
  /** What it asks for, in the audit log's words: what the console names it by. */
  title: string;
  author: RequestAuthor;
  coAuthors: RequestAuthor[];
  /** Its authors in words: `token deploy, created by Alice`. */
  authoredBy: string;
  /** What an approval names (`ifVersion`): one more at each edit. */
  version: number;
  createdAt: number;
  updatedAt: number;
  required: number;
  /** The approvals that count (each approver's role judged now, or when it was applied). */
  approvals: RequestEvent[];
  /** Approvals that do not count: the approver was demoted or removed since, and why. */
  lapsed: (RequestEvent & { why: string })[];
  comments: (RequestEvent & { text: string })[];
  decided: (RequestEvent & { text: string }) | null;
  stale: boolean;
  /** Why it is stale; null otherwise. */
  problem: string | null;
  /** A field per line: `field` is its dotted path in the record (`environments.production.enabled`). */
  diff: { record: string; id: string; name: string; field: string; current: unknown; proposed: unknown }[];
  /** The release plans and pending requests that will read what it changes (an audience, a shared fragment). */
  alters: string[];
}

/** A request as the console lists it: its view, and why the signed-in user may not approve or reject it (null: they may). */
export interface RequestEntry extends ChangeRequestView {
  notApprovable: string | null;
}

/** GET projects/:projectId/requests: the pending requests, and the newest decided ones (`more`: older ones exist). */
export interface RequestsView extends ProjectAccess {
  pending: RequestEntry[];
  history: RequestEntry[];
  more: boolean;
}

/** GET requests/:requestId: the request, what the user may do with it, and the names its diff's values use. */
export interface RequestPageView extends ProjectAccess {
  request: RequestEntry;
  /** Withdraw is offered to the author of a pending request only. */
  mayWithdraw: boolean;
  audiences: { id: string; name: string }[];
  /** What the request's `alters` names, each as its page links it, in the same order. */
  altered: AlteredView[];
}

/**
 * A release plan or pending request a change request would alter: a request by its title, a plan by the
 * flag it changes (whose page lists it) and where; `gone`, one no longer kept, by its id alone.
 */
export interface AlteredView {
  id: string;
  kind: 'request' | 'schedule' | 'rollout' | 'gone';
  /** A request's title; a plan's flag's name (null: the flag is gone, or the record is). */
  name: string | null;
  /** A plan's flag; null for a request. */
  flagId: string | null;
  /** A plan's environment (null: a single-environment project's, or not a plan). */
  env: string | null;
}

/** GET flags/:flagId/requests: the pending requests that would change the flag. */
export interface FlagRequestsView {
  requests: Pick<
    ChangeRequestView,
    'id' | 'summary' | 'title' | 'environments' | 'author' | 'authoredBy' | 'approvals' | 'required' | 'stale' | 'createdAt'
  >[];
}

/** GET requests/waiting: the pending requests, of every project, the signed-in user may approve (the header's count). */
export interface WaitingView {
  requests: (Pick<
    ChangeRequestView,
    'id' | 'projectId' | 'title' | 'environments' | 'author' | 'approvals' | 'required' | 'stale' | 'createdAt'
  > & { projectName: string })[];
}

/** GET projects/:projectId/approvals: the project's policy, and what its form offers to choose from. */
export interface ApprovalsView extends ProjectAccess {
  rules: ApprovalRule[];
  /** The roles a new rule offers checked (the policy's default approvers). */
  defaultRoles: readonly Role[];
  /** The environments a rule may guard: a single-environment project's one is null. */
  environments: (string | null)[];
  roles: readonly Role[];
  /** The project's tokens that may be named to apply without approval: by name. */
  tokens: { id: string; name: string }[];
}

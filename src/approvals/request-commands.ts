// Deciding change requests (docs/approvals.md): approve (the last approval applies it, in the same
// transaction, as one revision), reject, withdraw (its author), comment. Each is audited and offered to
// webhooks as a `request` event.
import { projectRole } from '../model/records/member-records.js';
import { FlagwireError } from '../errors.js';
import { personActor, tokenActor, type Principal } from '../actor/audit-actor.js';

import { requireProject } from '../model/records/lookups.js';
import { authorizeTokenWrite } from '../model/records/token-access.js';
import type { StoreWriter } from '../store/interfaces.js';
import { auditRequest } from './gate.js';
import { requirementOf } from './policy.js';
import { applyRequest } from './request-apply.js';
import { asAuthor, describeAuthors, isAuthorOf } from './authors.js';
import { approvalProblem, deciderRoleProblem, judgeApprovals, requestView, type ChangeRequestView } from './request-view.js';
import { requireVersionSeen } from './request-version.js';
import { kChangeRequestRecords, type ChangeRequest, type RequestActor } from './records.js';
import { requireRequest } from './requests.js';

/** A comment's or a decision's note: at most this many characters. */
export const kMaxNoteLength = 2000;
/** Comments a request holds at most. */
const kMaxComments = 200;

/** Names a request; `projectId`: the token's project (the Management API), null elsewhere (a person is checked by role). */
interface RequestInput {
  requestId: string;
  principal: Principal;
}

/** The request, for who asks: a token sees only its project's; a person or the operator any (their role is checked after). */
function target(w: StoreWriter, input: RequestInput, now: number): { request: ChangeRequest; actor: RequestActor } {
  const { principal } = input;
  if (principal.kind === 'token') {
    const auth = authorizeTokenWrite(w, principal.tokenId, now);
    const request = requireRequest(w, input.requestId, auth.project.id);
    const { id, name } = tokenActor(auth.token);
    return { request, actor: { id, name } };
  }
  const request = requireRequest(w, input.requestId, null);
  if (principal.kind === 'operator') return { request, actor: { id: 'console', name: 'console' } };
  if (principal.kind === 'plan') throw new FlagwireError('FORBIDDEN', 'A release plan does not act on change requests.');
  const person = personActor(w, principal, 'act on a change request');
  const role = projectRole(w, requireProject(w, request.projectId), person.userId);
  // Someone who cannot see the project cannot learn the request exists.
  if (role === undefined) throw new FlagwireError('NOT_FOUND', `No change request with id ${input.requestId} exists.`);
  return { request, actor: { id: person.id, name: person.name } };
}

function requirePending(request: ChangeRequest): void {
  if (request.status !== 'pending') {
    throw new FlagwireError(
      'REQUEST_CONFLICT',
      `Change request ${request.id} is ${request.status} already; only a pending request can be decided.`,
    );
  }
}

function note(text: unknown, required: boolean): string {
  if (text === undefined && !required) return '';
  if (typeof text !== 'string' || (required && text.trim() === '') || text.length > kMaxNoteLength) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `text must be ${required ? 'a non-empty string' : 'a string'} of at most ${kMaxNoteLength} characters`,
    );
  }
  return text.trim();
}

/** Only a person approves or rejects (the web console's user, or --as USER_ID), of a role the policy allows. */
function decider(w: StoreWriter, input: RequestInput, now: number, verb: 'approve' | 'reject') {
  if (input.principal.kind !== 'user') {
    throw new FlagwireError(
      'FORBIDDEN',
      `Only a person may ${verb} a change request (the web console's user, or --as USER_ID on the command line).`,
    );
  }
  const userId = input.principal.userId;
  const { request, actor } = target(w, input, now);
  requirePending(request);
  return { request, actor, userId };
}

/**
 * `ifVersion`: the version of the request its approver saw (request-version.ts); every surface sends it
 * (the console's page, `--version` on the command line), and one of an older version is refused.
 */
export function requestApprove(
  w: StoreWriter,
  input: RequestInput & { text?: string; ifVersion?: number },
  now: number,
): ChangeRequestView {
  const { request, actor, userId } = decider(w, input, now, 'approve');
  const text = note(input.text, false);
  const problem = approvalProblem(w, request, userId);
  if (problem !== null) throw new FlagwireError('FORBIDDEN', problem);
  if (input.ifVersion !== undefined) requireVersionSeen(request, input.ifVersion);
  const given = [...request.approvals, { ...actor, at: now }];
  // Each approval counts only if its approver may still give it: judged as the request would be applied.
  const { counted, lapsed } = judgeApprovals(w, request, given);
  const { required } = requirementOf(requireProject(w, request.projectId), request.environments);
  const applies = counted.length >= required;
  // The approval that completes it applies it: a request whose records moved is refused whole, this
  // approval with it, so it stays pending and says why.
  if (applies) applyRequest(w, request, counted, now);
  const next: ChangeRequest = {
    ...request,
    approvals: applies ? counted : given,
    ...(applies && lapsed.length > 0 ? { lapsed } : {}),
    comments: text === '' ? request.comments : [...request.comments, { ...actor, at: now, text }].slice(-kMaxComments),
    status: applies ? 'applied' : 'pending',
    decided: applies ? { ...actor, at: now, text } : null,
    updatedAt: now,
  };
  w.putKeyed(kChangeRequestRecords, next);
  auditRequest(w, next, actor, 'request.approve', now);
  if (applies) auditRequest(w, next, next.author, 'request.apply', now);
  return requestView(w, next);
}

export function requestReject(w: StoreWriter, input: RequestInput & { text?: string }, now: number): ChangeRequestView {
  const { request, actor, userId } = decider(w, input, now, 'reject');
  const text = note(input.text, false);
  const problem = deciderRoleProblem(w, request, userId, 'Rejecting');
  if (problem !== null) throw new FlagwireError('FORBIDDEN', problem);
  const next: ChangeRequest = { ...request, status: 'rejected', decided: { ...actor, at: now, text }, updatedAt: now };
  w.putKeyed(kChangeRequestRecords, next);
  auditRequest(w, next, actor, 'request.reject', now, text === '' ? undefined : text);
  return requestView(w, next);
}

export function requestWithdraw(w: StoreWriter, input: RequestInput, now: number): ChangeRequestView {
  const { request, actor } = target(w, input, now);
  requirePending(request);
  if (!isAuthorOf(request, asAuthor(w, actor))) {
    throw new FlagwireError('FORBIDDEN', `Only its author (${describeAuthors(request)}) may withdraw change request ${request.id}.`);
  }
  const next: ChangeRequest = { ...request, status: 'withdrawn', decided: { ...actor, at: now, text: '' }, updatedAt: now };
  w.putKeyed(kChangeRequestRecords, next);
  auditRequest(w, next, actor, 'request.withdraw', now);
  return requestView(w, next);
}

export function requestComment(w: StoreWriter, input: RequestInput & { text: string }, now: number): ChangeRequestView {
  const { request, actor } = target(w, input, now);
  const text = note(input.text, true);
  if (request.comments.length >= kMaxComments) {
    throw new FlagwireError('INVALID_REQUEST', `change request ${request.id} holds ${kMaxComments} comments, the most it holds`);
  }
  const next: ChangeRequest = { ...request, comments: [...request.comments, { ...actor, at: now, text }], updatedAt: now };
  w.putKeyed(kChangeRequestRecords, next);
  auditRequest(w, next, actor, 'request.comment', now, text);
  return requestView(w, next);
}

// Who is told of a change request (docs/approvals.md: Who is told): when one is opened, edited or goes
// stale, every person who may approve it gets mail, through the project's outbox (src/mail: sent over
// SMTP by a node's mailer, listed on their console's Mail page), and the project's webhooks a `request`
// event (its audit entry: gate.ts auditRequest). The console's header counts what waits for the
// signed-in person (waitingFor).
import type { User } from '../model/accounts.js';
import { newMail } from '../model/mail.js';
import { requireProject } from '../model/records/lookups.js';
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { envName } from './policy.js';
import { kChangeRequestRecords, type ChangeRequest } from './records.js';
import { approvalProblem, type RequestHeadline } from './request-view.js';
import { getUser } from '../model/records/org-records.js';
import { appendMail } from '../model/records/mail-records.js';
import { listMembers } from '../model/records/member-records.js';

/** What happened to the request that its approvers are told of. */
export type RequestNotice = 'opened' | 'edited' | 'stale';

/** The people who may approve `request` now: the writer's own rule (approvalProblem) finds nothing against them. */
export function approversOf(r: StoreReader, request: ChangeRequest): User[] {
  const project = requireProject(r, request.projectId);
  if (project.orgId === null) return [];
  return listMembers(r, project.orgId)
    .filter((member) => approvalProblem(r, request, member.userId, project) === null)
    .map((member) => getUser(r, member.userId))
    .filter((user): user is User => user !== undefined);
}

/** Mails each person who may approve `request` what happened to it (`view`: the request as every surface shows it). */
export function mailApprovers(w: StoreWriter, request: ChangeRequest, view: RequestHeadline, notice: RequestNotice, now: number): void {
  const project = requireProject(w, request.projectId);
  if (project.orgId === null) return;
  const where = view.environments.map(envName).join(' and ');
  const subject = {
    opened: `Flagwire: a change waits for your approval: ${view.title}`,
    edited: `Flagwire: a change request you may approve was edited: ${view.title}`,
    stale: `Flagwire: a change request you may approve can no longer be applied: ${view.title}`,
  }[notice];
  const what = {
    opened: `${view.author.name} asked for a change to ${where} of project "${project.name}": ${view.title}.`,
    edited: `${view.author.name} edited their change request for ${where} of project "${project.name}": ${view.title}. Approvals given before the edit no longer count.`,
    stale: `The change request of ${view.author.name} for ${where} of project "${project.name}" (${view.title}) can no longer be applied: ${view.problem ?? 'a field it changes moved'}. Its author can withdraw it and make the change again.`,
  }[notice];
  const text = [
    what,
    `It has ${view.approvals.length} of the ${view.required} approvals it needs.`,
    `Change request ${view.id}: the project's Change requests page in the Flagwire console, or flagwire request show ${view.id}.`,
  ].join('\n');
  for (const user of approversOf(w, request)) {
    appendMail(w, newMail({ at: now, to: user.email, orgId: project.orgId, subject, text }));
  }
}

/** The pending requests, of every project, that user `userId` may approve now, the newest first. */
export function waitingFor(r: StoreReader, userId: string): ChangeRequest[] {
  return r
    .listKeyedBy(kChangeRequestRecords, 'status', 'pending')
    .filter((request) => approvalProblem(r, request, userId) === null)
    .sort((a, b) => b.createdAt - a.createdAt);
}

// The approvals capability's web console routes (docs/web-console.md: Approvals): a project's change
// requests and one request, deciding and commenting on it, the requests pending on a flag, and the
// project's policy on the settings page. Reads check that the user belongs to the project (a request of
// another project is the same 404 as an unknown id); every change is one writer command, which checks the
// role and every value again.
import { kRoles, type Role } from '../model/accounts.js';
import { projectAccess } from '../console-route/access.js';
import type { ProjectAccess } from '../console-route/project-access.js';
import { flagAccess } from '../flags/flag-lookups.js';
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { FlagwireError } from '../errors.js';
import { compileForm, FormText, FormTexts } from '../console-route/forms.js';
import { Type } from '../typebox.js';
import { kApprovalCommands } from './command-table.js';
import { kDefaultApproverRoles, rulesOf } from './policy.js';
import type { StoreReader } from '../store/interfaces.js';
import type { AlteredView } from './console-answers.js';
import { kChangeRequestRecords, type ChangeRequest } from './records.js';
import { titleOf } from './request-title.js';
import { isAuthorOf } from './authors.js';
import { approvalProblem, requestView } from './request-view.js';
import { waitingFor } from './request-notices.js';
import { versionFromIfMatch } from './request-version.js';
import { listRequests, pendingRequests, requireRequest } from './requests.js';
import { getRollout, getSchedule } from '../release-plans/records.js';
import { getFlag } from '../flags/records/flag-store.js';
import { getProject, listAudiences } from '../model/records/project-records.js';
import { listTokens } from '../model/records/token-records.js';

/** Decided requests the requests page lists, newest first: the history is paged no further in the console. */
export const kHistoryShown = 50;

/** A note is optional on a decision; its length and type are the command's to check. */
const kDecisionForm = compileForm(Type.Object({ text: Type.Optional(FormText) }));
/** An approval names the version its approver saw: here, or as If-Match (the command checks it is a version). */
const kApprovalForm = compileForm(
  Type.Object({
    text: Type.Optional(FormText),
    ifVersion: Type.Optional(Type.Integer({ minimum: 1, 'x-error': 'must be the version of the change request (a whole number from 1)' })),
  }),
);
const kCommentForm = compileForm(Type.Object({ text: FormText }));
/** `env` null: a single-environment project's one; the rest the command checks (1..5, known roles and tokens). */
const kEnvForm = compileForm(Type.Object({ env: Type.Union([Type.String(), Type.Null()], { 'x-error': 'must be a string or null' }) }));
const kRuleForm = compileForm(
  Type.Object({
    env: Type.Union([Type.String(), Type.Null()], { 'x-error': 'must be a string or null' }),
    required: Type.Integer({ 'x-error': 'must be a whole number from 1 to 5' }),
    roles: FormTexts,
    allowSelf: Type.Boolean({ 'x-error': 'must be true or false' }),
    bypassTokens: FormTexts,
  }),
);

function entry(call: ApiCall, request: ChangeRequest) {
  return { ...requestView(call.store, request), notApprovable: approvalProblem(call.store, request, call.user.id) };
}

/** The request, if the user may see its project (projectAccess's 404 otherwise, as a flag's page has it). */
function requestAccess(call: ApiCall): { request: ChangeRequest; access: ProjectAccess } {
  const request = requireRequest(call.store, call.params.requestId!, null);
  return { request, access: projectAccess(call.store, call.user, request.projectId, call.now) };
}

export function requestsView(call: ApiCall) {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  const all = listRequests(call.store, access.project.id);
  const decided = all.filter((r) => r.status !== 'pending');
  return {
    ...access,
    pending: all.filter((r) => r.status === 'pending').map((r) => entry(call, r)),
    history: decided.slice(0, kHistoryShown).map((r) => entry(call, r)),
    more: decided.length > kHistoryShown,
  };
}

export function requestPageView(call: ApiCall) {
  const { request, access } = requestAccess(call);
  return {
    ...access,
    request: entry(call, request),
    mayWithdraw: request.status === 'pending' && isAuthorOf(request, { id: `user:${call.user.id}`, name: call.user.name }),
    audiences: listAudiences(call.store, access.project.id).map((a) => ({ id: a.id, name: a.name })),
    altered: (request.alters ?? []).map((id) => alteredOf(call.store, id)),
  };
}

/** A plan or request a change request names in `alters`, as its page links it (AlteredView). */
function alteredOf(r: StoreReader, id: string): AlteredView {
  const request = r.getKeyed(kChangeRequestRecords, id);
  if (request !== undefined) return { id, kind: 'request', name: titleOf(r, request), flagId: null, env: null };
  const schedule = getSchedule(r, id);
  const plan = schedule ?? getRollout(r, id);
  if (plan === undefined) return { id, kind: 'gone', name: null, flagId: null, env: null };
  const name = getFlag(r, plan.flagId)?.name ?? null;
  return { id, kind: schedule === undefined ? 'rollout' : 'schedule', name, flagId: plan.flagId, env: plan.env };
}

/**
 * The pending requests that would change the flag: whose diff names it, or that make a release plan of
 * it (a scheduled change, a rollout: a record naming it as its `flagId`).
 */
export function flagRequestsView(call: ApiCall) {
  const { flag, access } = flagAccess(call.store, call.user, call.params.flagId!, call.now);
  const plansIt = (request: ChangeRequest) => request.changes.some((change) => (change.value as { flagId?: unknown }).flagId === flag.id);
  const requests = pendingRequests(call.store, access.project.id)
    .filter((r) => plansIt(r) || requestView(call.store, r).diff.some((line) => line.id === flag.id))
    .map((r) => requestView(call.store, r))
    .map(({ id, summary, title, environments, author, authoredBy, approvals, required, stale, createdAt }) => ({
      id,
      summary,
      title,
      environments,
      author,
      authoredBy,
      approvals,
      required,
      stale,
      createdAt,
    }));
  return { requests };
}

/** The pending requests, of every project, the signed-in user may approve: what the header counts. */
export function waitingView(call: ApiCall) {
  const requests = waitingFor(call.store, call.user.id).map((r) => {
    const { id, projectId, title, environments, author, approvals, required, stale, createdAt } = requestView(call.store, r);
    const projectName = getProject(call.store, projectId)?.name ?? projectId;
    return { id, projectId, projectName, title, environments, author, approvals, required, stale, createdAt };
  });
  return { requests };
}

export function approvalsView(call: ApiCall) {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  const { project } = access;
  // A personal project has no policy: approval needs a second person (approvalsSet refuses it).
  const environments: (string | null)[] = project.orgId === null ? [] : project.kind === 'single' ? [null] : project.environments;
  const roles: readonly Role[] = kRoles;
  return {
    ...access,
    rules: [...rulesOf(project)],
    defaultRoles: kDefaultApproverRoles,
    environments,
    roles,
    tokens: listTokens(call.store, project.id).map((t) => ({ id: t.id, name: t.name })),
  };
}

/**
 * An approval, its note optional, of the version the user saw: `ifVersion` in the body or the request's
 * ETag as If-Match (one of them; both must agree). The command's answer, the request as it is now.
 */
function approve(call: ApiCall) {
  const { request } = requestAccess(call);
  const body = kApprovalForm.readOptional(call.received);
  const tagged = versionFromIfMatch(call.ifMatch, request.id);
  const ifVersion = body.ifVersion ?? tagged;
  if (ifVersion === null || (tagged !== null && body.ifVersion !== undefined && tagged !== body.ifVersion)) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      ifVersion === null
        ? 'an approval names the version of the change request it approves: ifVersion (its `version`) or If-Match (its ETag)'
        : `ifVersion ${body.ifVersion} and If-Match (version ${tagged}) name different versions`,
    );
  }
  return call.writer.call(kApprovalCommands.requestApprove, {
    requestId: request.id,
    principal: call.principal,
    text: body.text,
    ifVersion,
  });
}

/** A rejection, its note optional: the command's answer, the request as it is now. */
function reject(call: ApiCall) {
  return call.writer.call(kApprovalCommands.requestReject, {
    requestId: requestAccess(call).request.id,
    principal: call.principal,
    text: kDecisionForm.readOptional(call.received).text,
  });
}

export const kApprovalConsoleRoutes: readonly ApiRoute[] = [
  { method: 'GET', pattern: 'projects/:projectId/requests', run: requestsView },
  // Before requests/:requestId, which would match it too (the first route that matches answers).
  { method: 'GET', pattern: 'requests/waiting', run: waitingView },
  { method: 'GET', pattern: 'requests/:requestId', run: requestPageView },
  { method: 'POST', pattern: 'requests/:requestId/approve', run: approve },
  { method: 'POST', pattern: 'requests/:requestId/reject', run: reject },
  {
    method: 'POST',
    pattern: 'requests/:requestId/withdraw',
    run: (call) =>
      call.writer.call(kApprovalCommands.requestWithdraw, {
        requestId: requestAccess(call).request.id,
        principal: call.principal,
      }),
  },
  {
    method: 'POST',
    pattern: 'requests/:requestId/comments',
    run: (call) =>
      call.writer.call(kApprovalCommands.requestComment, {
        requestId: requestAccess(call).request.id,
        principal: call.principal,
        text: kCommentForm.read(call.received).text,
      }),
  },
  { method: 'GET', pattern: 'flags/:flagId/requests', run: flagRequestsView },
  { method: 'GET', pattern: 'projects/:projectId/approvals', run: approvalsView },
  {
    method: 'POST',
    pattern: 'projects/:projectId/approvals',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      const body = kRuleForm.read(call.received);
      return call.writer.call(kApprovalCommands.approvalsSet, {
        projectId: access.project.id,
        env: body.env,
        required: body.required,
        // Checked by the command against the roles there are.
        roles: body.roles as Role[],
        allowSelf: body.allowSelf,
        bypassTokens: body.bypassTokens,
        principal: call.principal,
      });
    },
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/approvals/clear',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      return call.writer.call(kApprovalCommands.approvalsClear, {
        projectId: access.project.id,
        env: kEnvForm.read(call.received).env,
        principal: call.principal,
      });
    },
  },
];

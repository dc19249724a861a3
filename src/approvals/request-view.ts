// A change request as every surface shows it (the Management API, the web console, the command line):
// what it changes, path by path, against the records as they are now, whether it can still be applied,
// and how many approvals it needs; and why a person may not approve it.
import { projectRole } from '../model/records/member-records.js';
import { Type, type Static } from '../typebox.js';
import { describeRole } from '../model/permissions.js';
import { requireProject } from '../model/records/lookups.js';
import type { Project } from '../model/projects.js';
import type { StoreReader } from '../store/interfaces.js';
import { mayApproveAs, requirementOf } from './policy.js';
import { changedPaths, valueAt } from './record-diff.js';
import { merged, proposedOf } from './request-apply.js';
import { titleOf } from './request-title.js';
import { describeAuthors, isAuthorOf } from './authors.js';
import { kRequestStatuses, type ChangeRequest, type LapsedApproval, type RequestEvent } from './records.js';
import { versionOf } from './request-version.js';

const Actor = Type.Object({ id: Type.String(), name: Type.String() });
const Event = Type.Object({ ...Actor.properties, at: Type.Integer({ description: 'Unix ms' }) });
const Author = Type.Object(
  {
    ...Actor.properties,
    createdBy: Type.Optional(Type.Object(Actor.properties, { description: "A token's change: the person who created the token" })),
    rotatedBy: Type.Optional(
      Type.Object(Actor.properties, { description: "A token's change: the person whose rotation made the token, when it records one" }),
    ),
  },
  { description: "Who made the change (an audit actor: `user:<id>`, `token:<id>`, `console`); a token's counts as its people's too" },
);

export const DiffLine = Type.Object(
  {
    record: Type.String({ description: 'The kind of record: flag, audience, schedule, rollout' }),
    id: Type.String(),
    name: Type.String({ description: "The record's name (a flag's, an audience's), or its id" }),
    field: Type.String({
      description: 'The path of the field in the record, dotted (`environments.production.enabled`); `` for the whole record',
    }),
    current: Type.Unknown({ description: 'The value now (null: absent)' }),
    proposed: Type.Unknown({ description: 'The value the request sets (null: absent)' }),
  },
  { description: 'One field a change request changes' },
);
export type DiffLine = Static<typeof DiffLine>;

export const ChangeRequestView = Type.Object(
  {
    id: Type.String({ description: '`chr_…`' }),
    projectId: Type.String(),
    status: Type.Union(kRequestStatuses.map((s) => Type.Literal(s))),
    environments: Type.Array(Type.Union([Type.String(), Type.Null()]), {
      description: 'The guarded environments it changes (null: a single-environment project)',
    }),
    summary: Type.String({ description: 'Its audit actions and the names they name, in a line (`flag.patch checkout in production`)' }),
    title: Type.String({
      description: "What it asks for, in the audit log's words (`Turn on checkout in production`): what every surface names it by",
    }),
    author: Author,
    coAuthors: Type.Array(Author, { description: 'Others whose edits it holds, who count as the same person as its author' }),
    authoredBy: Type.String({
      description:
        'Its authors in words (`Alice`; `token deploy, created by Alice`): each counts as its author for self-approval, editing and withdrawing',
    }),
    version: Type.Integer({ minimum: 1, description: 'One more at each edit: an approval names the version it approves (`ifVersion`)' }),
    createdAt: Type.Integer(),
    updatedAt: Type.Integer(),
    required: Type.Integer({ description: 'Approvals it needs now' }),
    approvals: Type.Array(Event, {
      description: "The approvals that count: judged against each approver's role now (pending) or when it was applied",
    }),
    lapsed: Type.Array(Type.Object({ ...Event.properties, why: Type.String() }), {
      description: 'Approvals given that do not count (pending) or did not (applied): the approver was demoted or removed since',
    }),
    comments: Type.Array(Type.Object({ ...Event.properties, text: Type.String() })),
    decided: Type.Union([Type.Object({ ...Event.properties, text: Type.String() }), Type.Null()]),
    stale: Type.Boolean({ description: 'Pending, and no longer applicable: a field it changes moved since it was made' }),
    problem: Type.Union([Type.String(), Type.Null()], { description: 'Why it is stale; null otherwise' }),
    diff: Type.Array(DiffLine, { description: 'What it changes against the records as they are now (pending), or as they were (decided)' }),
    alters: Type.Array(Type.String(), {
      description:
        'The release plans (`sch_…`, `rol_…`) and pending change requests (`chr_…`) that will read what it changes (an audience, a shared fragment): approving it changes what they do',
    }),
  },
  { description: 'A change request' },
);
export type ChangeRequestView = Static<typeof ChangeRequestView>;

/** A comment's body (POST /api/v1/change-requests/{id}/comments). */
export const CommentBody = Type.Object({ text: Type.String({ minLength: 1, maxLength: 2000 }) }, { additionalProperties: false });

export const ChangeRequestList = Type.Object(
  { changeRequests: Type.Array(ChangeRequestView) },
  { description: 'Change requests, newest first' },
);

/** A request as every surface heads it: its view without the diff (what its notices and audit entries say). */
export type RequestHeadline = Omit<ChangeRequestView, 'diff'>;

export function requestView(r: StoreReader, request: ChangeRequest): ChangeRequestView {
  return { ...requestHeadline(r, request), diff: diffOf(r, request, request.status === 'pending') };
}

/** requestView without the diff: the gate heads a request's notices at every edit, which need none. */
export function requestHeadline(r: StoreReader, request: ChangeRequest): RequestHeadline {
  const project = requireProject(r, request.projectId);
  const pending = request.status === 'pending';
  const applicable = pending ? merged(r, request) : null;
  const { counted, lapsed } = pending
    ? judgeApprovals(r, request, request.approvals)
    : { counted: request.approvals, lapsed: request.lapsed ?? [] };
  return {
    id: request.id,
    projectId: request.projectId,
    status: request.status,
    environments: request.environments,
    summary: request.summary,
    title: titleOf(r, request),
    author: request.author,
    coAuthors: request.coAuthors ?? [],
    authoredBy: describeAuthors(request),
    version: versionOf(request),
    createdAt: request.createdAt,
    updatedAt: request.updatedAt,
    required: requirementOf(project, request.environments).required,
    approvals: counted,
    lapsed,
    comments: request.comments,
    decided: request.decided,
    stale: applicable !== null && !applicable.ok,
    problem: applicable !== null && !applicable.ok ? applicable.problem : null,
    alters: request.alters ?? [],
  };
}

/** Each field the request changes: against the records now while it is pending, against its base once decided. */
function diffOf(r: StoreReader, request: ChangeRequest, againstNow: boolean): DiffLine[] {
  const lines: DiffLine[] = [];
  for (const [i, change] of request.changes.entries()) {
    const found = r.changeBearing(change.kind);
    const base = request.base[i] ?? null;
    const proposed = proposedOf(r, change);
    const current = againstNow && found !== undefined ? (found.bearing.stored(r, change.value) ?? null) : base;
    const record = found?.bearing.kind.name ?? change.kind;
    const named = (proposed ?? base ?? change.value) as { id?: unknown; name?: unknown };
    const id = typeof named.id === 'string' ? named.id : '';
    const name = typeof named.name === 'string' ? named.name : id;
    for (const path of changedPaths(base, proposed)) {
      lines.push({
        record,
        id,
        name,
        field: path.join('.'),
        current: valueAt(current, path) ?? null,
        proposed: valueAt(proposed, path) ?? null,
      });
    }
  }
  return lines;
}

/**
 * Why user `userId` may not decide `request` (`Approving`, `Rejecting`) for the role they hold: the
 * roles the policy of its environments allows; null: they may.
 */
export function deciderRoleProblem(
  r: StoreReader,
  request: ChangeRequest,
  userId: string,
  doing: 'Approving' | 'Rejecting',
  project: Project = requireProject(r, request.projectId),
): string | null {
  const { roles } = requirementOf(project, request.environments);
  const role = projectRole(r, project, userId);
  if (mayApproveAs(role, roles)) return null;
  return `${doing} this change needs the ${roles.join(', ')} role in organisation ${project.orgId ?? '(none)'}; user ${userId} ${describeRole(role)}.`;
}

/**
 * The approvals given that count now, and those that do not: each approver judged against their role
 * and membership as they are (one demoted or removed since no longer counts), and why.
 */
export function judgeApprovals(
  r: StoreReader,
  request: ChangeRequest,
  given: readonly RequestEvent[],
): { counted: RequestEvent[]; lapsed: LapsedApproval[] } {
  const counted: RequestEvent[] = [];
  const lapsed: LapsedApproval[] = [];
  const project = given.length === 0 ? null : requireProject(r, request.projectId);
  for (const approval of given) {
    const why =
      approval.id.startsWith('user:') && project !== null
        ? deciderRoleProblem(r, request, approval.id.slice('user:'.length), 'Approving', project)
        : null;
    if (why === null) counted.push(approval);
    else lapsed.push({ ...approval, why });
  }
  return { counted, lapsed };
}

/** Why user `userId` may not approve `request` now; null: they may. `project`: the request's, when read already. */
export function approvalProblem(
  r: StoreReader,
  request: ChangeRequest,
  userId: string,
  project: Project = requireProject(r, request.projectId),
): string | null {
  if (request.status !== 'pending') return `Change request ${request.id} is ${request.status}; only a pending request is decided.`;
  const roleProblem = deciderRoleProblem(r, request, userId, 'Approving', project);
  if (roleProblem !== null) return roleProblem;
  const need = requirementOf(project, request.environments);
  if (isAuthorOf(request, { id: `user:${userId}`, name: userId }) && !need.allowSelf) {
    return `The author of a change may not approve it (this one is by ${describeAuthors(request)}): this policy asks for someone else.`;
  }
  if (request.approvals.some((approval) => approval.id === `user:${userId}`)) return `User ${userId} has approved this change already.`;
  return null;
}

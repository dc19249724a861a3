// The console's audit page: a project's audit log, newest first, paged and filtered.
import { FlagwireError } from '../errors.js';
import { projectAccess } from '../console-route/access.js';
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { listAllFlags } from '../flags/records/flag-store.js';
import { auditView as entryAsShown } from '../model/audit.js';
import { listAudiences } from '../model/records/project-records.js';
import { listTokens } from '../model/records/token-records.js';
import { getUser } from '../model/records/org-records.js';
import { getRole, listMembers } from '../model/records/member-records.js';

const kDefaultAuditLimit = 25;
const kMaxAuditLimit = 200;
/** Entries read per page when filtering, at most, before the page is answered short (with nextBefore). */
const kAuditScan = 2000;
/** A user named inside a change's key (org-commands.ts: `role of user:<id>`). */
const kUserInKey = /\buser:(usr_[A-Za-z0-9_-]+)/g;

function pageNumber(query: URLSearchParams, name: string, min: number, max: number): number | null {
  const raw = query.get(name);
  if (raw === null || raw === '') return null;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new FlagwireError('INVALID_REQUEST', `${name} must be a whole number from ${min} to ${max}`);
  }
  return Number(raw);
}

export function auditView(call: ApiCall) {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  const limit = pageNumber(call.query, 'limit', 1, kMaxAuditLimit) ?? kDefaultAuditLimit;
  let before = pageNumber(call.query, 'before', 1, Number.MAX_SAFE_INTEGER);
  const flag = call.query.get('flag') || null;
  const actor = call.query.get('actor') || null;
  const entries = [];
  let scanned = 0;
  let more = false;
  // Read in pages of the store's order until the page is full: filters keep the log's order and paging.
  while (entries.length < limit && scanned < kAuditScan) {
    const batch = call.store.listAudit(access.project.id, { limit: 100, before });
    scanned += batch.length;
    for (const entry of batch) {
      before = entry.seq;
      if ((flag === null || entry.flagId === flag) && (actor === null || entry.actor === actor)) entries.push(entryAsShown(entry));
      if (entries.length === limit) break;
    }
    if (batch.length < 100) break;
  }
  if (entries.length === limit || scanned >= kAuditScan) more = call.store.listAudit(access.project.id, { limit: 1, before }).length > 0;
  const named = (list: readonly { id: string; name: string }[]) => list.map(({ id, name }) => ({ id, name }));
  return {
    project: access.project,
    can: access.can,
    entries,
    nextBefore: more ? before : null,
    flags: named(listAllFlags(call.store, access.project.id)),
    audiences: named(listAudiences(call.store, access.project.id)),
    people: peopleInKeys(call, access.project.orgId, entries),
    actors: actorChoices(call, access.project.id, access.project.orgId),
  };
}

/**
 * Who the actor filter offers, by name: the organisation's members (`user:<id>`) and the project's
 * tokens (`token:<id>`), as the Members and Tokens pages show them to its members.
 */
function actorChoices(call: ApiCall, projectId: string, orgId: string | null): { ref: string; name: string }[] {
  const members =
    orgId === null
      ? []
      : listMembers(call.store, orgId).flatMap((m) => {
          const user = getUser(call.store, m.userId);
          return user === undefined ? [] : [{ ref: `user:${user.id}`, name: user.name }];
        });
  const tokens = listTokens(call.store, projectId).map((t) => ({ ref: `token:${t.id}`, name: `token ${t.name}` }));
  return [...members, ...tokens];
}
export type AuditView = ReturnType<typeof auditView>;

/**
 * The users that the entries' change keys name by id (a member's role: `role of user:<id>`), as the
 * text in the key (`ref`) and the name to show for it: only those who are members of the project's
 * organisation now, whose names its members see on the Members page anyway; anyone else stays an id.
 */
function peopleInKeys(
  call: ApiCall,
  orgId: string | null,
  entries: readonly { changes: Record<string, unknown> }[],
): { ref: string; name: string }[] {
  if (orgId === null) return [];
  const ids = new Set(entries.flatMap((e) => Object.keys(e.changes).flatMap((key) => [...key.matchAll(kUserInKey)].map((m) => m[1]!))));
  return [...ids].flatMap((id) => {
    const user = getRole(call.store, orgId, id) === undefined ? undefined : getUser(call.store, id);
    return user === undefined ? [] : [{ ref: `user:${user.id}`, name: user.name }];
  });
}

export const kAuditRoutes: readonly ApiRoute[] = [
  {
    // Newest first; `before` pages back (the previous page's nextBefore); `flag` and `actor` filter.
    method: 'GET',
    pattern: 'projects/:projectId/audit',
    run: auditView,
  },
];

// The console's audit page: a project's audit log, newest first, paged and filtered.
import { FlagwireError } from '../../errors.js';
import { projectAccess } from '../access.js';
import type { ApiCall, ApiRoute } from './call.js';

const kDefaultAuditLimit = 25;
const kMaxAuditLimit = 200;
/** Entries read per page when filtering, at most, before the page is answered short (with nextBefore). */
const kAuditScan = 2000;

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
      if ((flag === null || entry.flagId === flag) && (actor === null || entry.actor === actor)) entries.push(entry);
      if (entries.length === limit) break;
    }
    if (batch.length < 100) break;
  }
  if (entries.length === limit || scanned >= kAuditScan) more = call.store.listAudit(access.project.id, { limit: 1, before }).length > 0;
  const flags = call.store.listFlags(access.project.id).map((f) => ({ id: f.id, name: f.name }));
  return { project: access.project, can: access.can, entries, nextBefore: more ? before : null, flags };
}
export type AuditView = ReturnType<typeof auditView>;

export const kAuditRoutes: readonly ApiRoute[] = [
  {
    // Newest first; `before` pages back (the previous page's nextBefore); `flag` and `actor` filter.
    method: 'GET',
    pattern: 'projects/:projectId/audit',
    run: auditView,
  },
];

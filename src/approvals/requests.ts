// Reading change requests (records.ts): a project's, one by id, and the change sets they hold.
import { FlagwireError } from '../errors.js';
import type { AuditEntry } from '../model/audit.js';
import type { Change } from '../store/changes.js';
import type { NewAuditEntry, StoreReader } from '../store/interfaces.js';
import { identitiesOf, kChangeRequestRecords, type ChangeRequest, type RequestAuthor, type RequestStatus } from './records.js';
import { getFlag } from '../flags/records/flag-store.js';

/** Pending requests a project holds at most: each holds a change set in memory-mapped storage. */
export const kMaxPendingPerProject = 100;

/** A project's requests, newest first; of one status when given. */
export function listRequests(r: StoreReader, projectId: string, status?: RequestStatus): ChangeRequest[] {
  const found =
    status === 'pending'
      ? r.listKeyedBy(kChangeRequestRecords, 'pending', projectId)
      : r.listKeyedBy(kChangeRequestRecords, 'project', projectId).filter((request) => status === undefined || request.status === status);
  return found.sort(newestFirst);
}

export function pendingRequests(r: StoreReader, projectId: string): ChangeRequest[] {
  return listRequests(r, projectId, 'pending');
}

const newestFirst = (a: ChangeRequest, b: ChangeRequest) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1);

/** The pending requests `author` counts as an author of (authors.ts), in any project, the last changed first. */
export function pendingRequestsBy(r: StoreReader, author: RequestAuthor): ChangeRequest[] {
  const found = new Map<string, ChangeRequest>();
  for (const id of identitiesOf(author))
    for (const request of r.listKeyedBy(kChangeRequestRecords, 'pendingBy', id)) found.set(request.id, request);
  return [...found.values()].sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1));
}

/** Audit entries as a request holds them, to append when it is applied: without the numbers they were given. */
export function unsequenced(entries: readonly AuditEntry[]): NewAuditEntry[] {
  return entries.map(({ seq: _, ...entry }) => entry as NewAuditEntry);
}

/** The request `id` of project `projectId` (null: of any project the caller may see, the command line's). */
export function requireRequest(r: StoreReader, id: string, projectId: string | null): ChangeRequest {
  const request = r.getKeyed(kChangeRequestRecords, id);
  if (request === undefined || (projectId !== null && request.projectId !== projectId)) {
    throw new FlagwireError(
      'NOT_FOUND',
      projectId === null ? `No change request with id ${id} exists.` : `No change request with id ${id} exists in this project.`,
    );
  }
  return request;
}

/** A record's identity across changes: its change kind's record kind and its key there. */
export function keyOf(r: StoreReader, change: Change): string {
  const found = r.changeBearing(change.kind);
  return found === undefined
    ? `${change.kind}:${JSON.stringify(change.value)}`
    : `${found.bearing.kind.name}:${found.bearing.kind.key(change.value)}`;
}

/** Each record's last change, in the order the records were first changed: what applying them leaves. */
export function compact(r: StoreReader, changes: readonly Change[]): Change[] {
  const last = new Map<string, Change>();
  for (const change of changes) {
    last.set(keyOf(r, change), change);
  }
  const order = [...new Set(changes.map((change) => keyOf(r, change)))];
  return order.map((key) => last.get(key)!);
}

/** A request in a line: each audit action it holds and what it names (`flag.patch checkout in production`). */
export function summaryOf(
  r: StoreReader,
  entries: readonly Pick<AuditEntry, 'action' | 'flagId' | 'env'>[],
  changes: readonly Change[],
): string {
  const names = new Map<string, string>();
  for (const change of changes) {
    const value = change.value as { id?: unknown; name?: unknown };
    if (typeof value.id === 'string' && typeof value.name === 'string') names.set(value.id, value.name);
  }
  const lines = entries.map((entry) => {
    const flag = entry.flagId === null ? '' : ` ${names.get(entry.flagId) ?? getFlag(r, entry.flagId)?.name ?? entry.flagId}`;
    return `${entry.action}${flag}${entry.env === null ? '' : ` in ${entry.env}`}`;
  });
  return [...new Set(lines)].join('; ') || 'a change';
}

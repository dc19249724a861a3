// A change request's title: what it asks for in the audit log's words ("Turn on checkout in production"),
// written by the audit log's own sentence code (src/words/audit-sentences.ts, which the console's audit
// page runs in the browser too; it reads nothing but its arguments), so a request reads as
// its change will read in the log, on every surface: the Management API, the console, the command line,
// mail and webhooks.
import { type Names, requestTitle } from '../words/audit-sentences.js';
import { auditView } from '../model/audit.js';
import type { StoreReader } from '../store/interfaces.js';
import type { ChangeRequest } from './records.js';
import { getFlag } from '../flags/records/flag-store.js';
import { listAudiences } from '../model/records/project-records.js';

export function titleOf(r: StoreReader, request: ChangeRequest): string {
  // A flag the request makes is named by the request itself; any other by its name now.
  const held = new Map<string, string>();
  for (const change of request.changes) {
    const value = change.value as { id?: unknown; name?: unknown };
    if (typeof value.id === 'string' && typeof value.name === 'string') held.set(value.id, value.name);
  }
  const flags = new Map<string, string>();
  for (const entry of request.audit) {
    if (entry.flagId === null) continue;
    const name = held.get(entry.flagId) ?? getFlag(r, entry.flagId)?.name;
    if (name !== undefined) flags.set(entry.flagId, name);
  }
  const names: Names = {
    flags,
    audiences: new Map(listAudiences(r, request.projectId).map((a) => [a.id, a.name])),
    people: new Map(),
  };
  // As the log shows them: a value the entry keeps as text (a fragment's rule) read as the value.
  return requestTitle(request.audit.map(auditView), names);
}

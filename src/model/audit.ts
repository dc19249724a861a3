// The audit log of a project's changes.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.

export interface AuditEntry {
  seq: number;
  at: number;
  projectId: string;
  actor: string;
  actorName: string;
  action: string;
  flagId: string | null;
  env: string | null;
  /** Changed fields: before and after. */
  changes: Record<string, { before: unknown; after: unknown }>;
  /**
   * A change applied by an approved change request (docs/approvals.md): the request and who approved it;
   * the entry's actor is the request's author. Absent on every other entry.
   */
  request?: { id: string; approvedBy: { id: string; name: string }[] };
}

/**
 * Fields whose before and after an entry keeps as compact JSON text rather than as the value: a shared
 * fragment's rule (`fragments.NAME`), which may weigh about a megabyte. As text it is stored, logged and
 * copied between threads without being walked, so the writer's time for it does not grow with the rule
 * (docs/decisions.md: A shared fragment's rule kept as its JSON text). Such a value is never itself a
 * string (a rule is an object), so an entry written before, holding the value, reads the same. Readers
 * see the values: auditChanges, auditView, auditJson, auditValueJson.
 */
const kTextFieldPrefix = 'fragments.';

function isText(field: string, value: unknown): value is string {
  return typeof value === 'string' && field.startsWith(kTextFieldPrefix);
}

function holdsText(changes: AuditEntry['changes']): boolean {
  return Object.entries(changes).some(([field, { before, after }]) => isText(field, before) || isText(field, after));
}

/** A change's before or after as JSON, as JSON.stringify writes the value readers see (undefined: none, as JSON.stringify's). */
export function auditValueJson(field: string, value: unknown): string | undefined {
  return isText(field, value) ? value : JSON.stringify(value);
}

/** The entry's changes as readers see them: values kept as text parsed (the entry's own object when none is). */
export function auditChanges(entry: Pick<AuditEntry, 'changes'>): AuditEntry['changes'] {
  if (!holdsText(entry.changes)) return entry.changes;
  const read = (field: string, value: unknown) => (isText(field, value) ? JSON.parse(value) : value);
  return Object.fromEntries(
    Object.entries(entry.changes).map(([field, change]) => [
      field,
      { ...change, before: read(field, change.before), after: read(field, change.after) },
    ]),
  );
}

/** The entry (or a record that spreads one) as readers see it: auditChanges. */
export function auditView<T extends Pick<AuditEntry, 'changes'>>(entry: T): T {
  const changes = auditChanges(entry);
  return changes === entry.changes ? entry : { ...entry, changes };
}

/**
 * JSON.stringify(auditView(entry)) for an entry, or a record that spreads one (the audit stream's), with
 * the values kept as text written as they are rather than parsed and written again.
 */
export function auditJson(entry: Pick<AuditEntry, 'changes'>): string {
  if (!holdsText(entry.changes)) return JSON.stringify(entry);
  const members = (object: object, json: (key: string, value: unknown) => string | undefined) =>
    `{${Object.entries(object)
      .flatMap(([key, value]) => {
        const text = json(key, value);
        return text === undefined ? [] : [`${JSON.stringify(key)}:${text}`];
      })
      .join(',')}}`;
  const changes = members(entry.changes, (field, change) => members(change as object, (_side, value) => auditValueJson(field, value)));
  return members(entry, (key, value) => (key === 'changes' ? changes : JSON.stringify(value)));
}

// A record's changed fields against its previous version: what the change log keeps of a record written
// again (change-log.ts), so a revision's size follows what changed rather than the record's (issue 55:
// a 26-byte PATCH of a 900 KB flag logged the whole flag). A copy that holds the previous version (a
// relay's, at the revision before) applies it and holds the record exactly as written: the same fields in
// the same order, so it encodes to the same bytes and every representation of it is the same.
//
// Fields are compared in depth: an object whose fields keep their order (a field added goes last, as
// JavaScript adds it) is compared field by field, an array of the same length item by item; anything
// else that differs (a value of another type, an array that grew or shrank, fields reordered) is set whole.

/** Where a value lies in a record: its fields' names and array indexes from the record down. */
export type FieldPath = (string | number)[];

/** What changed from one version of a record to the next. */
export interface FieldChanges {
  /** Fields removed, each by its path. */
  readonly unset: FieldPath[];
  /** Fields set, each by its path, with its new value: applied after the removals, in order. */
  readonly set: [FieldPath, unknown][];
}

/**
 * Past this many fields changed, the record is kept whole: each change names its path from the record
 * down, so a list rewritten item by item (a large fragment's new rule) weighed more as changes than the
 * whole record, and took the writer longer to find.
 */
const kMaxFieldChanges = 1000;

/** What changed from `before` to `after`; null when `after` is another value altogether, or most of it changed (it is then kept whole). */
export function recordChanges(before: unknown, after: unknown): FieldChanges | null {
  const changes: FieldChanges = { unset: [], set: [] };
  if (!compare(before, after, [], changes)) return null;
  return changes.set.some(([path]) => path.length === 0) ? null : changes;
}

/** `before` with `changes` applied: a new record; `before` is left as it was (a reader may hold it). */
export function patchedRecord(before: unknown, changes: FieldChanges): unknown {
  const copied = new Set<object>();
  const root = { value: before };
  /** The container at `path` (its parents copied on the way down), made writable. */
  const parentOf = (path: FieldPath): Record<string | number, unknown> => {
    let at: Record<string | number, unknown> = root;
    for (const step of ['value', ...path.slice(0, -1)]) {
      const child = at[step];
      if (typeof child !== 'object' || child === null) throw new Error(`no field at ${JSON.stringify(path)} to change`);
      if (!copied.has(child)) {
        const copy = Array.isArray(child) ? [...child] : { ...child };
        copied.add(copy);
        define(at, step, copy);
      }
      at = at[step] as Record<string | number, unknown>;
    }
    return at;
  };
  for (const path of changes.unset) delete parentOf(path)[path[path.length - 1]!];
  for (const [path, value] of changes.set) define(parentOf(path), path[path.length - 1]!, value);
  return root.value;
}

/** Adds what changed from `before` to `after` at `path` to `out`; false once past kMaxFieldChanges (`out` is then incomplete). */
function compare(before: unknown, after: unknown, path: FieldPath, out: FieldChanges): boolean {
  if (Object.is(before, after)) return true;
  if (isPlainObject(before) && isPlainObject(after) && keepsOrder(before, after)) {
    for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) out.unset.push([...path, key]);
    for (const key of Object.keys(after)) {
      if (!Object.hasOwn(before, key)) out.set.push([[...path, key], after[key]]);
      else if (!compare(before[key], after[key], [...path, key], out)) return false;
    }
    return withinBudget(out);
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    for (let i = 0; i < after.length; i++) if (!compare(before[i], after[i], [...path, i], out)) return false;
    return true;
  }
  out.set.push([path, after]);
  return withinBudget(out);
}

function withinBudget(out: FieldChanges): boolean {
  return out.set.length + out.unset.length <= kMaxFieldChanges;
}

/** Whether `before`'s fields that `after` keeps come first in `after`, in the same order (so removals and additions rebuild its order). */
function keepsOrder(before: Record<string, unknown>, after: Record<string, unknown>): boolean {
  const kept = Object.keys(before).filter((key) => Object.hasOwn(after, key));
  const keys = Object.keys(after);
  return kept.every((key, i) => keys[i] === key);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Sets a field as an own data property: a field named `__proto__` (JSON allows it) stays a field. */
function define(target: Record<string | number, unknown>, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

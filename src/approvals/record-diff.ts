// What a change request changes in a record, path by path: the one rule by which a request is shown
// (its diff against the current state) and applied (only the paths it changes, onto the record as it is
// now, refused where one of them moved since the request was made: no lost update).

/** A place in a record: its keys from the top (`environments`, `production`, `enabled`). */
export type Path = readonly string[];

/** Times a record's own writes move: never part of what a request changes. */
const kOwnTimes = new Set(['updatedAt']);

/**
 * The paths whose values differ between `before` and `after` (objects compared key by key; anything else,
 * arrays included, as a whole). A record absent on one side differs at the root ([]).
 */
export function changedPaths(before: unknown, after: unknown): Path[] {
  if (before === undefined || before === null || after === undefined || after === null) return same(before, after) ? [] : [[]];
  const out: Path[] = [];
  walk(before, after, [], out);
  return out;
}

function walk(before: unknown, after: unknown, path: string[], out: Path[]): void {
  if (isObject(before) && isObject(after)) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (path.length === 0 && kOwnTimes.has(key)) continue;
      walk(before[key], after[key], [...path, key], out);
    }
    return;
  }
  if (!same(before, after)) out.push(path);
}

/** Those of `paths` at which `a` and `b` differ: a request's fields that moved between two versions of its record. */
export function movedAt(paths: readonly Path[], a: unknown, b: unknown): Path[] {
  return paths.filter((path) => !same(valueAt(a, path), valueAt(b, path)));
}

/** The value at `path` (undefined where it is absent). */
export function valueAt(record: unknown, path: Path): unknown {
  let value = record;
  for (const key of path) {
    if (!isObject(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

/** `record` with `path` set to `value` (removed where `value` is undefined); `record` itself is not changed. */
export function withValueAt(record: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const [key, ...rest] = path as [string, ...string[]];
  const base = isObject(record) ? record : {};
  const next: Record<string, unknown> = { ...base };
  const inner = withValueAt(base[key], rest, value);
  if (inner === undefined) delete next[key];
  else next[key] = inner;
  return next;
}

/**
 * Whether two values are the same, as JSON says (key order aside): a key whose value is undefined is
 * absent, an undefined array item and a non-finite number are null. Compared in place rather than as two
 * canonical JSON strings: the gate compares every field a write moves, on every write to a guarded project.
 */
export function same(a: unknown, b: unknown): boolean {
  const x = jsonValue(a);
  const y = jsonValue(b);
  if (x === y) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
  if (Array.isArray(x) || Array.isArray(y)) {
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!same(x[i], y[i])) return false;
    return true;
  }
  const xs = x as Record<string, unknown>;
  const ys = y as Record<string, unknown>;
  let count = 0;
  for (const key of Object.keys(xs)) {
    if (xs[key] === undefined) continue;
    count++;
    if (ys[key] === undefined || !same(xs[key], ys[key])) return false;
  }
  for (const key of Object.keys(ys)) if (ys[key] !== undefined) count--;
  return count === 0;
}

/** A value as JSON writes it: undefined, NaN and the infinities as null. */
function jsonValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

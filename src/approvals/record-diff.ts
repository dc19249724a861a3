// What a change request changes in a record, path by path: the one rule by which a request is shown
// (its diff against the current state) and applied (only the paths it changes, onto the record as it is
// now, refused where one of them moved since the request was made: no lost update).
import { same } from '../model/json-same.js';

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

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

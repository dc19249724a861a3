// The lookups of the simple kinds (KeyedKind.indexes) as the LMDB store keeps them, in the transaction
// of every write of their records (lmdb-keyed.ts):
//   keyedIndexes  [kind, lookup, ...the key's parts, record key] -> the record's weight, or null
//   keyedTallies  [kind, lookup, the key's first part] -> { count, weight } (tallied lookups only)
// A range of a lookup is read from its entries in key order (ordered-binary: numbers before strings),
// and a file that does not hold a lookup yet (a read-only open of an older one) is read the same way
// from entries made in memory from every record.
import { compareKeys, type Database } from 'lmdb';
import type { KeyedKind, Lookup, LookupEntry, LookupKey, LookupPart, LookupRange, LookupTally } from './interfaces.js';

/** Sorts after every part a key holds (numbers and strings): the end of a range of keys that start alike. */
const kAfterAll = '\uffff';

/**
 * Every id Flagwire makes is short. A longer part (an id taken from a URL or the command line) is filed
 * nowhere and read as absent, and it must not reach LMDB at all: lmdb-js throws a RangeError for a key
 * of a few thousand characters. The store's one limit on a key, lookups' and records' alike.
 */
const kMaxKeyPart = 512;

export const tooLongPart = (part: LookupPart) => typeof part === 'string' && part.length > kMaxKeyPart;

/** One entry a record is filed under. */
interface Filed {
  readonly key: LookupPart[];
  readonly weight: number | null;
  /** Its tally's key, for a tallied lookup. */
  readonly tally: LookupPart[] | null;
}

export function lookupOf<V>(kind: KeyedKind<V>, index: string): Lookup<V> {
  const lookup = kind.indexes?.[index];
  if (lookup === undefined) throw new Error(`record kind ${kind.name} declares no lookup ${index}`);
  return lookup;
}

const partsOf = (key: LookupKey): readonly LookupPart[] => (typeof key === 'string' ? [key] : key);

/** The entries `value`, a record of `kind`, is filed under in its lookups (or in the one named). */
function filed<V>(kind: KeyedKind<V>, value: V, only?: string): Filed[] {
  if (kind.indexes === undefined) return [];
  const recordKey = kind.key(value);
  const out: Filed[] = [];
  for (const [index, lookup] of Object.entries(kind.indexes)) {
    if (only !== undefined && index !== only) continue;
    const weight = lookup.weigh === undefined ? null : lookup.weigh(value);
    for (const key of lookup.keysOf(value)) {
      const parts = partsOf(key);
      if (parts.some(tooLongPart)) throw new Error(`record kind ${kind.name}: a key of lookup ${index} is too long to file`);
      out.push({
        key: [kind.name, index, ...parts, recordKey],
        weight,
        tally: lookup.tallied === true ? [kind.name, index, parts[0]!] : null,
      });
    }
  }
  return out;
}

/** The store's two databases of lookups, written in the caller's write transaction. */
export interface LookupDatabases {
  readonly entries: Database<number | null, LookupPart[]>;
  readonly tallies: Database<LookupTally, LookupPart[]>;
}

/** Moves a record in its kind's lookups from where `before` filed it (undefined: nowhere) to where `after` does. */
export function refile<V>(dbs: LookupDatabases, kind: KeyedKind<V>, before: V | undefined, after: V | undefined): void {
  const now = new Map(after === undefined ? [] : filed(kind, after).map((entry) => [JSON.stringify(entry.key), entry]));
  const moved = new Map<string, { key: LookupPart[]; count: number; weight: number }>();
  const tally = (entry: Filed, sign: 1 | -1) => {
    if (entry.tally === null) return;
    const id = JSON.stringify(entry.tally);
    const sum = moved.get(id) ?? moved.set(id, { key: entry.tally, count: 0, weight: 0 }).get(id)!;
    sum.count += sign;
    sum.weight += sign * (entry.weight ?? 0);
  };
  if (before !== undefined)
    for (const entry of filed(kind, before)) {
      const id = JSON.stringify(entry.key);
      const kept = now.get(id);
      if (kept !== undefined && kept.weight === entry.weight) {
        now.delete(id);
        continue;
      }
      if (kept === undefined) dbs.entries.removeSync(entry.key);
      tally(entry, -1);
    }
  for (const entry of now.values()) {
    dbs.entries.putSync(entry.key, entry.weight);
    tally(entry, 1);
  }
  for (const { key, count, weight } of moved.values()) {
    if (count === 0 && weight === 0) continue;
    const was = dbs.tallies.get(key) ?? { count: 0, weight: 0 };
    const next = { count: was.count + count, weight: was.weight + weight };
    if (next.count === 0 && next.weight === 0) dbs.tallies.removeSync(key);
    else dbs.tallies.putSync(key, next);
  }
}

/** Files every record of `kind` anew (`records`: all of them), the lookups and tallies having been cleared. */
export function fileAll<V>(dbs: LookupDatabases, kind: KeyedKind<V>, records: Iterable<V>): void {
  for (const value of records) refile(dbs, kind, undefined, value);
}

/** Where a range of entries starts and ends (LMDB's range: start included, end not), and which entry is skipped. */
function bounds(base: readonly LookupPart[], range: LookupRange): { start: LookupPart[]; end: LookupPart[]; skip: LookupPart[] | null } {
  const after = range.after ?? null;
  const skip = after === null ? null : [...base, ...after];
  if (range.reverse === true) {
    if (range.through !== undefined || range.past !== undefined)
      throw new Error('a reversed range of a lookup takes neither through nor past');
    return { start: skip ?? [...base, kAfterAll], end: [...base], skip };
  }
  if (range.past !== undefined && skip !== null)
    throw new Error('a range of a lookup starts after a position or past some parts, not both');
  const from = range.past === undefined ? (skip ?? [...base]) : [...base, ...range.past, kAfterAll];
  return { start: from, end: [...base, ...(range.through ?? []), kAfterAll], skip };
}

const same = (a: readonly LookupPart[], b: readonly LookupPart[]) => a.length === b.length && a.every((part, i) => part === b[i]);

/** Takes the entries of a range as `keys` yields them in order: the skipped one out, then offset and limit. */
function* taken(
  keys: Iterable<{ key: LookupPart[]; value: number | null }>,
  baseLength: number,
  skip: LookupPart[] | null,
  range: LookupRange,
): Iterable<LookupEntry> {
  let offset = range.offset ?? 0;
  let left = range.limit ?? Number.POSITIVE_INFINITY;
  for (const { key, value } of keys) {
    if (left <= 0) return;
    if (skip !== null && same(key, skip)) continue;
    if (offset > 0) {
      offset--;
      continue;
    }
    left--;
    yield { at: key.slice(baseLength), key: key[key.length - 1] as string, weight: value ?? 0 };
  }
}

/** The entries of `kind`'s lookup `index` under `key`, read from the store's lookups. */
export function readEntries<V>(
  entries: Database<number | null, LookupPart[]>,
  kind: KeyedKind<V>,
  index: string,
  key: LookupKey,
  range: LookupRange,
): LookupEntry[] {
  lookupOf(kind, index);
  const base = [kind.name, index, ...partsOf(key)];
  if (base.some(tooLongPart)) return [];
  const { start, end, skip } = bounds(base, range);
  const keys = entries.getRange({ start, end, reverse: range.reverse === true }) as Iterable<{ key: LookupPart[]; value: number | null }>;
  return [...taken(keys, base.length, skip, range)];
}

/** The same entries, made in memory from `records` (every record of the kind): a file that does not hold the lookup. */
export function scanEntries<V>(records: Iterable<V>, kind: KeyedKind<V>, index: string, key: LookupKey, range: LookupRange): LookupEntry[] {
  lookupOf(kind, index);
  const base = [kind.name, index, ...partsOf(key)];
  const { start, end, skip } = bounds(base, range);
  const reverse = range.reverse === true;
  const inRange = (k: LookupPart[]) =>
    reverse ? compareKeys(k, start) <= 0 && compareKeys(k, end) > 0 : compareKeys(k, start) >= 0 && compareKeys(k, end) < 0;
  const all: { key: LookupPart[]; value: number | null }[] = [];
  for (const value of records)
    for (const entry of filed(kind, value, index)) if (inRange(entry.key)) all.push({ key: entry.key, value: entry.weight });
  all.sort((a, b) => (reverse ? compareKeys(b.key, a.key) : compareKeys(a.key, b.key)));
  return [...taken(all, base.length, skip, range)];
}

/** A tallied lookup's tally under `first`, from the store's tallies. */
export function readTally<V>(
  tallies: Database<LookupTally, LookupPart[]>,
  kind: KeyedKind<V>,
  index: string,
  first: LookupPart,
): LookupTally {
  if (lookupOf(kind, index).tallied !== true) throw new Error(`lookup ${index} of record kind ${kind.name} keeps no tally`);
  return (tooLongPart(first) ? undefined : tallies.get([kind.name, index, first])) ?? { count: 0, weight: 0 };
}

/** A tally summed from the entries themselves (a file that holds no tallies yet). */
export function sumEntries(entries: readonly LookupEntry[]): LookupTally {
  let weight = 0;
  for (const entry of entries) weight += entry.weight;
  return { count: entries.length, weight };
}

/** The lookups a layout's kinds declare, as meta's 'keyedLookups' names them (each kind's, sorted). */
export function declaredLookups(kinds: readonly { readonly name: string; readonly indexes?: Readonly<Record<string, unknown>> }[]): string {
  return JSON.stringify(kinds.filter((kind) => kind.indexes !== undefined).map((kind) => [kind.name, Object.keys(kind.indexes!).sort()]));
}

/** What meta's 'keyedLookups' (`held`, as declaredLookups wrote it) names: each kind's lookups, as `kind\u0000lookup`. */
export function heldLookupNames(held: string | undefined): Set<string> {
  if (held === undefined) return new Set();
  const kinds = JSON.parse(held) as [string, string[]][];
  return new Set(kinds.flatMap(([kind, lookups]) => lookups.map((lookup) => `${kind}\u0000${lookup}`)));
}

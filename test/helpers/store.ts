// The LMDB store as a test opens it: with the layout every process of Flagwire opens it with, the one
// the capabilities declare (src/capabilities.ts kStoreLayout); and its data file read or changed raw, as an
// older Flagwire left it.
import { join } from 'node:path';
import { type Key, open } from 'lmdb';
import { kStoreLayout } from '../../src/capabilities.js';
import { kFileName, kKeyedIndexes, kKeyedTallies, kMaxDbs } from '../../src/store/layout.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';

export const Store = {
  open(dataDir: string, options: { readOnly?: boolean } = {}): LmdbStore {
    return LmdbStore.open(dataDir, options.readOnly === true ? { readOnly: true, layout: kStoreLayout } : { layout: kStoreLayout });
  },
};
export type Store = LmdbStore;

/** How many keys of `database` in the data file of `dir` (closed) start with `first`: what a store filed. */
export async function countRawKeys(dir: string, database: string, first: string): Promise<number> {
  const raw = open({ path: join(dir, kFileName), maxDbs: kMaxDbs, readOnly: true });
  const count = [...raw.openDB<null, Key[]>({ name: database }).getKeys()].filter((key) => key[0] === first).length;
  await raw.close();
  return count;
}

/**
 * Removes the keys of `database` in the data file of `dir` (closed) that start with `first`, and writes
 * `meta`'s values: the file as a Flagwire before those keys left it. The number of keys removed.
 */
export async function dropRawKeys(dir: string, database: string, first: string, meta: Record<string, unknown>): Promise<number> {
  const raw = open({ path: join(dir, kFileName), maxDbs: kMaxDbs });
  const db = raw.openDB<null, Key[]>({ name: database });
  let dropped = 0;
  for (const key of [...db.getKeys()])
    if (key[0] === first) {
      db.removeSync(key);
      dropped++;
    }
  const metaDb = raw.openDB<unknown, string>({ name: 'meta' });
  for (const [name, value] of Object.entries(meta)) metaDb.putSync(name, value);
  await raw.close();
  return dropped;
}

/**
 * Leaves the data file of `dir` (closed) as a Flagwire without the lookups of record kind `kind` left it:
 * none of their entries or tallies, and the kind gone from the lookups the file says it holds. Whether the file named
 * them before (this Flagwire's do).
 */
export async function forgetLookups(dir: string, kind: string): Promise<boolean> {
  const raw = open({ path: join(dir, kFileName), maxDbs: kMaxDbs });
  for (const name of [kKeyedIndexes, kKeyedTallies]) {
    const db = raw.openDB<unknown, Key[]>({ name });
    for (const key of [...db.getKeys()]) if (key[0] === kind) db.removeSync(key);
  }
  const meta = raw.openDB<string, string>({ name: 'meta' });
  const declared = JSON.parse(meta.get('keyedLookups')!) as [string, string[]][];
  meta.putSync('keyedLookups', JSON.stringify(declared.filter(([name]) => name !== kind)));
  await raw.close();
  return declared.some(([name]) => name === kind);
}

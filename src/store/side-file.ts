// A side file (side-storage.ts: SideFile) opened for its owner, which keeps its key layouts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Database, type Key, open, type RootDatabase } from 'lmdb';
import type { SideFile } from './side-storage.js';

/** Whether `dataDir` holds `side`'s file (a read that must not create it asks first). */
export function sideFileExists(dataDir: string, side: SideFile): boolean {
  return existsSync(join(dataDir, side.file));
}

/** A side file opened: its environment, and each declared database by name. */
export interface OpenedSideFile<D extends string> {
  readonly root: RootDatabase;
  db<V, K extends Key = Key>(name: D): Database<V, K>;
}

/** Opens (creating if needed) `side`'s file in `dataDir`. */
export function openSideFile<D extends string>(dataDir: string, side: SideFile<D>): OpenedSideFile<D> {
  // overlappingSync off, as the data file's: a transaction's promise settles once it is on disk.
  const root = open({ path: join(dataDir, side.file), maxDbs: side.databases.length, overlappingSync: false });
  return {
    root,
    db: <V, K extends Key = Key>(name: D) => {
      if (!side.databases.includes(name)) throw new Error(`${side.file} declares no database ${name}`);
      return root.openDB<V, K>({ name });
    },
  };
}

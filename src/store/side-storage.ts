// What an owner stores beside the records (a capability's `sideFiles` and `pgMigrations`,
// src/capability/capability.ts): LMDB files of its own in the data dir, and its PostgreSQL tables,
// made by migrations the store's migrator applies (pg/migrate.ts) in one order with the store's own.
// The store names no owner's file or table: it opens a declared file (side-file.ts), keeps a declared
// file's name out of the data dir's foreign files, and applies declared migrations; the owner's code
// reads and writes them. No lmdb here: every thread derives the layout, and the command line's help loads no store.
import { kStoreMigrations, type Migration } from './pg/migrations.js';

/** An LMDB file an owner keeps in the data dir beside the data file: its file name there and its named databases. */
export interface SideFile<D extends string = string> {
  /** Its name in the data dir (lmdb-js keeps `${file}-lock` beside it); never changed once shipped. */
  readonly file: string;
  readonly databases: readonly D[];
}

/** Who declares side storage: a capability (src/capability/capability.ts). */
export interface SideStorageOwner {
  readonly name: string;
  /** Its LMDB files in the data dir. */
  readonly sideFiles?: readonly SideFile[];
  /** The migrations that make its PostgreSQL tables, each numbered in the one sequence every owner's share. */
  readonly pgMigrations?: readonly Migration[];
}

/** The side storage of the store and its owners, as the store reads it (StoreLayout). */
export interface SideStorage {
  /** Every owner's side files. */
  readonly sideFiles: readonly SideFile[];
  /** The store's migrations and every owner's, by version: what a database is brought to. */
  readonly migrations: readonly Migration[];
}

/**
 * The side storage `owners` declare, with the store's own migrations. A file name or a migration version
 * declared twice is a start-up error: a version names a migration in every database's history
 * (flagwire_migrations), whoever declares it.
 */
export function sideStorage(owners: readonly SideStorageOwner[]): SideStorage {
  const files = new Map<string, string>();
  for (const owner of owners)
    for (const side of owner.sideFiles ?? []) {
      const first = files.get(side.file);
      if (first !== undefined) throw new Error(`side file ${side.file} is declared by ${first} and by ${owner.name}`);
      files.set(side.file, owner.name);
    }
  const versions = new Map<number, string>(kStoreMigrations.map((m) => [m.version, 'store']));
  for (const owner of owners)
    for (const migration of owner.pgMigrations ?? []) {
      const first = versions.get(migration.version);
      if (first !== undefined) throw new Error(`migration ${migration.version} is declared by ${first} and by ${owner.name}`);
      versions.set(migration.version, owner.name);
    }
  return {
    sideFiles: owners.flatMap((owner) => owner.sideFiles ?? []),
    migrations: [...kStoreMigrations, ...owners.flatMap((owner) => owner.pgMigrations ?? [])].sort((a, b) => a.version - b.version),
  };
}

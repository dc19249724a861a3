// Applies the migrations (migrations.ts, and every owner's: side-storage.ts) a database lacks, in one
// transaction under an advisory lock: whichever process comes first (a node, a command-line command)
// migrates, the others wait on the lock and then find nothing to do. Needs only a role that owns the
// database (no superuser).
import type pg from 'pg';
import type { Migration } from './migrations.js';

/** pg_advisory_xact_lock's key: "flagwire" in ASCII, so other applications' locks do not collide. */
const kMigrationLock = 0x666c616777697265n;

/**
 * Brings the database to the newest schema: `migrations` is every one Flagwire knows (StoreLayout's),
 * by version. Refuses a database migrated by a newer Flagwire.
 */
export function migrate(client: pg.ClientBase, migrations: readonly Migration[]): Promise<void> {
  return apply(client, migrations, true);
}

/**
 * Applies those of one owner's `migrations` the database lacks: its tables, for a process that reaches
 * them before the store's open migrated the database. Versions of other owners, newer ones included,
 * are theirs to check.
 */
export function migrateOwn(client: pg.ClientBase, migrations: readonly Migration[]): Promise<void> {
  return apply(client, migrations, false);
}

async function apply(client: pg.ClientBase, migrations: readonly Migration[], all: boolean): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [kMigrationLock.toString()]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS flagwire_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await client.query<{ version: number }>('SELECT version FROM flagwire_migrations');
    const applied = new Set(rows.map((r) => r.version));
    const newest = Math.max(0, ...applied);
    const known = Math.max(0, ...migrations.map((m) => m.version));
    if (all && newest > known) {
      throw new Error(
        `the database was migrated by a newer Flagwire (schema ${newest}; this version knows up to ${known}); upgrade Flagwire`,
      );
    }
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO flagwire_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

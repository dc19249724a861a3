// Applies the migrations (migrations.ts) a database lacks, in one transaction under an advisory lock:
// whichever process comes first (a node, a command-line command) migrates, the others wait on the lock
// and then find nothing to do. Needs only a role that owns the database (no superuser).
import type pg from 'pg';
import { kMigrations } from './migrations.js';

/** pg_advisory_xact_lock's key: "flagwire" in ASCII, so other applications' locks do not collide. */
const kMigrationLock = 0x666c616777697265n;

/** Brings the database to the newest schema; refuses a database migrated by a newer Flagwire. */
export async function migrate(client: pg.ClientBase): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [kMigrationLock.toString()]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS flagwire_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await client.query<{ version: number }>('SELECT version FROM flagwire_migrations');
    const applied = new Set(rows.map((r) => r.version));
    const newest = Math.max(0, ...applied);
    const known = kMigrations[kMigrations.length - 1]!.version;
    if (newest > known) {
      throw new Error(
        `the database was migrated by a newer Flagwire (schema ${newest}; this version knows up to ${known}); upgrade Flagwire`,
      );
    }
    for (const migration of kMigrations) {
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

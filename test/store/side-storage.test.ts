// What a capability stores beside its records, as it declares it (src/store/side-storage.ts): its LMDB
// files in the data dir, which the store counts as its own and opens for it, and the migrations of its
// PostgreSQL tables, applied by the store's migrator in the one sequence every database's history
// (flagwire_migrations) records. A database migrated before an owner's migrations moved to its
// declaration must read the same history: no migration run twice, none missed.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import t from 'tap';
import { kCapabilityList, kRecordOwners, kStoreLayout } from '../../src/capabilities.js';
import { defineCapability } from '../../src/capability/capability.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { migrate, migrateOwn } from '../../src/store/pg/migrate.js';
import type { Migration } from '../../src/store/pg/migrations.js';
import { openSideFile, sideFileExists } from '../../src/store/side-file.js';
import { sideStorage } from '../../src/store/side-storage.js';
import { storeLayout } from '../../src/store/store-layout.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/scratch-dir.js';

/**
 * Every migration a database may have recorded: its version, its name, and a digest of its SQL with its
 * white space folded (indentation may move with the code; a statement never changes once shipped).
 */
const kHistory = [
  [1, 'records, change log and revision', '2b8d96536f726fd7'],
  [2, 'change log bytes', 'dce8f40d3a29aea1'],
  [3, 'event tally', 'db377e2ee2198338'],
  [4, 'raw events and storage usage', '6203b67281cf53d2'],
  [5, 'undeclared metric names', '65ebaa4d52b6f4a6'],
];

const digest = (m: Migration) => createHash('sha256').update(m.sql.replace(/\s+/g, ' ').trim()).digest('hex').slice(0, 16);

/** A capability that exists only here, with a side file and a table of its own. */
const kWidgetTable: Migration = { version: 1000, name: 'test widgets', sql: 'CREATE TABLE flagwire_test_widgets (id text PRIMARY KEY)' };
const kSideWidgets = defineCapability({
  name: 'side-widgets',
  sideFiles: [{ file: 'widgets.mdb', databases: ['widgets'] }],
  pgMigrations: [kWidgetTable],
});

t.test('the migrations, whoever declares them, are the history every database records', async (t) => {
  t.strictSame(
    kStoreLayout.migrations.map((m) => [m.version, m.name, digest(m)]),
    kHistory,
    'each version keeps its name and its statements, in order',
  );
  const layout = storeLayout([...kRecordOwners, kSideWidgets]);
  t.strictSame(
    layout.migrations.map((m) => m.version),
    [...kHistory.map(([version]) => version), 1000],
    "an owner's migration joins the sequence",
  );
});

t.test('a migration version or a side file declared twice is a start-up error', async (t) => {
  const again = (version: number) => ({ name: 'again', pgMigrations: [{ ...kWidgetTable, version }] });
  for (const { version } of kStoreLayout.migrations)
    t.throws(
      () => sideStorage([...kCapabilityList, again(version)]),
      new RegExp(`^migration ${version} is declared by \\S+ and by again$`),
    );
  t.throws(() => storeLayout([...kRecordOwners, kSideWidgets, { ...kSideWidgets, name: 'twice', pgMigrations: [] }]), {
    message: 'side file widgets.mdb is declared by side-widgets and by twice',
  });
  for (const { file } of kStoreLayout.sideFiles)
    t.throws(
      () => sideStorage([...kCapabilityList, { name: 'again', sideFiles: [{ file, databases: [] }] }]),
      /^side file .* is declared by/,
    );
});

t.test("a declared side file is the data dir's own; an undeclared one is another application's", async (t) => {
  const dir = tempDir(t);
  const widgets = kSideWidgets.sideFiles[0]!;
  t.equal(sideFileExists(dir, widgets), false, 'none before it is opened');
  const side = openSideFile(dir, widgets);
  await side.db<string>('widgets').put('w1', 'a widget');
  t.throws(() => side.db('gadgets' as 'widgets'), /declares no database gadgets/);
  await side.root.close();
  t.equal(sideFileExists(dir, widgets), true);
  await LmdbStore.open(dir, { layout: storeLayout([...kRecordOwners, kSideWidgets]) }).close();
  t.throws(() => LmdbStore.open(dir, { layout: kStoreLayout }), {
    name: 'StoreOpenError',
    message: /holds files Flagwire did not write \(widgets\.mdb/,
  });
  // Every side file Flagwire declares today, as existing data dirs hold them.
  const dir2 = tempDir(t);
  for (const { file } of kStoreLayout.sideFiles) writeFileSync(join(dir2, file), '');
  t.strictSame(
    kStoreLayout.sideFiles.map((f) => f.file),
    ['tally.mdb'],
    'the side files keep their names',
  );
  await LmdbStore.open(dir2, { layout: kStoreLayout }).close();
  const reopened = openSideFile(dir, widgets);
  t.equal(reopened.db<string>('widgets').get('w1'), 'a widget', 'what was written reads back');
  await reopened.root.close();
});

t.test('PostgreSQL: each migration is applied once, whichever process comes first', async (t) => {
  const cluster = await sharedPostgres();
  t.teardown(() => cluster.destroy());
  const history = async (url: string) => {
    const { rows } = await cluster.admin<{ version: number; name: string; applied_at: Date }>(
      url.split('/').pop()!,
      'SELECT version, name, applied_at FROM flagwire_migrations ORDER BY version',
    );
    return rows;
  };
  const withClient = async (url: string, run: (client: pg.Client) => Promise<void>) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await run(client);
    } finally {
      await client.end();
    }
  };

  const url = await cluster.newDatabase();
  await withClient(url, (c) => migrate(c, kStoreLayout.migrations));
  const first = await history(url);
  t.strictSame(
    first.map((r) => [r.version, r.name]),
    kHistory.map(([version, name]) => [version, name]),
    'the history a database migrated before the owners declared their migrations holds',
  );
  await withClient(url, (c) => migrate(c, kStoreLayout.migrations));
  const layout = storeLayout([...kRecordOwners, kSideWidgets]);
  for (const owner of kCapabilityList) await withClient(url, (c) => migrateOwn(c, owner.pgMigrations ?? []));
  await withClient(url, (c) => migrate(c, layout.migrations));
  const after = await history(url);
  t.strictSame(
    after.slice(0, first.length).map((r) => [r.version, r.applied_at.getTime()]),
    first.map((r) => [r.version, r.applied_at.getTime()]),
    'none run again',
  );
  t.strictSame(
    after.map((r) => r.version),
    [...kHistory.map(([version]) => version), 1000],
    'a new migration is applied',
  );

  // An owner's process that reaches its tables before the store migrated the database.
  const fresh = await cluster.newDatabase();
  await withClient(fresh, (c) => migrateOwn(c, [kWidgetTable]));
  t.strictSame(
    (await history(fresh)).map((r) => r.version),
    [1000],
    'its own only',
  );
  await withClient(fresh, (c) => migrate(c, layout.migrations));
  t.strictSame(
    (await history(fresh)).map((r) => r.version),
    layout.migrations.map((m) => m.version),
    'then the rest, each once',
  );
  // A version this Flagwire does not know: the store refuses the database, an owner applies its own.
  await withClient(fresh, (c) => migrateOwn(c, [{ ...kWidgetTable, version: 2000, sql: 'SELECT 1' }]));
  await t.rejects(
    withClient(fresh, (c) => migrate(c, layout.migrations)),
    /migrated by a newer Flagwire \(schema 2000; this version knows up to 1000\)/,
  );
  await withClient(fresh, (c) => migrateOwn(c, [kWidgetTable]));
});

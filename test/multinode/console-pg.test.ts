// The console with PostgreSQL: --database and FLAGWIRE_DATABASE_URL, an empty database before any
// node ran (several commands at once migrate it once), migrate-to-postgres (and its refusals), and a
// data dir holding data of its own refused rather than replaced.
import t from 'tap';
import { call } from '../helpers/http.js';
import { cli, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { kStoreLayout } from '../../src/capabilities.js';
import { buildWorld } from '../helpers/world.js';
import { startNode, waitReady } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

t.test('commands at once on an empty database migrate it once; the env var works as --database', async (t) => {
  const url = await pg.newDatabase();
  const results = await Promise.all([0, 1, 2, 3].map((i) => cli(tempDir(t), ['org', 'create', '--name', `Org ${i}`, '--database', url])));
  for (const r of results) t.equal(r.code, 0, `org create: ${r.stdout}${r.stderr}`);
  const listed = await cli(tempDir(t), ['org', 'list'], { env: { FLAGWIRE_DATABASE_URL: url } });
  t.equal(listed.code, 0);
  t.strictSame(
    listed.json.orgs.map((o: { name: string }) => o.name).sort(),
    ['Org 0', 'Org 1', 'Org 2', 'Org 3'],
    'every org, read from another data dir',
  );
  const { rows } = await pg.admin(url.split('/').pop()!, 'SELECT version FROM flagwire_migrations ORDER BY version');
  t.strictSame(
    rows.map((r) => r.version),
    kStoreLayout.migrations.map((m) => m.version),
    'the schema migrated once: each migration applied once',
  );
});

t.test("a bad URL is a configuration error that names the setting, without the URL's password", async (t) => {
  const r = await cli(tempDir(t), ['org', 'list', '--database', 'mysql://u:secret@h/db']);
  t.equal(r.code, 2);
  t.match(r.stderr, /FLAGWIRE_DATABASE_URL/);
  t.notMatch(r.stdout + r.stderr, /secret/);
});

t.test('PostgreSQL unreachable: the command fails with Storage unavailable, exit 1; only a write says nothing was changed', async (t) => {
  const unreachable = ['--database', 'postgres://flagwire:x@127.0.0.1:1/none'];
  for (const read of [
    ['org', 'list'],
    ['flag', 'show', 'flg_none'],
    ['flag', 'list', 'prj_none'],
    ['audit', 'prj_none'],
  ]) {
    const r = await cli(tempDir(t), [...read, ...unreachable]);
    t.equal(r.code, 1, `${read.join(' ')} exits 1`);
    t.equal(r.json.error, 'Storage unavailable');
    t.match(r.json.detail, /PostgreSQL, the system of record, cannot be reached/);
    t.notMatch(r.json.detail, /changed|applied/, `${read.join(' ')} reads: its refusal speaks of no change`);
  }
  for (const write of [
    ['org', 'create', '--name', 'Acme'],
    ['flag', 'rename', 'flg_none', 'x'],
  ]) {
    const r = await cli(tempDir(t), [...write, ...unreachable]);
    t.equal(r.code, 1, `${write.join(' ')} exits 1`);
    t.equal(r.json.error, 'Storage unavailable');
    t.match(
      r.json.detail,
      /nothing was changed, and the change will not be applied later/,
      `${write.join(' ')} writes: its refusal says nothing was changed`,
    );
  }
});

t.test('migrate-to-postgres copies a data dir into an empty database; nodes serve it', async (t) => {
  const url = await pg.newDatabase();
  const source = tempDir(t);
  const world = buildWorld(source);
  await world.store.close();
  const usage = await cli(source, ['migrate-to-postgres']);
  t.equal(usage.code, 2, 'without --database: a usage error');
  const migrated = await ok(t, source, ['migrate-to-postgres', '--database', url]);
  t.equal(migrated.revision, 1);
  t.ok(migrated.records > 30, `${migrated.records} records copied`);
  const again = await cli(tempDir(t), ['org', 'create', '--name', 'x', '--database', url]);
  t.equal(again.code, 0);
  const other = tempDir(t);
  buildWorld(other).store.close();
  const refused = await cli(other, ['migrate-to-postgres', '--database', url]);
  t.equal(refused.code, 1, 'a database holding data is refused');
  t.match(refused.json.detail, /already holds Flagwire data/);

  // The migrated dir is the database's copy: a node starts on it, and another on an empty dir.
  const [onSource, fresh] = await Promise.all([startNode(url, source), startNode(url)]);
  t.teardown(async () => {
    await Promise.all([onSource.stop(), fresh.stop()]);
  });
  await Promise.all([waitReady(onSource), waitReady(fresh)]);
  const lists = await Promise.all([onSource, fresh].map((n) => call(n.baseUrl, 'GET', '/api/v1/flags', { token: world.secrets.write })));
  t.equal(lists[0]!.status, 200);
  t.strictSame(lists[1]!.json, lists[0]!.json, 'both nodes list the same flags');
  const evaluated = await call(fresh.baseUrl, 'GET', `/v1/flags/${world.ids.flag}?cohort=alice`);
  t.equal(evaluated.json.enabled, true, 'evaluation on the new node');
});

t.test('a data dir holding data of its own is refused by a node and by the console, never replaced', async (t) => {
  const url = await pg.newDatabase();
  const dir = tempDir(t);
  buildWorld(dir).store.close();
  const r = await cli(dir, ['org', 'list', '--database', url]);
  t.equal(r.code, 1);
  t.match(r.json.detail, /migrate-to-postgres/);
  await t.rejects(startNode(url, dir), /data of its own/, 'a node refuses to start on it');
  const plain = await cli(dir, ['org', 'list']);
  t.equal(plain.json.orgs.length, 3, 'the data dir is untouched');
});

// migrate-to-postgres is refused while a server serves the data dir (it would go on acknowledging
// writes into a file that has just become a copy, writes PostgreSQL never gets); once the server has
// stopped, or was killed, the migration runs and PostgreSQL has every acknowledged write.
import t from 'tap';
import { call } from '../helpers/http.js';
import { cli, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { startTestServer } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

async function recordsIn(url: string): Promise<number> {
  const db = url.split('/').pop()!;
  const { rows } = await pg.admin<{ n: number }>(db, "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'flagwire_records'");
  if (rows[0]!.n === 0) return 0;
  return (await pg.admin<{ n: number }>(db, 'SELECT count(*)::int AS n FROM flagwire_records')).rows[0]!.n;
}

t.test('refused while a server serves the data dir; runs after it stopped', async (t) => {
  const url = await pg.newDatabase();
  const dir = tempDir(t);
  const world = buildWorld(dir);
  await world.store.close();
  const server = await startTestServer({ dataDir: dir });
  t.teardown(async () => {
    await server.stop();
  });

  const refused = await cli(dir, ['migrate-to-postgres', '--database', url]);
  t.equal(refused.code, 1, `refused: ${refused.stdout}${refused.stderr}`);
  t.equal(refused.json.error, 'Storage unavailable');
  t.match(refused.json.detail, new RegExp(`in use by a running server \\(process ${server.proc.pid}\\)`), 'names the server');
  t.match(refused.json.detail, /stop it/);
  t.equal(await recordsIn(url), 0, 'nothing in PostgreSQL');

  const patched = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, {
    token: world.secrets.write,
    body: { trafficPercentage: 77 },
  });
  t.equal(patched.status, 200, 'the server still accepts writes');
  const plain = await ok(t, dir, ['flag', 'show', world.ids.flag]);
  t.equal(plain.trafficPercentage, 77, 'into a data dir that is still no copy');

  t.equal(await server.stop(), 0);
  const migrated = await ok(t, dir, ['migrate-to-postgres', '--database', url]);
  t.equal(migrated.revision, 1);
  const fromPg = await ok(t, tempDir(t), ['flag', 'show', world.ids.flag, '--database', url]);
  t.equal(fromPg.trafficPercentage, 77, 'the acknowledged write reached PostgreSQL');
});

t.test('a server killed with kill -9 does not block the migration', async (t) => {
  const url = await pg.newDatabase();
  const dir = tempDir(t);
  await buildWorld(dir).store.close();
  const server = await startTestServer({ dataDir: dir });
  server.proc.kill('SIGKILL');
  t.equal(await server.stop(), null, 'killed');
  const migrated = await ok(t, dir, ['migrate-to-postgres', '--database', url]);
  t.equal(migrated.revision, 1);
  t.ok((await recordsIn(url)) > 30, 'copied');
});

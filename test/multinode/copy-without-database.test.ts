// A data dir that is PostgreSQL's copy is written only by following its database: without
// --database, console writes are refused (exit 2, naming --database) and change nothing, here or in
// PostgreSQL; reads run and say on stderr that they read a copy; `serve` refuses to start on it.
import t from 'tap';
import { call } from '../helpers/http.js';
import { cli, expectRefused, ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { startTestServer } from '../helpers/server.js';
import { seedInProcess, startNode, waitReady } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

t.test('a copy without --database: writes refused and nothing changes, reads say they read a copy, serve refuses', async (t) => {
  const url = await pg.newDatabase();
  const seeded = await seedInProcess(t, url);
  const copy = tempDir(t);
  const withDb = await ok(t, copy, ['flag', 'list', seeded.projectId, '--database', url]);

  const refusal = { code: 2, error: 'Invalid request', detail: /--database/ };
  for (const args of [
    ['flag', 'rename', seeded.flagId, 'renamed-on-the-copy'],
    ['token', 'revoke', seeded.tokenId, '--as', seeded.ownerId],
    ['flag', 'create', seeded.projectId, '--name', 'only-here'],
    ['org', 'create', '--name', 'Copy Org'],
  ]) {
    const r = await expectRefused(t, copy, args, refusal);
    t.match(r.stderr, /FLAGWIRE_DATABASE_URL/, `${args.slice(0, 2).join(' ')}: stderr names the setting`);
  }
  const human = await cli(copy, ['flag', 'rename', seeded.flagId, 'x'], { json: false });
  t.equal(human.code, 2, 'without --json: exit 2 as well');
  t.match(human.stderr, /--database/);

  const read = await cli(copy, ['flag', 'list', seeded.projectId]);
  t.equal(read.code, 0, 'a read runs');
  t.strictSame(read.json, withDb, 'stdout is what the same read with --database prints');
  t.match(read.stderr, /copy of a PostgreSQL database[\s\S]*--database/, 'stderr says it read a copy');

  // PostgreSQL never heard of the refused writes: the token works on a node, the flag keeps its name.
  const node = await startNode(url);
  t.teardown(async () => {
    await node.stop();
  });
  await waitReady(node);
  const flags = await call(node.baseUrl, 'GET', '/api/v1/flags', { token: seeded.secret });
  t.equal(flags.status, 200, 'the token the copy was asked to revoke still works on a node');
  t.strictSame(
    flags.json.flags.map((f: { name: string }) => f.name),
    ['checkout'],
    'no rename, no new flag',
  );
  const orgs = await ok(t, tempDir(t), ['org', 'list', '--database', url]);
  t.strictSame(
    orgs.orgs.map((o: { name: string }) => o.name),
    ['Acme'],
    'no new organisation',
  );

  const served = await startTestServer({ dataDir: copy }).then(
    async (server) => {
      await server.stop();
      return 'started';
    },
    (err: Error) => err.message,
  );
  t.match(
    served,
    /exited with 2[\s\S]*FLAGWIRE_DATABASE_URL \(--database\)/,
    'serve refuses to start on the copy, exit 2 naming the setting',
  );
  const after = await cli(copy, ['flag', 'list', seeded.projectId, '--database', url]);
  t.strictSame(after.json, withDb, 'the copy still follows its database');
});

// The web console on nodes sharing one PostgreSQL, one of them with two front-end threads: a password
// set by the console reaches every node, a session signed in on one node works on the other, and
// signing out on either ends it on both. Also: a node with several threads reports its copy's state
// (the writer's notices reach every thread) in /ready and once in /metrics.
import { spawn } from 'node:child_process';
import t from 'tap';
import { kCli } from '../helpers/server.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { consoleCall, signIn } from '../helpers/web-console.js';
import { scrapeMetrics } from '../helpers/http.js';
import { plainNode } from '../helpers/plain-process.js';
import { sharedPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { seedInProcess, startReadyNodes, until, waitReady } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

/** `flagwire user password USER_ID --database URL`, the password on standard input. */
function setPassword(dataDir: string, url: string, userId: string, password: string): Promise<number> {
  const child = spawn(...plainNode([kCli, 'user', 'password', userId, '--json', '--data', dataDir, '--database', url]), {
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  child.stdin.end(`${password}\n`);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? -1)));
}

t.test('web console sessions are the same on every node', async (t) => {
  const url = await pg.newDatabase();
  const seeded = await seedInProcess(t, url);
  t.equal(await setPassword(tempDir(t), url, seeded.ownerId, 'shared across the nodes'), 0);
  const [a] = (await startReadyNodes(t, url, 1, { FLAGWIRE_HTTP_THREADS: '2', FLAGWIRE_EVAL_WORKERS: '2' })) as [TestServer];
  const [b] = (await startReadyNodes(t, url, 1)) as [TestServer];

  const ready = await waitReady(a);
  t.equal(ready.replica.caughtUp, true, 'a node with two front-end threads reports its copy caught up');
  const metrics = await scrapeMetrics(a.baseUrl);
  t.equal(metrics.get('flagwire_replica_connected'), 1, 'counted once, not once per thread');
  t.equal(metrics.get('flagwire_http_threads'), 2);

  const onA = await signIn(a.baseUrl, 'owner@acme.test', 'shared across the nodes');
  t.equal((await consoleCall(a.baseUrl, onA, 'GET', 'home')).status, 200, 'signed in on A');
  await until(async () => (await consoleCall(b.baseUrl, onA, 'GET', 'home')).status === 200, 60_000, "A's session on B");
  const home = await consoleCall(b.baseUrl, onA, 'GET', 'home');
  t.same(
    home.json.orgs.map((o: { name: string }) => o.name),
    ['Acme'],
    "B shows the signed-in user's organisations",
  );

  t.equal((await consoleCall(b.baseUrl, onA, 'POST', 'sign-out')).status, 200, 'signed out on B');
  await until(async () => (await consoleCall(a.baseUrl, onA, 'GET', 'home')).status === 401, 60_000, 'the sign-out on A');
  t.equal((await consoleCall(b.baseUrl, onA, 'GET', 'home')).status, 401);

  // A new password, set by the console while the nodes run, ends a session made on B everywhere.
  const onB = await signIn(b.baseUrl, 'owner@acme.test', 'shared across the nodes');
  t.equal(await setPassword(tempDir(t), url, seeded.ownerId, 'a newer one for everyone'), 0);
  for (const node of [a, b]) {
    await until(
      async () => (await consoleCall(node.baseUrl, onB, 'GET', 'home')).status === 401,
      60_000,
      `the ended session on ${node.baseUrl}`,
    );
  }
  await until(
    async () =>
      signIn(a.baseUrl, 'owner@acme.test', 'a newer one for everyone').then(
        () => true,
        () => false,
      ),
    60_000,
    'the new password on A',
  );
});

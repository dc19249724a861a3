// scripts/cluster.sh, the "Several nodes" walk-through of docs/deployment.md: it starts a private PostgreSQL and N
// nodes on one machine (the first seeds the demo), a write on one node is evaluated on another, a
// console command with the printed settings reaches them; `stop` ends every process it started,
// `start` again serves the same data, and `destroy` removes the folder.
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { alive, freePort } from '../helpers/postgres.js';
import { plain } from '../helpers/plain-process.js';
import { until } from './support.js';

const kScript = fileURLToPath(new URL('../../../scripts/cluster.sh', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function cluster(env: Record<string, string>, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(...plain(kScript, args), { env: { ...process.env, ...env }, timeout: 300_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Two consecutive free ports (the script gives node i the port base + i - 1). */
async function twoFreePorts(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port < 65535 && (await bindable(port + 1))) return port;
  }
}

t.test('scripts/cluster.sh: PostgreSQL and two nodes on one machine', async (t) => {
  const parent = mkdtempSync(join(tmpdir(), 'flagwire-cluster-'));
  chmodSync(parent, 0o755); // as root, PostgreSQL runs as the postgres user, which must reach its folder
  const dir = join(parent, 'cluster');
  const base = await twoFreePorts();
  const env = { FLAGWIRE_CLUSTER_DIR: dir, FLAGWIRE_CLUSTER_PG_PORT: String(await freePort()), FLAGWIRE_CLUSTER_PORT: String(base) };
  t.teardown(async () => {
    await cluster(env, 'destroy');
  });
  const [a, b] = [`http://127.0.0.1:${base}`, `http://127.0.0.1:${base + 1}`];

  const started = await cluster(env, 'start', '2');
  t.equal(started.code, 0, `start exits 0\n${started.stderr}`);
  for (const node of [a, b]) t.equal((await call(node, 'GET', '/ready')).status, 200, `${node} is ready`);
  const secret = /demo-write +write (fw_\S+)/.exec(started.stdout)?.[1];
  const flagId = /\/v1\/flags\/(flg_\w+)/.exec(started.stdout)?.[1];
  const settings = /export (FLAGWIRE_DATABASE_URL=\S+) (FLAGWIRE_DATA=\S+)/.exec(started.stdout);
  t.ok(secret !== undefined && flagId !== undefined && settings !== null, 'start prints the demo token, a flag and the console settings');

  // docs/deployment.md's example: the demo, seeded by the first node, evaluated through OFREP on the second.
  const bulk = await call(b, 'POST', '/ofrep/v1/evaluate/flags', {
    headers: { 'x-flagwire-project': 'prj_DemoWebShop' },
    body: { context: { targetingKey: 'user-42' } },
  });
  t.equal(bulk.status, 200, 'OFREP bulk evaluation of the demo project on the second node');
  t.ok(
    bulk.json.flags.some((f: { key: string }) => f.key === flagId),
    'it holds the demo flag',
  );

  // A write answered by the first node is evaluated on the second.
  const patched = await call(a, 'PATCH', `/api/v1/flags/${flagId}`, { token: secret!, body: { enabled: false } });
  t.equal(patched.status, 200);
  await until(
    async () => (await call(b, 'GET', `/v1/flags/${flagId}?targetingKey=k`)).json?.enabled === false,
    20_000,
    'the change on the second node',
  );

  // The printed settings let console commands reach the nodes.
  const consoleEnv = Object.fromEntries(settings!.slice(1).map((s) => s.split(/=(.*)/s).slice(0, 2) as [string, string]));
  const renamed = await cli(null, ['flag', 'rename', flagId!, 'renamed-by-console'], { env: consoleEnv });
  t.equal(renamed.code, 0, `the console's rename exits 0\n${renamed.stderr}`);
  await until(
    async () => (await call(b, 'GET', `/v1/flags/${flagId}?targetingKey=k`)).json?.name === 'renamed-by-console',
    20_000,
    "the console's rename on the second node",
  );

  // stop ends every process it started, PostgreSQL included.
  const pids = [1, 2].map((i) => Number(readFileSync(join(dir, `node-${i}.pid`), 'utf8')));
  const pgPid = Number(readFileSync(join(dir, 'pg', 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  t.equal((await cluster(env, 'stop')).code, 0, 'stop exits 0');
  t.same([...pids, pgPid].filter(alive), [], 'no node and no PostgreSQL process is left');

  // start again serves the same data; destroy removes the folder.
  const again = await cluster(env, 'start', '2');
  t.equal(again.code, 0, `start again exits 0\n${again.stderr}`);
  t.same(
    (await call(b, 'GET', `/v1/flags/${flagId}?targetingKey=k`)).json,
    { id: flagId, name: 'renamed-by-console', enabled: false },
    'the data survived stop and start',
  );
  t.equal((await cluster(env, 'destroy')).code, 0, 'destroy exits 0');
  t.notOk(existsSync(dir), 'destroy removes the cluster folder');
});

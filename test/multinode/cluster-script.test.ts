// scripts/cluster.sh, the "Several nodes" walk-through of docs/deployment.md: it starts a private PostgreSQL and N
// nodes on one machine (the first seeds the demo), each on its own HTTP and sync port, a write on one node
// is evaluated on another and served by every node's sync service, a console command with the printed
// settings reaches them; `stop` ends every process it started, `start` again serves the same data, and
// `destroy` removes the folder, each saying what it did. A start that fails (a node's port taken) stops what it started and exits 1.
// The script runs as the docs call it, in an environment without FLAGWIRE_SYNC_PORT (the test runner's
// 0 is taken out), on ports the test found free instead of the defaults (another process may hold them).
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { alive } from '../helpers/postgres.js';
import { bindable, freePort } from '../helpers/free-port.js';
import { plain } from '../helpers/plain-process.js';
import { SyncClient } from '../helpers/sync-client.js';
import { until } from './support.js';

const kScript = fileURLToPath(new URL('../../../scripts/cluster.sh', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A user's environment: the test runner's FLAGWIRE_SYNC_PORT=0 (every test server's sync service off) taken out. */
function userEnv(): NodeJS.ProcessEnv {
  const { FLAGWIRE_SYNC_PORT: _, ...rest } = process.env;
  return rest;
}

function cluster(env: Record<string, string>, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(...plain(kScript, args), { env: { ...userEnv(), ...env }, timeout: 300_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

/** Two consecutive free ports (the script gives node i the port base + i - 1). */
async function twoFreePorts(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port < 65535 && (await bindable(port + 1))) return port;
  }
}

/** A cluster folder PostgreSQL can reach, and the settings that give it ports the test found free. */
async function clusterEnv(t: Test): Promise<{ dir: string; base: number; syncBase: number; pgPort: number; env: Record<string, string> }> {
  const parent = mkdtempSync(join(tmpdir(), 'flagwire-cluster-'));
  chmodSync(parent, 0o755); // as root, PostgreSQL runs as the postgres user, which must reach its folder
  const dir = join(parent, 'cluster');
  const base = await twoFreePorts();
  let syncBase = await twoFreePorts();
  while (Math.abs(syncBase - base) < 2) syncBase = await twoFreePorts();
  const pgPort = await freePort();
  const env = {
    FLAGWIRE_CLUSTER_DIR: dir,
    FLAGWIRE_CLUSTER_PG_PORT: String(pgPort),
    FLAGWIRE_CLUSTER_PORT: String(base),
    FLAGWIRE_CLUSTER_SYNC_PORT: String(syncBase),
  };
  t.teardown(async () => {
    await cluster(env, 'destroy');
    rmSync(parent, { recursive: true, force: true });
  });
  return { dir, base, syncBase, pgPort, env };
}

t.test('scripts/cluster.sh: PostgreSQL and two nodes on one machine', async (t) => {
  const { dir, base, syncBase, env } = await clusterEnv(t);
  const [a, b] = [`http://127.0.0.1:${base}`, `http://127.0.0.1:${base + 1}`];

  const started = await cluster(env, 'start', '2');
  t.equal(started.code, 0, `start exits 0\n${started.stderr}`);
  for (const node of [a, b]) t.equal((await call(node, 'GET', '/ready')).status, 200, `${node} is ready`);
  for (const i of [1, 2]) {
    t.match(
      started.stdout,
      `node ${i}: http://127.0.0.1:${base + i - 1}, sync 127.0.0.1:${syncBase + i - 1} `,
      `node ${i}'s ports are printed`,
    );
  }
  const secret = /demo-write +write (fw_\S+)/.exec(started.stdout)?.[1];
  const readSecret = /demo-read +read +(fw_\S+)/.exec(started.stdout)?.[1];
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
  // Every node serves flagd's sync service on its own port, and each has the shared write.
  for (const syncPort of [syncBase, syncBase + 1]) {
    const client = new SyncClient(syncPort);
    t.teardown(() => client.close());
    const flagName = (await call(a, 'GET', `/v1/flags/${flagId}?targetingKey=k`)).json?.name as string;
    await until(
      async () => {
        const set = JSON.parse(await client.fetchAllFlags({ selector: `flagSetId=prj_DemoWebShop,token=${readSecret}` }));
        return set.flags[flagName]?.defaultVariant === 'off' && set.flags[flagName]?.targeting === undefined;
      },
      60_000,
      `the write, off for everyone, in the flag set of the sync service on ${syncPort}`,
    );
  }

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
  const stopped = await cluster(env, 'stop');
  t.equal(stopped.code, 0, 'stop exits 0');
  t.same([...pids, pgPid].filter(alive), [], 'no node and no PostgreSQL process is left');
  for (const [i, pid] of pids.entries())
    t.match(stopped.stdout, `stopped node-${i + 1} (pid ${pid})`, `stop says it stopped node ${i + 1}`);
  t.match(stopped.stdout, `stopped PostgreSQL (pid ${pgPid})`, 'stop says it stopped PostgreSQL');
  t.match(stopped.stdout, `its data stays in ${dir}`, 'stop says the data stays');
  const twice = await cluster(env, 'stop');
  t.equal(twice.code, 0, 'a second stop exits 0');
  t.match(twice.stdout, `nothing was running in ${dir}`, 'a second stop says nothing was running');

  // start again serves the same data; destroy removes the folder.
  const again = await cluster(env, 'start', '2');
  t.equal(again.code, 0, `start again exits 0\n${again.stderr}`);
  t.same(
    (await call(b, 'GET', `/v1/flags/${flagId}?targetingKey=k`)).json,
    { id: flagId, name: 'renamed-by-console', enabled: false },
    'the data survived stop and start',
  );
  const destroyed = await cluster(env, 'destroy');
  t.equal(destroyed.code, 0, 'destroy exits 0');
  t.notOk(existsSync(dir), 'destroy removes the cluster folder');
  t.match(
    destroyed.stdout,
    /stopped node-1 \(pid \d+\)\nstopped node-2 \(pid \d+\)\nstopped PostgreSQL \(pid \d+\)\n/,
    'destroy says what it stopped',
  );
  t.match(destroyed.stdout, `removed ${dir}`, 'destroy says it removed the folder');
  const none = await cluster(env, 'destroy');
  t.equal(none.code, 0, 'destroy with no cluster exits 0');
  t.match(none.stdout, `no cluster at ${dir}: nothing to stop`, 'and says there was none');
});

t.test('scripts/cluster.sh: a start that fails stops what it started', async (t) => {
  const { dir, base, syncBase, pgPort, env } = await clusterEnv(t);
  // Another process holds the second node's sync port: the second node cannot start.
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(syncBase + 1, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  const started = await cluster(env, 'start', '2');
  t.equal(started.code, 1, 'start exits 1');
  t.match(started.stderr, String(syncBase + 1), "it shows the node's log, naming the port taken");
  t.match(started.stderr, 'start failed: stopping what it started');
  const first = /node 1: http:\/\/127\.0\.0\.1:\d+, sync [\d.:]+ \(pid (\d+)/.exec(started.stdout);
  t.ok(first !== null, `the first node had started\n${started.stdout}`);
  t.notOk(alive(Number(first?.[1])), 'the first node is stopped');
  for (const port of [base, base + 1, syncBase, pgPort]) t.ok(await bindable(port), `nothing listens on ${port} any more`);
  t.notOk(existsSync(join(dir, 'pg', 'data', 'postmaster.pid')), 'PostgreSQL is stopped');
  t.notOk(existsSync(join(dir, 'node-1.pid')) || existsSync(join(dir, 'node-2.pid')), 'no pid file is left');

  // With the port free again, the same folder starts.
  await new Promise<void>((resolve) => holder.close(() => resolve()));
  const again = await cluster(env, 'start', '2');
  t.equal(again.code, 0, `start exits 0 once the port is free\n${again.stderr}`);
  t.equal((await call(`http://127.0.0.1:${base + 1}`, 'GET', '/ready')).status, 200, 'the second node is ready');
});

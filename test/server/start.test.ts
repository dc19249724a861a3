// The server process: /health, demo seed, docs page, unknown routes, config errors, clean SIGTERM.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { kCli, startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { SyncClient } from '../helpers/sync-client.js';
import { kErrors } from '../../src/errors.js';
import { kSchemaVersion } from '../../src/store/layout.js';
import { plainNode } from '../helpers/plain-process.js';

// Two servers for the tests that only ask them things, started by the first test that needs each, each
// stopped by a test that proves how it stops (a start is about 1 CPU s): a demo one, sync service on
// (the demo's seed, its sync service, then stopped for a start on its data), and a plain one, sync
// service on (its ports taken by a second start, unknown routes, then its SIGTERM, last). The plain
// one's requests come after the tests that spawnSync: a spawnSync stops this process's event loop, and
// a kept-alive connection the server closed meanwhile would be taken for the next request unseen.
let demoServer: Promise<TestServer> | undefined;
let plainServer: Promise<TestServer> | undefined;
const demo = () => (demoServer ??= startTestServer({ demo: true, syncPort: 'free' }));
const plain = () => (plainServer ??= startTestServer({ syncPort: 'free' }));
t.teardown(async () => {
  for (const server of [demoServer, plainServer]) await (await server?.catch(() => undefined))?.stop();
});

t.test('serve --demo seeds an empty data dir, prints working tokens, and /health answers', async (t) => {
  const server = await demo();
  const health = await call(server.baseUrl, 'GET', '/health');
  t.equal(health.status, 200);
  t.same(health.json, { status: 'ok', storeVersion: kSchemaVersion });
  const out = server.output();
  t.match(out, /Demo data seeded/);
  const secrets = [...out.matchAll(/(demo-[\w-]+)\s+(read|write)\s+(fw_\w+)/g)];
  t.equal(secrets.length, 3, 'three demo tokens printed');
  for (const [, name, permission, secret] of secrets) {
    const r = await call(server.baseUrl, 'GET', '/api/v1/token', { token: secret });
    t.equal(r.status, 200, `${name} works`);
    t.equal(r.json.permission, permission);
  }
  t.match(out, /curl -s -H "Authorization: Bearer fw_\w+" http:\/\/127\.0\.0\.1:\d+\/api\/v1\/flags/);
  t.match(out, /curl -s "http:\/\/127\.0\.0\.1:\d+\/v1\/flags\/flg_\w+\?targetingKey=user-42"/);

  // The ids are printed too, and the console finds them again (the secrets it never shows again).
  const orgId = /^ {2}organisation {2}(org_\w+) {2}Demo Org/m.exec(out)?.[1];
  const printed = [...out.matchAll(/^ {2}project {7}(prj_\w+) {2}(Web shop|Platform) /gm)].map((m) => ({ id: m[1], name: m[2] }));
  t.ok(orgId, 'the organisation id is printed');
  t.equal(printed.length, 2, 'both project ids are printed');
  t.match(out, new RegExp(`Find the ids again: npx flagwire project list --data ${server.dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  const listed = await cli(server.dataDir, ['project', 'list', '--org', orgId!]);
  t.equal(listed.code, 0);
  // The seed writes each record a millisecond after the one before: lists, oldest first, are in its order.
  t.strictSame(
    listed.json.projects.map((p: { id: string; name: string }) => ({ id: p.id, name: p.name })),
    printed,
    'project list gives the printed ids, in the order printed',
  );
  const flags = await cli(server.dataDir, ['flag', 'list', printed[0]!.id!]);
  t.strictSame(
    flags.json.flags.map((f: { name: string }) => f.name),
    ['new-checkout', 'dark-mode', 'holiday-banner'],
    "the web shop's flags in the order the demo made them",
  );
  const tokens = await cli(server.dataDir, ['token', 'list', printed[0]!.id!]);
  t.strictSame(
    tokens.json.tokens.map((k: { name: string }) => k.name),
    ['demo-read', 'demo-write'],
    'and its tokens',
  );
});

t.test('serve --demo serves the sync service and prints the selector of a flagd in-process provider', async (t) => {
  const server = await demo();
  const client = new SyncClient(server.syncPort);
  t.teardown(() => client.close());
  const printed = /flagd in-process provider: host 127\.0\.0\.1, port (\d+), selector "(flagSetId=prj_\w+,token=fw_\w+)"/.exec(
    server.output(),
  );
  t.ok(printed, 'the provider settings are printed');
  t.equal(Number(printed![1]), server.syncPort);
  const set = JSON.parse(await client.fetchAllFlags({ header: printed![2]! }));
  t.ok(Object.keys(set.flags).length > 0, 'the demo shop has flags flagd can serve');
});

t.test('serve --demo on a data dir with data seeds nothing', async (t) => {
  const first = await demo();
  t.equal(await first.stop(), 0);
  const second = await startTestServer({ demo: true, dataDir: first.dataDir });
  t.teardown(() => second.stop());
  t.match(second.output(), /not empty: no demo data seeded/);
  t.notMatch(second.output(), /fw_/);
});

t.test("the suite's password cost switch is logged as a warning at start, and nothing when it is off", async (t) => {
  const [on, off] = await Promise.all([
    startTestServer({ env: { FLAGWIRE_TEST_PASSWORD_COST: '10' } }),
    startTestServer({ env: { FLAGWIRE_TEST_PASSWORD_COST: '' } }),
  ]);
  t.teardown(() => Promise.all([on.stop(), off.stop()]));
  // Both stopped and their output read to its end, so that the second one's silence is all it wrote.
  for (const server of [on, off]) {
    const closed = new Promise((resolve) => server.proc.once('close', resolve));
    t.equal(await server.stop(), 0);
    await closed;
  }
  const warning = on
    .logs()
    .split('\n')
    .filter((line) => line.includes('FLAGWIRE_TEST_PASSWORD_COST'))
    .map((line) => JSON.parse(line) as { level: number; scryptN: number });
  t.equal(warning.length, 1, 'one line');
  t.equal(warning[0]?.level, 40, 'a warning');
  t.equal(warning[0]?.scryptN, 1024);
  t.notMatch(off.logs(), /FLAGWIRE_TEST_PASSWORD_COST/, 'off: not said');
});

t.test('a bad setting stops start-up with one line naming it and exit code 2', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ FLAGWIRE_PORT: '70000' }, /FLAGWIRE_PORT/],
    [{ FLAGWIRE_PORT: 'eighty' }, /FLAGWIRE_PORT/],
    [{ FLAGWIRE_RATE_LIMIT: 'lots' }, /FLAGWIRE_RATE_LIMIT/],
    [{ FLAGWIRE_EVAL_WORKERS: '0' }, /FLAGWIRE_EVAL_WORKERS/],
    [{ FLAGWIRE_LOG_LEVEL: 'loud' }, /FLAGWIRE_LOG_LEVEL/],
    [{ FLAGWIRE_MAX_BUFFERED_BODY_BYTES: '1000000' }, /FLAGWIRE_MAX_BUFFERED_BODY_BYTES/],
    [{ FLAGWIRE_DATA: '/etc/hostname/not-a-directory' }, /FLAGWIRE_DATA/],
    [{ FLAGWIRE_CHANGE_LOG_BYTES: '0' }, /FLAGWIRE_CHANGE_LOG_BYTES: 0 is outside 1\.\./],
    [{ FLAGWIRE_CHANGE_LOG_BYTES: '64MiB' }, /FLAGWIRE_CHANGE_LOG_BYTES/],
  ];
  for (const [env, expected] of cases) {
    const r = spawnSync(...plainNode([kCli, 'serve']), {
      env: { ...process.env, FLAGWIRE_DATA: tempDataDir(), ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
    t.equal(r.status, 2, JSON.stringify(env));
    t.match(r.stderr, expected);
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  }
});

t.test('a sync port already in use, or not a port, stops start-up with one line naming FLAGWIRE_SYNC_PORT and exit code 2', async (t) => {
  const first = await plain();
  for (const [value, problem] of [
    [String(first.syncPort), new RegExp(`127\\.0\\.0\\.1:${first.syncPort} is already in use`)],
    ['70000', /70000 is outside 0\.\.65535/],
  ] as const) {
    const r = spawnSync(...plainNode([kCli, 'serve', '--port', '0', '--host', '127.0.0.1']), {
      env: { ...process.env, FLAGWIRE_DATA: tempDataDir(), FLAGWIRE_EVAL_WORKERS: '1', FLAGWIRE_SYNC_PORT: value },
      encoding: 'utf8',
      timeout: 60_000,
    });
    t.equal(r.status, 2, `exit 2 (stderr: ${r.stderr})`);
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
    t.match(r.stderr, /invalid FLAGWIRE_SYNC_PORT/);
    t.match(r.stderr, problem);
    t.notMatch(r.stdout, /listening/);
  }
});

t.test('a sync port already in use is refused before the node writes its data directory: --demo seeds nothing', async (t) => {
  const first = await plain();
  const data = tempDataDir();
  const r = spawnSync(...plainNode([kCli, 'serve', '--demo', '--port', '0', '--host', '127.0.0.1', '--data', data]), {
    env: { ...process.env, FLAGWIRE_EVAL_WORKERS: '1', FLAGWIRE_SYNC_PORT: String(first.syncPort) },
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.equal(r.status, 2, `exit 2 (stderr: ${r.stderr})`);
  t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  t.match(r.stderr, new RegExp(`invalid FLAGWIRE_SYNC_PORT: 127\\.0\\.0\\.1:${first.syncPort} is already in use`));
  t.equal(r.stdout, '', 'nothing seeded, nothing listening');
  // Found at the sync service's listen, the writer had opened the data file and seeded the demo first.
  t.strictSame(readdirSync(data), [], 'nothing written in the data directory');
});

t.test('a port already in use stops start-up with one line naming the port setting and exit code 2', async (t) => {
  const first = await plain();
  // Without an exclusive bind (SO_REUSEPORT) the second server would share the port and never exit.
  const r = spawnSync(...plainNode([kCli, 'serve', '--port', String(first.port), '--host', '127.0.0.1']), {
    env: { ...process.env, FLAGWIRE_DATA: tempDataDir(), FLAGWIRE_EVAL_WORKERS: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.equal(r.status, 2, `exit 2 (stderr: ${r.stderr})`);
  t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  t.match(r.stderr, /FLAGWIRE_PORT/);
  t.match(r.stderr, /--port/);
  t.match(r.stderr, new RegExp(`127\\.0\\.0\\.1:${first.port} is already in use`));
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  t.notMatch(r.stdout, /listening/);
  t.equal((await call(first.baseUrl, 'GET', '/health')).status, 200, 'the first server keeps its port');
});

t.test('a port already in use is refused before the node opens its data directory: --demo seeds nothing', async (t) => {
  const first = await plain();
  const data = tempDataDir();
  const r = spawnSync(...plainNode([kCli, 'serve', '--demo', '--port', String(first.port), '--host', '127.0.0.1', '--data', data]), {
    env: { ...process.env, FLAGWIRE_EVAL_WORKERS: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.equal(r.status, 2, `exit 2 (stderr: ${r.stderr})`);
  t.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  t.match(r.stderr, new RegExp(`invalid FLAGWIRE_PORT \\(--port\\): 127\\.0\\.0\\.1:${first.port} is already in use`));
  t.equal(r.stdout, '', 'nothing seeded, nothing listening');
  t.strictSame(readdirSync(data), [], 'nothing written in the data directory');
  const orgs = await cli(data, ['org', 'list']);
  t.equal(orgs.code, 0, orgs.stderr);
  t.strictSame(orgs.json.orgs, [], 'the data directory holds no demo organisation');
});

t.test("an IPv6 host's taken port is written as a URL writes it, [::1]:port, by start-up's try and by the listen alike", async (t) => {
  // One rule (src/port-setting.ts): start-up's try wrote `::1:port`, the sync service's listen `[::1]:port`.
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen({ host: '::1', port: 0 }, resolve));
  t.teardown(() => taken.close());
  const port = (taken.address() as AddressInfo).port;
  for (const [setting, env] of [
    ['FLAGWIRE_PORT (--port)', { FLAGWIRE_PORT: String(port), FLAGWIRE_SYNC_PORT: '0' }],
    ['FLAGWIRE_SYNC_PORT', { FLAGWIRE_PORT: '0', FLAGWIRE_SYNC_PORT: String(port) }],
  ] as const) {
    // Tried before anything starts, and with the try switched off found at listening (uWS's listen, the gRPC server's).
    for (const untried of [{}, { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_PORTS_UNTRIED: '1' }]) {
      const r = spawnSync(...plainNode([kCli, 'serve', '--host', '::1']), {
        env: { ...process.env, FLAGWIRE_DATA: tempDataDir(), FLAGWIRE_EVAL_WORKERS: '1', FLAGWIRE_LOG_LEVEL: 'warn', ...env, ...untried },
        encoding: 'utf8',
        timeout: 60_000,
      });
      const when = 'FLAGWIRE_TEST_PORTS_UNTRIED' in untried ? 'at listening' : 'tried first';
      t.equal(r.status, 2, `${setting}, ${when}: exit 2 (stderr: ${r.stderr})`);
      const lines = r.stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('{'));
      t.equal(lines.length, 1, `${setting}, ${when}: one line`);
      const named = setting.replace(/[()]/g, '\\$&');
      t.match(lines[0], new RegExp(`^flagwire: invalid ${named}: \\[::1\\]:${port} is already in use`), `${setting}, ${when}: in brackets`);
    }
  }
});

t.test('unknown routes are JSON 404s; the docs page has an anchor for every error', async (t) => {
  const server = await plain();
  const r = await call(server.baseUrl, 'GET', '/nope');
  t.equal(r.status, 404);
  t.equal(r.json.error, 'Not found');
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  const docs = await call(server.baseUrl, 'GET', '/docs');
  t.equal(docs.status, 200);
  t.match(docs.headers.get('content-type'), /text\/html/);
  const anchors = [...docs.text.matchAll(/id="([\w-]+)"/g)].map((m) => m[1]);
  for (const { anchor, title } of Object.values(kErrors)) {
    t.ok(anchors.includes(anchor), `#${anchor} is on the page`);
    t.match(docs.text, title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  }
  const documented = new Set<string>(Object.values(kErrors).map((e) => e.anchor));
  for (const anchor of anchors) if (anchor !== 'rate-limited') t.ok(documented.has(anchor!), `#${anchor} belongs to an error`);
});

t.test('SIGTERM stops the server cleanly and quickly, after the requests of the tests before', async (t) => {
  const server = await plain();
  const code = await server.stop();
  t.equal(code, 0, 'exit 0: closed before the shutdown deadline, which exits 1');
  t.notMatch(
    server.logs(),
    /shutdown did not finish in time|drain budget ended with requests in flight/,
    'nothing held it: no deadline, no request cut off',
  );
});

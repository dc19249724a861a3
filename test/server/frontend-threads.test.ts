// Several front-end threads (FLAGWIRE_HTTP_THREADS, issue 16): what is per process stays exact across
// them. Every request here opens a new connection, and the acceptor hands connections to the threads
// in turn, so consecutive requests land on different threads (checked through the per-thread request
// counts in /metrics). Three threads on this 2-core machine: what is tested is correctness, not speed.
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import t from 'tap';
import { scrapeMetrics } from '../helpers/http.js';
import { kCli, tempDataDir, type TestServer } from '../helpers/server.js';
import { plainNode } from '../helpers/plain-process.js';
import { alignClock } from '../helpers/test-hooks.js';
import { startWorldServer } from '../helpers/world-server.js';
import { principalOf } from '../../src/actor/audit-actor.js';
import { kMaxReportsPerWindow } from '../../src/unleash/report-rate.js';

const kThreads = 3;
const threaded = (env: Record<string, string> = {}) => ({
  FLAGWIRE_HTTP_THREADS: String(kThreads),
  FLAGWIRE_EVAL_WORKERS: String(kThreads),
  FLAGWIRE_TEST_HOOKS: '1',
  ...env,
});

/** One request on a connection of its own (no keep-alive agent): the acceptor gives it the next thread. */
function fresh(
  server: TestServer,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  extra: Record<string, string> = {},
  localAddress?: string,
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { connection: 'close', ...extra };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const req = http.request({ host: '127.0.0.1', port: server.port, path, method, headers, agent: false, localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, json });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function threadCounts(server: TestServer): Promise<number[]> {
  const samples = await scrapeMetrics(server.baseUrl);
  return Array.from({ length: kThreads }, (_, i) => samples.get(`flagwire_http_thread_requests_total{thread="${i}"}`) ?? -1);
}

// One threaded server for the tests that leave it as the next expects, in this order (spread, rate
// limit, lockout, sign-in limit, port taken, writes seen, SIGTERM drain, which stops it): a start of
// three threads and three eval workers costs about 4 CPU s. The three that use up a per-address limit
// (counted by the TCP peer: src/http/client-address.ts) connect from loopback addresses of their own,
// so the tests after them, from 127.0.0.1, find their own counts untouched.
const shared = startWorldServer(t, threaded({ FLAGWIRE_SIGN_IN_FAIL_LIMIT: '4' }));
const kRateLimitedAddress = '127.0.0.2';
const kLockedOutAddress = '127.0.0.3';
const kSignInAddress = '127.0.0.4';

t.test("connections are spread over every thread; /metrics sums them and /ready covers every thread's workers", async (t) => {
  const { server, world } = await shared;
  const before = await threadCounts(server);
  for (let i = 0; i < 30; i++) t.equal((await fresh(server, 'GET', `/v1/flags/${world.ids.flag}?targetingKey=u${i}`)).status, 200);
  const after = await threadCounts(server);
  const served = after.map((n, i) => n - before[i]!);
  t.ok(
    served.every((n) => n >= 5),
    `every thread served a share of 30 connections: ${served.join(', ')}`,
  );
  const samples = await scrapeMetrics(server.baseUrl);
  t.equal(samples.get('flagwire_http_threads'), kThreads);
  t.equal(samples.get('flagwire_eval_workers'), kThreads, 'one eval worker per thread, summed');
  t.ok(
    (samples.get('flagwire_http_requests_total{route="/v1/flags/{flag_id}",status="200"}') ?? 0) >= 30,
    'requests summed over the threads',
  );
  for (let i = 0; i < kThreads; i++) {
    const ready = await fresh(server, 'GET', '/ready');
    t.equal(ready.status, 200, `ready, asked on thread ${i}`);
    t.same(ready.json.workers, { answered: kThreads, total: kThreads }, "every thread's workers answered");
  }
});

t.test('the 601st Management API request in a minute is refused, however the requests are spread and interleaved', async (t) => {
  const { server, world } = await shared;
  await alignClock(server, 60);
  const statuses: number[] = [];
  // 700 requests, 25 at a time on connections of their own: the threads count into one limit at once.
  for (let sent = 0; sent < 700; sent += 25) {
    const wave = await Promise.all(
      Array.from({ length: 25 }, () => fresh(server, 'GET', '/api/v1/token', world.secrets.read, undefined, {}, kRateLimitedAddress)),
    );
    statuses.push(...wave.map((r) => r.status));
  }
  t.equal(statuses.filter((s) => s === 200).length, 600, 'exactly 600 admitted');
  t.equal(statuses.filter((s) => s === 429).length, 100, 'the other 100 refused with 429');
  const samples = await scrapeMetrics(server.baseUrl);
  t.equal(samples.get('flagwire_rate_limited_total'), 100, 'refusals summed over the threads');
});

t.test("the 20 failed authentications lockout counts every thread's failures, exactly", async (t) => {
  const { server, world } = await shared;
  const bad = await Promise.all(
    Array.from({ length: 30 }, () => fresh(server, 'GET', '/api/v1/token', 'fw_notATokenAtAll00000000', undefined, {}, kLockedOutAddress)),
  );
  t.equal(bad.filter((r) => r.status === 401).length, 20, 'exactly 20 answered as failed authentications');
  t.equal(bad.filter((r) => r.status === 429).length, 10, 'the rest locked out');
  for (let i = 0; i < kThreads; i++) {
    t.equal(
      (await fresh(server, 'GET', '/api/v1/token', world.secrets.read, undefined, {}, kLockedOutAddress)).status,
      429,
      `a valid token is locked out too (connection ${i})`,
    );
  }
});

t.test('failed web console sign-ins are counted once per process, whatever thread answers them', async (t) => {
  const { server } = await shared;
  // Six accounts from one address, at once: per-thread counts (two each) would answer all six 401.
  const wrong = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      fresh(
        server,
        'POST',
        '/console/api/sign-in',
        undefined,
        { email: `nobody${i}@x.test`, password: 'not the password at all' },
        { origin: server.baseUrl },
        kSignInAddress,
      ),
    ),
  );
  t.same(wrong.map((r) => r.status).sort(), [401, 401, 401, 401, 429, 429], 'exactly the limit answered as failed sign-ins');
  t.match(wrong.find((r) => r.status === 429)?.json.detail, /from this address/);
});

t.test("a project's Unleash SDK reports are held to one bound on the node, however the threads share them", async (t) => {
  const { server, world } = await shared;
  await alignClock(server, 60);
  const before = await threadCounts(server);
  const report = { appName: 'billing', instanceId: 'i-1', bucket: { toggles: { checkout: { yes: 1, no: 0 } } } };
  const statuses: number[] = [];
  // kMaxReportsPerWindow + 100, 25 at a time on connections of their own: per-thread counts would take them all.
  for (let sent = 0; sent < kMaxReportsPerWindow + 100; sent += 25) {
    const wave = await Promise.all(
      Array.from({ length: 25 }, () => fresh(server, 'POST', '/api/client/metrics', world.secrets.read, report)),
    );
    statuses.push(...wave.map((r) => r.status));
  }
  const after = await threadCounts(server);
  t.ok(
    after.every((n, i) => n - before[i]! > 1),
    `every thread took a share: ${after.map((n, i) => n - before[i]!).join(', ')}`,
  );
  t.equal(statuses.filter((s) => s === 202).length, kMaxReportsPerWindow, `exactly ${kMaxReportsPerWindow} taken`);
  t.equal(statuses.filter((s) => s === 429).length, 100, 'the other 100 refused with 429');
});

t.test('a port taken by another process is still a configuration error with several threads', async (t) => {
  const { server: first } = await shared;
  const env: NodeJS.ProcessEnv = { ...process.env, ...threaded() };
  const second = spawnSync(...plainNode([kCli, 'serve', '--host', '127.0.0.1', '--port', String(first.port), '--data', tempDataDir()]), {
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  t.equal(second.status, 2, 'the second server exits 2');
  t.match(second.stderr, /already in use/, 'naming the busy port');
  t.equal((await fresh(first, 'GET', '/health')).status, 200, 'the first keeps serving');
});

t.test(
  'a write answered by one thread is seen by the next request on every thread; a revoked token is refused on every thread',
  async (t) => {
    const { server, world } = await shared;
    for (const percentage of [11, 37, 89]) {
      const patch = await fresh(server, 'PATCH', `/api/v1/flags/${world.ids.flag}`, world.secrets.write, { trafficPercentage: percentage });
      t.equal(patch.status, 200);
      for (let i = 0; i < kThreads * 2; i++) {
        const read = await fresh(server, 'GET', `/api/v1/flags/${world.ids.flag}`, world.secrets.read);
        t.equal(read.json?.trafficPercentage, percentage, `Management API read ${i} sees ${percentage}%`);
      }
    }
    t.equal((await fresh(server, 'PATCH', `/api/v1/flags/${world.ids.flag}`, world.secrets.write, { enabled: false })).status, 200);
    for (let i = 0; i < kThreads * 2; i++) {
      const evaluation = await fresh(server, 'GET', `/v1/flags/${world.ids.flag}?targetingKey=alice`);
      t.equal(evaluation.json?.enabled, false, `evaluation ${i} sees the flag off at once`);
    }
    // Revoked as the console does, from another process's handle on the data file.
    world.run('tokenRevoke', { tokenId: world.tokenIds.read!, principal: principalOf(world.ids.owner) });
    for (let i = 0; i < kThreads * 2; i++) {
      t.equal(
        (await fresh(server, 'GET', '/api/v1/token', world.secrets.read)).status,
        401,
        `the revoked token is refused (connection ${i})`,
      );
    }
  },
);

t.test('SIGTERM drains every thread: requests under way on all of them are answered 200, and the process exits 0', async (t) => {
  const { server, world } = await shared;
  let answered = 0;
  let refused = 0;
  let broken = 0;
  const problems = new Set<string>();
  const load = Array.from({ length: 12 }, async () => {
    for (let i = 0; i < 200; i++) {
      try {
        const r = await fresh(server, 'GET', `/v1/flags/${world.ids.flag}?targetingKey=k${i}`);
        if (r.status === 200) answered++;
        else {
          broken++;
          problems.add(`status ${r.status}`);
        }
      } catch (err) {
        // Once the listen socket is closed a new connection is refused, and the kernel resets those it
        // had queued but the server never accepted: neither is a request the server took and dropped.
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ECONNREFUSED' || code === 'ECONNRESET') refused++;
        else {
          broken++;
          problems.add(String((err as NodeJS.ErrnoException).code ?? (err as Error).message));
        }
        return;
      }
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const code = await server.stop();
  await Promise.all(load);
  t.equal(code, 0, 'exit 0');
  t.notMatch(server.logs(), /shutdown did not finish in time/, 'within the shutdown deadline');
  t.ok(answered > 0, `${answered} answered before and during shutdown`);
  t.equal(broken, 0, `every answer during shutdown is a 200, nothing else failed (${[...problems].join(', ')})`);
  t.comment(`answered ${answered}, connections refused or reset once the listener closed: ${refused}`);
});

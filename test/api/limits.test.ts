// spec: Limits (request rate, failed authentication), CORS (preflights). Token activity, denials and
// their e-mail: activity.test.ts.
//
// The limits count per client address, and every address in 127.0.0.0/8 reaches the server as its own
// client: so subtests that need the same settings share one server, each from an address of its own
// (clientAt), instead of starting one each (a server start is most of a subtest's cost). They run one
// after another; a clock moved by one only moves forward under the next, whose checks are relative.
import t from 'tap';
import http from 'node:http';
import { call, type CallOptions, type Reply, replyOf, requestOf } from '../helpers/http.js';
import type { TestServer } from '../helpers/server.js';
import { advanceClock, alignClock } from '../helpers/test-hooks.js';
import type { World } from '../helpers/world.js';
import { startWorldServer } from '../helpers/world-server.js';
import { principalOf } from '../../src/actor/audit-actor.js';

const setup = (t: { teardown(fn: () => Promise<unknown>): void }, env: Record<string, string> = {}) =>
  startWorldServer(t, { FLAGWIRE_TEST_HOOKS: '1', ...env });
const kDaySeconds = 24 * 3600;

/** Servers by settings, each started by the first subtest that needs it and stopped when the file ends. */
const servers = new Map<string, Promise<{ server: TestServer; world: World }>>();
function shared(env: Record<string, string>, hooks = true): Promise<{ server: TestServer; world: World }> {
  const key = JSON.stringify([env, hooks]);
  let started = servers.get(key);
  if (started === undefined) {
    started = hooks ? setup(t, env) : startWorldServer(t, env);
    servers.set(key, started);
  }
  return started;
}
/** The default limits (600 requests a minute, 20 failed authentications), test hooks on. */
const kDefaults: Record<string, string> = {};
/** Small limits, test hooks off, and the bench-only switch that would drop the rate limiter (it must not: hooks off). */
const kSmallNoHooks = { FLAGWIRE_RATE_LIMIT: '4', FLAGWIRE_AUTH_FAIL_LIMIT: '1', FLAGWIRE_TEST_RATE_LIMIT: 'off' };
/** The same switch with the hooks on (the rate limiter is dropped), and a failed-auth limit of 2. */
const kRateLimiterOff = { FLAGWIRE_RATE_LIMIT: '4', FLAGWIRE_AUTH_FAIL_LIMIT: '2', FLAGWIRE_TEST_RATE_LIMIT: 'off' };

let lastAddress = 10;
/** A loopback address no other subtest uses: a client the limits have not counted yet. */
const freshAddress = () => `127.0.1.${++lastAddress}`;

/** `call` from a given loopback source address (all of 127.0.0.0/8 reaches the server): another client IP. */
function clientAt(t: { teardown(fn: () => void): void }, server: TestServer, localAddress: string) {
  const agent = new http.Agent({ keepAlive: true });
  t.teardown(() => agent.destroy());
  return (method: string, path: string, opts: CallOptions = {}): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const { headers, body } = requestOf(opts);
      const req = http.request({ host: '127.0.0.1', port: server.port, method, path, localAddress, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const replyHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of [value ?? []].flat()) replyHeaders.append(name, v);
          }
          resolve(replyOf(res.statusCode!, replyHeaders, Buffer.concat(chunks).toString()));
        });
      });
      req.on('error', reject);
      req.end(body);
    });
}

t.test('the 601st request in a minute gets a plain 429 (default limit)', async (t) => {
  const { server, world } = await shared(kDefaults);
  const from = clientAt(t, server, freshAddress());
  // The limiter counts in 10 s buckets of the clock, and a burst is cut at 600 within any 50 s
  // (src/http/rate-limit.ts). Starting just after a minute boundary makes the outcome independent of
  // when the test runs; the check after the loop makes a machine too slow for it fail loudly.
  const startedAt = await alignClock(server, 60);
  t.ok(startedAt % 60_000 < 1000, 'the clock is just past a minute boundary');
  let ok = 0;
  for (let i = 0; i < 600; i++) {
    if ((await from('GET', '/api/v1/token', { token: world.secrets.read })).status === 200) ok++;
  }
  t.equal(ok, 600);
  const r = await from('GET', '/api/v1/token', { token: world.secrets.read });
  const endedAt = await advanceClock(server, 0);
  t.ok(endedAt - startedAt < 50_000, `the 601 requests fell within one 50 s span (${endedAt - startedAt} ms)`);
  t.equal(r.status, 429);
  t.equal(r.json, undefined, 'no JSON envelope');
  t.match(r.headers.get('content-type'), /^text\/plain/);
  t.equal(r.headers.get('retry-after'), '60');
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  const evalRoute = await from('GET', '/health');
  t.equal(evalRoute.status, 200, 'the limit covers the Management API only');
});

t.test('a configured limit applies before auth, and the window moves on', async (t) => {
  const { server, world } = await setup(t, { FLAGWIRE_RATE_LIMIT: '5' });
  for (let i = 0; i < 5; i++) t.equal((await call(server.baseUrl, 'GET', '/api/v1/flags')).status, 401);
  const limited = await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.read });
  t.equal(limited.status, 429, 'even a valid token, before auth runs');
  const big = await call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.write, raw: 'x'.repeat(2_000_000) });
  t.equal(big.status, 429, 'before the body is read');
  await advanceClock(server, 120);
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.read })).status, 200);
});

t.test('21st failed authentication locks the address out, valid token included, for 60 s', async (t) => {
  const { server, world } = await shared(kDefaults);
  const from = clientAt(t, server, freshAddress());
  const bad = ['', 'Bearer nope', `Bearer fw_${'q'.repeat(40)}`];
  for (let i = 0; i < 20; i++) {
    const r = await from('GET', '/api/v1/token', { headers: bad[i % 3] ? { authorization: bad[i % 3]! } : {} });
    t.equal(r.status, 401);
  }
  const locked = await from('GET', '/api/v1/token', { token: world.secrets.read });
  t.equal(locked.status, 429);
  t.equal(locked.json.error, 'Too many failed authentication attempts');
  t.match(locked.json.detail, /wait a minute before retrying/);
  t.match(locked.json.docs, /#too-many-requests$/);
  // 55 s, not 59: the 21 requests above took real time too, which a loaded machine can stretch.
  await advanceClock(server, 55);
  t.equal((await from('GET', '/api/v1/token', { token: world.secrets.read })).status, 429, 'still inside the window');
  await advanceClock(server, 6);
  t.equal((await from('GET', '/api/v1/token', { token: world.secrets.read })).status, 200, 'window over');
});

t.test('a small configured failed-auth limit', async (t) => {
  // The failed-auth limit does not depend on the rate limiter, which this server has dropped.
  const { server, world } = await shared(kRateLimiterOff);
  const from = clientAt(t, server, freshAddress());
  t.equal((await from('GET', '/api/v1/token')).status, 401);
  t.equal((await from('GET', '/api/v1/token')).status, 401);
  t.equal((await from('GET', '/api/v1/token', { token: world.secrets.read })).status, 429);
});

t.test('valid-but-refused tokens never count toward the lockout', async (t) => {
  const { server, world } = await shared(kDefaults);
  const from = clientAt(t, server, freshAddress());
  world.run('tokenRevoke', { tokenId: world.tokenIds.multiRead!, principal: principalOf(world.ids.owner) });
  const expiring = world.run('tokenCreate', {
    projectId: world.ids.single,
    principal: principalOf(world.ids.editor),
    name: 'short-lived',
    permission: 'read',
    expires: '30d',
  });
  t.equal((await from('GET', '/api/v1/token', { token: expiring.secret })).status, 200, 'works until it expires');
  await advanceClock(server, 30 * kDaySeconds + 1);
  const expired = await from('GET', '/api/v1/token', { token: expiring.secret });
  t.equal(expired.json.error, 'Token expired');
  for (let i = 0; i < 25; i++) {
    t.equal((await from('GET', '/api/v1/token', { token: world.secrets.multiRead })).status, 401);
    t.equal((await from('GET', '/api/v1/token', { token: expiring.secret })).status, 401);
    t.equal((await from('PATCH', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.read, body: { enabled: true } })).status, 403);
    t.equal((await from('GET', `/api/v1/flags/${world.ids.groupFlag}?env=production`, { token: world.secrets.stagingWrite })).status, 403);
  }
  t.equal((await from('GET', '/api/v1/token', { token: world.secrets.read })).status, 200);
});

t.test('CORS preflights are neither counted nor refused by either limit', async (t) => {
  const { server, world } = await shared(kSmallNoHooks, false);
  const from = clientAt(t, server, freshAddress());
  const preflight = () =>
    from('OPTIONS', '/api/v1/flags', {
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    });
  const get = (token?: string) => from('GET', '/api/v1/token', token === undefined ? {} : { token });
  for (let i = 0; i < 10; i++) t.equal((await preflight()).status, 204);
  t.equal((await get()).status, 401, 'request 1: a failed authentication');
  const locked = await get(world.secrets.read);
  t.equal(locked.status, 429, 'request 2: locked out');
  t.equal(locked.json.error, 'Too many failed authentication attempts');
  t.equal((await preflight()).status, 204, 'a preflight is answered during a lockout');
  t.equal((await get(world.secrets.read)).json.error, 'Too many failed authentication attempts', 'request 3');
  t.equal((await get(world.secrets.read)).json.error, 'Too many failed authentication attempts', 'request 4');
  const limited = await get(world.secrets.read);
  t.equal(limited.status, 429);
  t.equal(limited.json, undefined, 'request 5 is over the rate limit: the eleven preflights were not counted');
  const late = await preflight();
  t.equal(late.status, 204, 'a preflight is answered over the rate limit');
  t.equal(late.headers.get('access-control-allow-origin'), '*');
});

t.test('each client address has its own counts (other loopback addresses are other clients)', async (t) => {
  const { server, world } = await shared(kSmallNoHooks, false);
  const getFrom = async (address: string, token?: string) =>
    (await clientAt(t, server, address)('GET', '/api/v1/token', token === undefined ? {} : { token })).status;
  t.equal(await getFrom('127.0.0.2'), 401);
  t.equal(await getFrom('127.0.0.2', world.secrets.read), 429, '127.0.0.2 is locked out');
  t.equal(await getFrom('127.0.0.3', world.secrets.read), 200, '127.0.0.3 is not');
  t.equal(await getFrom('127.0.0.3', world.secrets.read), 200);
  t.equal(await getFrom('127.0.0.3', world.secrets.read), 200);
  t.equal(await getFrom('127.0.0.3', world.secrets.read), 200);
  t.equal(await getFrom('127.0.0.3', world.secrets.read), 429, '127.0.0.3 is over the rate limit');
  t.equal(await getFrom('127.0.0.4', world.secrets.read), 200, '127.0.0.4 is not');
});

t.test('the bench-only switch that drops the rate limiter works only with the test hooks on', async (t) => {
  // Both servers have FLAGWIRE_RATE_LIMIT=4 and FLAGWIRE_TEST_RATE_LIMIT=off; only the second has the hooks on.
  const limited = async (started: Promise<{ server: TestServer; world: World }>) => {
    const { server, world } = await started;
    const from = clientAt(t, server, freshAddress());
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await from('GET', '/api/v1/token', { token: world.secrets.read })).status);
    return statuses;
  };
  t.same(await limited(shared(kSmallNoHooks, false)), [200, 200, 200, 200, 429], 'without the hooks the limit stands');
  t.same(await limited(shared(kRateLimiterOff)), [200, 200, 200, 200, 200], 'the bench twin of (k)');
});

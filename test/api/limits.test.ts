// spec: Limits (request rate, failed authentication), Events (denials, e-mail), Authentication 11.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { startWorldServer } from '../helpers/world-server.js';

const setup = (t: { teardown(fn: () => Promise<unknown>): void }, env: Record<string, string> = {}) =>
  startWorldServer(t, { FLAGWIRE_TEST_HOOKS: '1', ...env });
const advance = (server: TestServer, seconds: number) => call(server.baseUrl, 'POST', `/__test/clock?advance=${seconds}`);
const flush = (server: TestServer) => call(server.baseUrl, 'POST', '/__test/flush');

t.test('the 601st request in a minute gets a plain 429 (default limit)', async (t) => {
  const { server, world } = await setup(t);
  // The limiter counts in 10 s buckets of the clock, and a burst is cut at 600 within any 50 s
  // (src/http/rate-limit.ts). Starting just after a minute boundary makes the outcome independent of
  // when the test runs; the check after the loop makes a machine too slow for it fail loudly.
  const startedAt: number = (await call(server.baseUrl, 'POST', '/__test/clock?align=60')).json.now;
  t.ok(startedAt % 60_000 < 1000, 'the clock is just past a minute boundary');
  let ok = 0;
  for (let i = 0; i < 600; i++) {
    const r = await fetch(`${server.baseUrl}/api/v1/token`, { headers: { authorization: `Bearer ${world.secrets.read}` } });
    await r.arrayBuffer();
    if (r.status === 200) ok++;
  }
  t.equal(ok, 600);
  const r = await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.read });
  const endedAt: number = (await advance(server, 0)).json.now;
  t.ok(endedAt - startedAt < 50_000, `the 601 requests fell within one 50 s span (${endedAt - startedAt} ms)`);
  t.equal(r.status, 429);
  t.equal(r.json, undefined, 'no JSON envelope');
  t.match(r.headers.get('content-type'), /^text\/plain/);
  t.equal(r.headers.get('retry-after'), '60');
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  const evalRoute = await call(server.baseUrl, 'GET', '/health');
  t.equal(evalRoute.status, 200, 'the limit covers the Management API only');
});

t.test('a configured limit applies before auth, and the window moves on', async (t) => {
  const { server, world } = await setup(t, { FLAGWIRE_RATE_LIMIT: '5' });
  for (let i = 0; i < 5; i++) t.equal((await call(server.baseUrl, 'GET', '/api/v1/flags')).status, 401);
  const limited = await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.read });
  t.equal(limited.status, 429, 'even a valid token, before auth runs');
  const big = await call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.write, raw: 'x'.repeat(2_000_000) });
  t.equal(big.status, 429, 'before the body is read');
  await advance(server, 120);
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.read })).status, 200);
});

t.test('21st failed authentication locks the address out, valid token included, for 60 s', async (t) => {
  const { server, world } = await setup(t);
  const bad = ['', 'Bearer nope', `Bearer fw_${'q'.repeat(40)}`];
  for (let i = 0; i < 20; i++) {
    const r = await call(server.baseUrl, 'GET', '/api/v1/token', { headers: bad[i % 3] ? { authorization: bad[i % 3]! } : {} });
    t.equal(r.status, 401);
  }
  const locked = await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.read });
  t.equal(locked.status, 429);
  t.equal(locked.json.error, 'Too many failed authentication attempts');
  t.match(locked.json.detail, /wait a minute before retrying/);
  t.match(locked.json.docs, /#too-many-requests$/);
  // 55 s, not 59: the 21 requests above took real time too, which a loaded machine can stretch.
  await advance(server, 55);
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.read })).status, 429, 'still inside the window');
  await advance(server, 6);
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.read })).status, 200, 'window over');
});

t.test('a small configured failed-auth limit', async (t) => {
  const { server, world } = await setup(t, { FLAGWIRE_AUTH_FAIL_LIMIT: '2' });
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/token')).status, 401);
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/token')).status, 401);
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.read })).status, 429);
});

t.test('valid-but-refused tokens never count toward the lockout', async (t) => {
  const { server, world } = await setup(t);
  world.run('tokenRevoke', { tokenId: world.tokenIds.multiRead!, asUserId: world.ids.owner });
  for (let i = 0; i < 25; i++) {
    t.equal((await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.multiRead })).status, 401);
    t.equal((await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.read, body: { enabled: true } })).status, 403);
    t.equal((await call(server.baseUrl, 'GET', `/api/v1/flags/${world.ids.groupFlag}?env=production`, { token: world.secrets.stagingWrite })).status, 403);
  }
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.read })).status, 200);
});

t.test('activity: last use and recent requests, flushed through the writer', async (t) => {
  const { server, world } = await setup(t);
  await call(server.baseUrl, 'GET', '/api/v1/flags?name=x', { token: world.secrets.write });
  await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.write, body: { enabled: false } });
  await flush(server);
  world.store.resetReadTxn();
  const activity = world.store.getActivity(world.tokenIds.write!)!;
  t.type(activity.lastUsedAt, 'number');
  t.match(activity.recent, [
    { method: 'PATCH', path: `/api/v1/flags/${world.ids.flag}`, status: 200 },
    { method: 'GET', path: '/api/v1/flags', status: 200 },
  ], 'newest first, path without the query');
  t.same(activity.denials, []);
});

t.test('a refused real token is recorded and e-mailed once per 24 hours', async (t) => {
  const { server, world } = await setup(t);
  const deny = () => call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.read, body: { enabled: true } });
  const mail = () => {
    world.store.resetReadTxn();
    return world.store.listMail();
  };
  t.equal((await deny()).status, 403);
  await flush(server);
  world.store.resetReadTxn();
  const activity = world.store.getActivity(world.tokenIds.read!)!;
  t.equal(activity.denials.length, 1);
  t.match(activity.denials[0], { method: 'PATCH', reason: /Insufficient permission/ });
  const first = mail();
  // ci-read was created by the editor; the organisation's owner is told too.
  t.same(first.map((m) => m.to).sort(), ['editor@a.test', 'owner@a.test']);
  t.match(first[0]!.subject, /ci-read/);
  t.notMatch(JSON.stringify(first), world.secrets.read, 'the secret is never mailed');

  t.equal((await deny()).status, 403);
  await flush(server);
  t.equal(mail().length, 2, 'no second e-mail within 24 hours');
  world.store.resetReadTxn();
  t.equal(world.store.getActivity(world.tokenIds.read!)!.denials.length, 2, 'but the denial is recorded');

  await advance(server, 24 * 3600 + 1);
  t.equal((await deny()).status, 403);
  await flush(server);
  t.equal(mail().length, 4, 'after 24 hours the next denial is e-mailed again');
});

t.test('the e-mail limit holds across restarts', async (t) => {
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  t.teardown(() => world.store.close());
  const env = { FLAGWIRE_TEST_HOOKS: '1' };
  let server = await startTestServer({ dataDir, env });
  await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.multiRead });
  world.run('tokenRevoke', { tokenId: world.tokenIds.multiRead!, asUserId: world.ids.owner });
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.multiRead })).status, 401);
  t.equal(await server.stop(), 0, 'activity is flushed at shutdown');
  world.store.resetReadTxn();
  t.equal(world.store.listMail().length, 1, 'the owner created it and is the only owner');
  server = await startTestServer({ dataDir, env });
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.multiRead })).status, 401);
  await server.stop();
  world.store.resetReadTxn();
  t.equal(world.store.listMail().length, 1, 'no new e-mail after the restart');
  t.equal(world.store.getActivity(world.tokenIds.multiRead!)!.denials.length, 2);
});

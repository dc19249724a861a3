// spec: Authentication 11 (token activity), Events (denials recorded and e-mailed at most once per token
// per 24 hours).
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { advanceClock, flushActivity } from '../helpers/test-hooks.js';
import { buildWorld } from '../helpers/world.js';
import { startWorldServer } from '../helpers/world-server.js';
import { principalOf } from '../../src/actor/audit-actor.js';
import { getActivity } from '../../src/model/records/token-records.js';
import { listMail } from '../../src/model/records/mail-records.js';

const setup = (t: { teardown(fn: () => Promise<unknown>): void }, env: Record<string, string> = {}) =>
  startWorldServer(t, { FLAGWIRE_TEST_HOOKS: '1', ...env });
const kDaySeconds = 24 * 3600;
// One server for the tests that read only their own token's activity and mail (a start is about 1 CPU s),
// started by the first of them; the restart test starts its own. Its clock moves forward in each test
// that moves it, and each test's times are relative to it: the expired token's test (30 days on) is last.
let sharedServer: ReturnType<typeof setup> | undefined;
const shared = () => (sharedServer ??= setup(t));

t.test('activity: last use and recent requests, flushed through the writer', async (t) => {
  const { server, world } = await shared();
  await call(server.baseUrl, 'GET', '/api/v1/flags?name=x', { token: world.secrets.write });
  await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.write, body: { enabled: false } });
  await flushActivity(server);
  world.store.resetReadTxn();
  const activity = getActivity(world.store, world.tokenIds.write!)!;
  t.type(activity.lastUsedAt, 'number');
  t.match(
    activity.recent,
    [
      { method: 'PATCH', path: `/api/v1/flags/${world.ids.flag}`, status: 200 },
      { method: 'GET', path: '/api/v1/flags', status: 200 },
    ],
    'newest first, path without the query',
  );
  t.same(activity.denials, []);
});

t.test('a refused real token is recorded and e-mailed once per 24 hours', async (t) => {
  const { server, world } = await shared();
  const deny = () =>
    call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.read, body: { enabled: true } });
  const mail = () => {
    world.store.resetReadTxn();
    return listMail(world.store);
  };
  t.equal((await deny()).status, 403);
  await flushActivity(server);
  world.store.resetReadTxn();
  const activity = getActivity(world.store, world.tokenIds.read!)!;
  t.equal(activity.denials.length, 1);
  t.match(activity.denials[0], { method: 'PATCH', reason: /Insufficient permission/ });
  const first = mail();
  // ci-read was created by the editor; the organisation's owner is told too.
  t.same(first.map((m) => m.to).sort(), ['editor@a.test', 'owner@a.test']);
  t.match(first[0]!.subject, /ci-read/);
  t.notMatch(JSON.stringify(first), world.secrets.read, 'the secret is never mailed');

  t.equal((await deny()).status, 403);
  await flushActivity(server);
  t.equal(mail().length, 2, 'no second e-mail within 24 hours');
  world.store.resetReadTxn();
  t.equal(getActivity(world.store, world.tokenIds.read!)!.denials.length, 2, 'but the denial is recorded');

  await advanceClock(server, 24 * 3600 + 1);
  t.equal((await deny()).status, 403);
  await flushActivity(server);
  t.equal(mail().length, 4, 'after 24 hours the next denial is e-mailed again');
});

t.test('the e-mail limit holds across restarts', async (t) => {
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  t.teardown(() => world.store.close());
  const env = { FLAGWIRE_TEST_HOOKS: '1' };
  let server = await startTestServer({ dataDir, env });
  await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.multiRead });
  world.run('tokenRevoke', { tokenId: world.tokenIds.multiRead!, principal: principalOf(world.ids.owner) });
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.multiRead })).status, 401);
  t.equal(await server.stop(), 0, 'activity is flushed at shutdown');
  world.store.resetReadTxn();
  t.equal(listMail(world.store).length, 1, 'the owner created it and is the only owner');
  server = await startTestServer({ dataDir, env });
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/token', { token: world.secrets.multiRead })).status, 401);
  await server.stop();
  world.store.resetReadTxn();
  t.equal(listMail(world.store).length, 1, 'no new e-mail after the restart');
  t.equal(getActivity(world.store, world.tokenIds.multiRead!)!.denials.length, 2);
});

t.test("an expired token's refusal is a denial on its activity, e-mailed at most once per 24 hours", async (t) => {
  const { server, world } = await shared();
  const expiring = world.run('tokenCreate', {
    projectId: world.ids.single,
    principal: principalOf(world.ids.editor),
    name: 'nightly-export',
    permission: 'read',
    expires: '30d',
  });
  const get = () => call(server.baseUrl, 'GET', '/api/v1/token', { token: expiring.secret });
  const denials = async () => {
    const r = await cli(server.dataDir, ['token', 'activity', expiring.id]);
    t.equal(r.code, 0);
    return r.json.denials as { reason: string; method: string; path: string }[];
  };
  const mail = async () => {
    const r = await cli(server.dataDir, ['mail', 'list']);
    t.equal(r.code, 0);
    return (r.json.messages as { to: string; subject: string }[]).filter((m) => m.subject.includes('nightly-export'));
  };
  t.equal((await get()).status, 200);
  await advanceClock(server, 30 * kDaySeconds + 1);
  const refused = await get();
  t.equal(refused.status, 401);
  t.equal(refused.json.error, 'Token expired');
  await flushActivity(server);
  t.match(await denials(), [{ method: 'GET', path: '/api/v1/token', reason: /^Token expired: / }], 'recorded on the token');
  // The token's creator (the editor) and the organisation's owner.
  t.same((await mail()).map((m) => m.to).sort(), ['editor@a.test', 'owner@a.test'], 'e-mailed');

  t.equal((await get()).status, 401);
  await flushActivity(server);
  t.equal((await denials()).length, 2, 'every refusal is recorded');
  t.equal((await mail()).length, 2, 'no second e-mail within 24 hours');

  await advanceClock(server, kDaySeconds + 1);
  t.equal((await get()).status, 401);
  await flushActivity(server);
  t.equal((await denials()).length, 3);
  t.equal((await mail()).length, 4, 'after 24 hours the next refusal is e-mailed again');
});

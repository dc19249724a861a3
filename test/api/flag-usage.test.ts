// Flag usage (docs/operations.md: Flag usage): evaluations through both evaluation route sets are counted per flag and
// written at most once a minute (here: at the flush hook), without moving the configuration sequence;
// the Management API and the console show lastEvaluatedAt and evaluations; counts survive a restart;
// `flag stale` lists the flags not evaluated for N days.
import t from 'tap';
import { cli, ok } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { advanceClock, flushActivity } from '../helpers/test-hooks.js';
import { startWorldServer } from '../helpers/world-server.js';
import { kOperator } from '../../src/actor/audit-actor.js';

const kDayS = 24 * 3600;
const kDayMs = kDayS * 1000;
const env = { FLAGWIRE_TEST_HOOKS: '1' };
const started = Date.now();
const first = await startWorldServer(t, env);
const { world } = first;
let server: TestServer = first.server;
// The server running at the end (the restart test replaces the first one).
t.teardown(() => server.stop());

const flagPath = (id: string) => `/api/v1/flags/${id}`;
const read = async (id: string, token = world.secrets.read) => (await call(server.baseUrl, 'GET', flagPath(id), { token })).json;
const evaluate = async (path: string) => t.equal((await call(server.baseUrl, 'GET', path)).status, 200, `GET ${path}`);
const ofrep = async (id: string) => {
  const r = await call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${id}`, { body: { context: { targetingKey: 'u-1' } } });
  t.equal(r.status, 200, `OFREP ${id}`);
};

t.test('a flag never evaluated: lastEvaluatedAt null, evaluations 0', async (t) => {
  t.match(await read(world.ids.flag), { id: world.ids.flag, lastEvaluatedAt: null, evaluations: 0 });
  const group = await read(world.ids.groupFlag, world.secrets.multiRead);
  t.match(group, { lastEvaluatedAt: null, evaluations: 0 });
  t.ok('environments' in group, 'the environments form has them too');
});

t.test('both routeSets count, project routes count each flag; written at the flush, configSeq unmoved', async (t) => {
  world.store.resetReadTxn();
  const seq = world.store.configSeq();
  for (let i = 0; i < 3; i++) await evaluate(`/v1/flags/${world.ids.flag}?targetingKey=u-${i}`);
  await ofrep(world.ids.flag);
  await evaluate(`/v1/flags/project/${world.ids.single}`);
  t.equal((await call(server.baseUrl, 'GET', '/v1/flags/flg_missing')).status, 404, 'an unknown id counts nothing');
  // The interval is a minute: unless this machine took that long since the start, nothing is written yet.
  if (Date.now() - started < 50_000) t.match(await read(world.ids.flag), { lastEvaluatedAt: null, evaluations: 0 }, 'no write per request');

  const before = Date.now();
  await flushActivity(server);
  const flag = await read(world.ids.flag);
  t.equal(flag.evaluations, 5, '3 flag route + 1 OFREP + 1 project route');
  t.ok(
    flag.lastEvaluatedAt >= started && flag.lastEvaluatedAt <= before,
    `lastEvaluatedAt ${flag.lastEvaluatedAt} is when it was evaluated`,
  );
  t.match(await read(world.ids.flag2), { evaluations: 1 }, 'the project route evaluated banner too');
  t.match(await read(world.ids.flagB, world.secrets.writeB), { lastEvaluatedAt: null, evaluations: 0 }, 'another project: nothing');
  const list = (await call(server.baseUrl, 'GET', '/api/v1/flags', { token: world.secrets.read })).json;
  t.match(list.flags, [
    { id: world.ids.flag, evaluations: 5, lastEvaluatedAt: flag.lastEvaluatedAt },
    { id: world.ids.flag2, evaluations: 1 },
  ]);
  world.store.resetReadTxn();
  t.equal(world.store.configSeq(), seq, 'usage writes do not move configSeq: workers keep their compiled flags');

  await flushActivity(server);
  t.equal((await read(world.ids.flag)).evaluations, 5, 'a flush with nothing new adds nothing');
});

t.test('an OFREP key given by name counts that flag, and no other of its project', async (t) => {
  const r = await call(server.baseUrl, 'POST', '/ofrep/v1/evaluate/flags/checkout', {
    body: { context: { targetingKey: 'u-1' } },
    headers: { 'X-Flagwire-Project': world.ids.single },
  });
  t.equal(r.status, 200, 'OFREP by name');
  await flushActivity(server);
  t.equal((await read(world.ids.flag)).evaluations, 6, 'checkout: one more');
  t.equal((await read(world.ids.flag2)).evaluations, 1, 'banner, in the same project: unchanged');
});

t.test('lastEvaluatedAt follows the server clock; totals add up across flushes', async (t) => {
  const now = await advanceClock(server, kDayS);
  await evaluate(`/v1/flags/${world.ids.flag}`);
  await flushActivity(server);
  const flag = await read(world.ids.flag);
  t.equal(flag.evaluations, 7);
  t.ok(flag.lastEvaluatedAt >= now, 'the evaluation a day later is the latest');
  await advanceClock(server, -kDayS);
});

t.test('the console shows what the API shows', async (t) => {
  const api = await read(world.ids.flag);
  t.strictSame(await ok(t, server.dataDir, ['flag', 'show', world.ids.flag]), api, 'flag show');
  const list = await ok(t, server.dataDir, ['flag', 'list', world.ids.single]);
  t.strictSame(list.flags[0], api, 'flag list');
});

t.test('counts survive a restart; a graceful stop writes the last ones', async (t) => {
  await evaluate(`/v1/flags/${world.ids.flag}`);
  t.equal(await server.stop(), 0);
  server = await startTestServer({ dataDir: first.server.dataDir, env });
  t.equal((await read(world.ids.flag)).evaluations, 8, 'the evaluation before the stop was written at shutdown');
});

t.test('flag stale: not evaluated for N days, or never evaluated and created before that', async (t) => {
  const project = world.ids.singleB;
  const create = (name: string) =>
    world.run('flagCreate', { projectId: project, body: { name }, principal: kOperator }, Date.now() - 20 * kDayMs).id;
  const legacy = create('legacy');
  const usedLongAgo = create('used-long-ago');
  const usedNow = create('used-now');
  // Evaluated 10 days ago by the server's clock, then now.
  await advanceClock(server, -10 * kDayS);
  await evaluate(`/v1/flags/${usedLongAgo}`);
  await flushActivity(server);
  await advanceClock(server, 10 * kDayS);
  await evaluate(`/v1/flags/${usedNow}`);
  await flushActivity(server);

  const five = await ok(t, server.dataDir, ['flag', 'stale', project, '--days', '5']);
  t.equal(five.days, 5);
  t.ok(Math.abs(five.before - (Date.now() - 5 * kDayMs)) < 60_000, 'the cut-off is 5 days ago');
  t.same(
    five.flags.map((f: { name: string }) => f.name),
    ['legacy', 'used-long-ago'],
    'flagB (created now, never evaluated) is not stale; used-now is not',
  );
  t.match(five.flags[1], { id: usedLongAgo, evaluations: 1, lastEvaluatedAt: Number });
  const fifteen = await ok(t, server.dataDir, ['flag', 'stale', project, '--days', '15']);
  t.same(
    fifteen.flags.map((f: { id: string }) => f.id),
    [legacy],
    'used 10 days ago is not stale for 15 days',
  );
  t.same((await ok(t, server.dataDir, ['flag', 'stale', project])).flags, [], 'default 30 days: created 20 days ago is not stale');
  t.notOk([...five.flags, ...fifteen.flags].some((f: { id: string }) => f.id === usedNow));

  const human = await cli(server.dataDir, ['flag', 'stale', project, '--days', '5'], { json: false });
  t.match(
    human.stdout,
    new RegExp(`^Not evaluated for 5 days:\\nID +NAME +LAST EVALUATED +EVALUATIONS +UPDATED\\n${legacy} +legacy +never +0 +`),
  );
  t.equal(
    (await cli(server.dataDir, ['flag', 'stale', project], { json: false })).stdout,
    'No flag has gone 30 days without an evaluation.\n',
  );
  const bad = await cli(server.dataDir, ['flag', 'stale', project, '--days', '0']);
  t.equal(bad.code, 2, '--days 0 is a usage error');
  t.match(bad.stderr, /--days must be a whole number from 1 to 3650, not "0"/);
});

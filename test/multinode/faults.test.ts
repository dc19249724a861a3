// Faults with PostgreSQL as the system of record. PostgreSQL down (kill -9): evaluation goes on from
// each node's copy, writes are refused with 503 Storage unavailable and Retry-After and never applied
// later, and when it is back every node catches up without a restart. A node killed with kill -9
// catches up when it starts again.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { call } from '../helpers/http.js';
import { cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { startPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { evaluate, seededDatabase, startNode, startReadyNodes, until, waitReady } from './support.js';

const pg = await startPostgres();
t.teardown(() => pg.destroy());

const flagOn = (node: TestServer, flagId: string, secret: string) =>
  call(node.baseUrl, 'GET', `/api/v1/flags/${flagId}`, { token: secret });

t.test('PostgreSQL down and back', async (t) => {
  const { url, seeded } = await seededDatabase(t, pg);
  const [a, b] = (await startReadyNodes(t, url, 2)) as [TestServer, TestServer];
  const on = await call(a.baseUrl, 'PATCH', `/api/v1/flags/${seeded.flagId}`, {
    token: seeded.secret,
    body: { enabled: true, trafficPercentage: 100 },
  });
  t.equal(on.status, 200);
  await until(() => evaluate(b, seeded.flagId), 60_000, 'the change on B');

  pg.kill9();
  for (const node of [a, b]) t.equal(await evaluate(node, seeded.flagId), true, `${node.baseUrl} evaluates from its copy`);
  const refused = await Promise.all(
    [a, b].map((n, i) =>
      call(n.baseUrl, 'PATCH', `/api/v1/flags/${seeded.flagId}`, { token: seeded.secret, body: { trafficPercentage: 77 + i } }),
    ),
  );
  for (const r of refused) {
    t.equal(r.status, 503, 'a write is refused');
    t.equal(r.json.error, 'Storage unavailable');
    t.ok(Number(r.headers.get('retry-after')) > 0, 'with Retry-After');
  }
  await until(async () => (await call(b.baseUrl, 'GET', '/ready')).json.replica.connected === false, 60_000, 'B reporting PostgreSQL gone');
  t.equal((await call(b.baseUrl, 'GET', '/ready')).status, 200, 'a node that caught up stays ready: it evaluates from its copy');
  for (const node of [a, b]) t.equal(await evaluate(node, seeded.flagId), true, 'still evaluating');

  await pg.start();
  // Writes are accepted again once the nodes reconnect; B follows without a restart.
  await until(
    async () =>
      (await call(a.baseUrl, 'PATCH', `/api/v1/flags/${seeded.flagId}`, { token: seeded.secret, body: { enabled: false } })).status === 200,
    60_000,
    'a write accepted again',
  );
  await until(async () => (await evaluate(b, seeded.flagId)) === false, 60_000, 'B following again');
  await sleep(1500);
  const [onA, onB] = await Promise.all([a, b].map((n) => flagOn(n, seeded.flagId, seeded.secret)));
  t.strictSame(onB!.json, onA!.json, 'both nodes agree');
  t.equal(onA!.json.trafficPercentage, 100, 'the refused writes were never applied');
  const shown = await cli(tempDir(t), ['flag', 'show', seeded.flagId, '--database', url]);
  t.equal(shown.json.trafficPercentage, 100, 'nor are they in PostgreSQL');
});

t.test('a node killed with kill -9 catches up when started again', async (t) => {
  const { url, seeded } = await seededDatabase(t, pg);
  const [a, b] = (await startReadyNodes(t, url, 2)) as [TestServer, TestServer];
  b.proc.kill('SIGKILL');
  await b.stop();
  for (const enabled of [true, false, true]) {
    const r = await call(a.baseUrl, 'PATCH', `/api/v1/flags/${seeded.flagId}`, {
      token: seeded.secret,
      body: { enabled, trafficPercentage: 100 },
    });
    t.equal(r.status, 200);
  }
  const again = await startNode(url, b.dataDir);
  t.teardown(() => again.stop());
  await waitReady(again);
  t.equal(await evaluate(again, seeded.flagId), true, 'the restarted node has every change made while it was down');
  const [onA, onAgain] = await Promise.all([a, again].map((n) => flagOn(n, seeded.flagId, seeded.secret)));
  t.strictSame(onAgain!.json, onA!.json);
});

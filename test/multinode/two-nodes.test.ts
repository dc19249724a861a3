// Two nodes on one PostgreSQL: the console works on an empty database before any node ran; each node
// copies everything into its empty data dir; a write answered by one node is read there at once and
// seen by evaluation on the other by PostgreSQL's notice; the Management API shows the same representation.
// The followers' own reads of the latest revision (the heartbeat, every 500 ms) are set to ten minutes
// here, so whatever a node sees within the test it saw by notice: proved by that, not by a lag bound a
// busy machine could miss (the lag itself is the bench's, bench/postgres.bench.ts).
import t from 'tap';
import { call, scrapeMetrics } from '../helpers/http.js';
import { cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { sharedPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { evaluate, seedWithConsole, startReadyNodes, until, waitReady } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

t.test('two nodes follow one PostgreSQL', async (t) => {
  const url = await pg.newDatabase();
  const seeded = await seedWithConsole(t, url);
  const [a, b] = (await startReadyNodes(t, url, 2, { FLAGWIRE_TEST_REPLICA_HEARTBEAT_MS: '600000' })) as [TestServer, TestServer];
  const readyA = await waitReady(a);
  t.equal(readyA.replica.caughtUp, true, '/ready reports the copy caught up');

  // The console's token works on both nodes: each copied everything into its empty data dir.
  for (const node of [a, b]) {
    const r = await call(node.baseUrl, 'GET', `/api/v1/flags/${seeded.flagId}`, { token: seeded.secret });
    t.equal(r.status, 200, `the console's token works on ${node.baseUrl}`);
  }

  // A PATCH answered by A: A reads it at once (read-your-writes), B within the bound.
  const patched = await call(a.baseUrl, 'PATCH', `/api/v1/flags/${seeded.flagId}`, {
    token: seeded.secret,
    body: { enabled: true, trafficPercentage: 100 },
  });
  t.equal(patched.status, 200);
  t.equal(await evaluate(a, seeded.flagId), true, 'read-your-writes on the node that took the write');
  await until(() => evaluate(b, seeded.flagId), 60_000, 'the change on the other node');
  const [onA, onB] = await Promise.all(
    [a, b].map((n) => call(n.baseUrl, 'GET', `/api/v1/flags/${seeded.flagId}`, { token: seeded.secret })),
  );
  t.strictSame(onB!.json, onA!.json, 'both nodes show the same representation');

  // A write on B is seen on A.
  const created = await call(b.baseUrl, 'POST', '/api/v1/flags', {
    token: seeded.secret,
    body: { name: 'banner', enabled: true, trafficPercentage: 100 },
  });
  t.equal(created.status, 201);
  await until(
    async () => (await call(a.baseUrl, 'GET', `/v1/flags/${created.json.id}?targetingKey=k`)).status === 200,
    60_000,
    "B's flag on A",
  );

  // Typed variants (issue 25) travel as every record does (msgpack, opaque to PostgreSQL): created on A,
  // shown alike on B, a patch of them too.
  const typed = await call(a.baseUrl, 'POST', '/api/v1/flags', {
    token: seeded.secret,
    body: {
      name: 'colour',
      variants: { red: '#f00', green: '#0f0' },
      defaultVariant: 'red',
      targeting: { if: [{ var: 'vip' }, 'green', null] },
    },
  });
  t.equal(typed.status, 201);
  const typedPatch = await call(a.baseUrl, 'PATCH', `/api/v1/flags/${typed.json.id}`, {
    token: seeded.secret,
    body: { defaultVariant: 'green' },
  });
  t.equal(typedPatch.status, 200);
  await until(
    async () => (await call(b.baseUrl, 'GET', `/api/v1/flags/${typed.json.id}`, { token: seeded.secret })).json?.defaultVariant === 'green',
    60_000,
    "A's typed variants on B",
  );
  const typedOnB = await call(b.baseUrl, 'GET', `/api/v1/flags/${typed.json.id}`, { token: seeded.secret });
  t.strictSame(typedOnB.json, typedPatch.json.flag, 'B shows the typed variants as A answered them');

  // Lag: PATCHes on A, each seen by evaluation on B, by notice (the heartbeat is ten minutes). The
  // target (100 ms at p99) is measured by the bench.
  const lags: number[] = [];
  for (let i = 0; i < 20; i++) {
    const enabled = i % 2 !== 0;
    const r = await call(a.baseUrl, 'PATCH', `/api/v1/flags/${seeded.flagId}`, { token: seeded.secret, body: { enabled } });
    t.equal(r.status, 200);
    lags.push(await until(async () => (await evaluate(b, seeded.flagId)) === enabled, 60_000, `PATCH ${i} on B`));
  }
  lags.sort((x, y) => x - y);
  t.comment(`seen on the other node after: p50 ${lags[10]!.toFixed(1)} ms, max ${lags[19]!.toFixed(1)} ms`);
  t.pass('each seen on B by notice: its follower reads nothing else within the test');

  const metrics = await scrapeMetrics(b.baseUrl);
  t.ok(metrics.has('flagwire_replica_lag_seconds'), 'the lag is a metric');
  t.ok((metrics.get('flagwire_replica_revision') ?? 0) >= 22, "the copy's revision is a metric");
  t.equal(metrics.get('flagwire_replica_connected'), 1);

  // Revocation by the console (its own data dir) reaches both nodes like any change.
  const revoked = await cli(tempDir(t), ['token', 'revoke', seeded.tokenId, '--as', seeded.ownerId, '--database', url]);
  t.equal(revoked.code, 0);
  for (const node of [a, b]) {
    const ms = await until(
      async () => (await call(node.baseUrl, 'GET', '/api/v1/flags', { token: seeded.secret })).status === 401,
      60_000,
      'revocation',
    );
    t.pass(`the revoked token is refused on ${node.baseUrl} after ${ms.toFixed(0)} ms, by notice`);
  }
});

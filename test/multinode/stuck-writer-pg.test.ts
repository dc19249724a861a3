// A node's writer that stalls inside its PostgreSQL transaction must not stop the cluster's writes.
// Node B's data file's write lock is held by another process (a console command stopped inside its
// transaction), and B is asked to write: its writer takes the cluster's write lock in PostgreSQL, then
// waits for its own LMDB's. PostgreSQL ends that transaction once it has been idle kIdleInWriteMs, so a
// write on node A goes through meanwhile, and B's write, once B's lock comes free, is refused and was
// never applied.
import t from 'tap';
import { kIdleInWriteMs } from '../../src/store/pg/pg-system.js';
import { holdLock } from '../helpers/hold-lock.js';
import { call } from '../helpers/http.js';
import { sharedPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { seedInProcess, startReadyNodes } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

t.test("a node stuck inside its write does not hold the other nodes' writes", async (t) => {
  const url = await pg.newDatabase();
  const { flagId, secret } = await seedInProcess(t, url);
  // Long write timeouts: without the idle limit, A's write would wait for B's lock for all of it.
  const [a, b] = (await startReadyNodes(t, url, 2, { FLAGWIRE_WRITE_TIMEOUT_MS: '60000' })) as [TestServer, TestServer];
  const patchOn = (node: TestServer, body: object) => call(node.baseUrl, 'PATCH', `/api/v1/flags/${flagId}`, { token: secret, body });

  const lock = await holdLock(b.dataDir);
  let released = false;
  t.teardown(() => (released ? undefined : lock.release()));
  const onB = patchOn(b, { trafficPercentage: 11 });
  // B's writer has taken the cluster's write lock and waits for its own file's.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const started = performance.now();
  const onA = await patchOn(a, { trafficPercentage: 22 });
  const ms = performance.now() - started;
  t.equal(onA.status, 200, `A's write goes through (${ms.toFixed(0)} ms) while B is stuck`);
  t.ok(ms < kIdleInWriteMs + 20_000, 'without waiting for B to come free');
  t.ok(lock.stillHeld(), "B's lock was held all along (the premise)");
  await lock.release();
  released = true;

  const refused = await onB;
  t.equal(refused.status, 503, `B's stalled write is refused: ${refused.text}`);
  for (const node of [a, b]) {
    let read = await call(node.baseUrl, 'GET', `/api/v1/flags/${flagId}`, { token: secret });
    for (let i = 0; i < 1200 && read.json.trafficPercentage !== 22; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      read = await call(node.baseUrl, 'GET', `/api/v1/flags/${flagId}`, { token: secret });
    }
    t.equal(read.json.trafficPercentage, 22, "A's write holds on both nodes; B's refused one was never applied");
  }
  t.equal((await patchOn(b, { trafficPercentage: 33 })).status, 200, 'and B writes again once its lock is free');
});

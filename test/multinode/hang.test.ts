// PostgreSQL hung (every process of the cluster stopped with SIGSTOP, as a frozen host looks), not
// crashed: connections stay open and nothing answers. Every node says so (/ready's replica.connected,
// flagwire_replica_connected); a write is refused at its write timeout with a 503 naming PostgreSQL,
// including one whose transaction was under way when the hang began, and none of them is applied once
// PostgreSQL answers again; a node started during the hang serves evaluation from its copy.
//
// Each of these is proved by order, not by a wall-clock bound a loaded machine could miss: PostgreSQL
// stays hung until the test resumes it, so whatever a node says or answers before then it says without
// PostgreSQL. A refusal is also checked to come no sooner than the write timeout. The bounds (a minute)
// only catch a hang; how fast a node notices is the follower's heartbeat (src/store/pg/follower.ts).
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, scrapeMetrics, type Reply } from '../helpers/http.js';
import { cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { sharedPostgres, startPostgres } from '../helpers/postgres.js';
import { tempDataDir, type TestServer } from '../helpers/server.js';
import { kUnlimited } from '../reliability/support.js';
import { evaluate, seedInProcess, startNode, startReadyNodes, until, waitReady } from './support.js';

const kWriteTimeoutMs = 2000;
const kEnv = { ...kUnlimited, FLAGWIRE_WRITE_TIMEOUT_MS: String(kWriteTimeoutMs) };

const pg = await startPostgres();
t.teardown(() => pg.destroy());
// A second cluster that never hangs: a node started on it at the same moment as one started during the
// hang is the baseline, slowed by the same load (a start measured earlier would not be).
const pgOther = await sharedPostgres();
t.teardown(() => pgOther.destroy());

/** Whether `node` says PostgreSQL answers: /ready's replica.connected and the gauge, which must agree to count. */
async function connected(node: TestServer): Promise<boolean | null> {
  const [ready, metrics] = await Promise.all([call(node.baseUrl, 'GET', '/ready'), scrapeMetrics(node.baseUrl)]);
  const fromReady = ready.json.replica.connected as boolean;
  const fromGauge = metrics.get('flagwire_replica_connected') === 1;
  return fromReady === fromGauge ? fromReady : null;
}

/** Starts a node on `dataDir`; resolves with it and the milliseconds from spawn to its first evaluation answered. */
async function startServing(url: string, dataDir: string, flagId: string): Promise<{ node: TestServer; ms: number }> {
  const began = performance.now();
  const node = await startNode(url, dataDir, kEnv);
  for (;;) {
    const r = await call(node.baseUrl, 'GET', `/v1/flags/${flagId}?targetingKey=k1`);
    if (r.status === 200) return { node, ms: performance.now() - began };
    await sleep(20);
  }
}

async function timedPost(node: TestServer, secret: string, name: string): Promise<{ reply: Reply; ms: number }> {
  const began = performance.now();
  const reply = await call(node.baseUrl, 'POST', '/api/v1/flags', { token: secret, body: { name } });
  return { reply, ms: performance.now() - began };
}

t.test('PostgreSQL hung: nodes say so, writes are refused at their timeout and never applied', async (t) => {
  const url = await pg.newDatabase();
  const dbName = url.split('/').pop()!;
  const seeded = await seedInProcess(t, url);
  const [a, b] = (await startReadyNodes(t, url, 2, kEnv)) as [TestServer, TestServer];
  // Two copies that have followed their database, made while it answers: a third node's on this one,
  // and the baseline's on the cluster that never hangs.
  const cDir = tempDataDir();
  const otherUrl = await pgOther.newDatabase();
  const other = await seedInProcess(t, otherUrl);
  const dDir = tempDataDir();
  for (const [dbUrl, dir, flagId] of [
    [url, cDir, seeded.flagId],
    [otherUrl, dDir, other.flagId],
  ] as const) {
    const first = await startServing(dbUrl, dir, flagId);
    await waitReady(first.node);
    await first.node.stop();
  }
  for (const node of [a, b]) t.equal(await connected(node), true, `${node.baseUrl} connected before the hang`);

  // A write whose transaction is under way (claimed, inside its INSERT, before COMMIT) when PostgreSQL
  // hangs: a test-only trigger holds it there, and pg_stat_activity says when it is.
  await pg.admin(
    dbName,
    `CREATE FUNCTION test_hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(3); RETURN NEW; END $$`,
  );
  await pg.admin(dbName, 'CREATE TRIGGER test_hold BEFORE INSERT ON flagwire_changes FOR EACH ROW EXECUTE FUNCTION test_hold()');
  const underWay = timedPost(a, seeded.secret, 'under-way');
  await until(
    async () =>
      (await pg.admin(dbName, `SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE 'INSERT INTO flagwire_changes%'`))
        .rowCount === 1,
    60_000,
    'the write inside its transaction',
  );
  pg.hang();
  let resumed = false;
  t.teardown(() => pg.resume());
  try {
    // Sent during the hang: waits for the revision lock (PostgreSQL does not answer).
    const waiting = timedPost(b, seeded.secret, 'waiting');
    const flips = await Promise.all(
      [a, b].map((node) => until(async () => (await connected(node)) === false, 60_000, `${node.baseUrl} reporting PostgreSQL gone`)),
    );
    for (const ms of flips)
      t.pass(`/ready and the gauge say PostgreSQL does not answer, while it is hung (${Math.round(ms)} ms after the hang)`);
    t.equal((await call(a.baseUrl, 'GET', '/ready')).status, 200, 'a node that caught up stays ready: it evaluates from its copy');

    const restarted = startServing(url, cDir, seeded.flagId);
    const baseline = startServing(otherUrl, dDir, other.flagId);
    for (const [what, write] of [
      ['under way', underWay],
      ['waiting', waiting],
    ] as const) {
      const { reply, ms } = await write;
      t.equal(reply.status, 503, `the write ${what} is refused`);
      t.equal(reply.json.error, 'Storage unavailable');
      t.match(reply.json.detail, /PostgreSQL/, `its text names PostgreSQL: ${reply.json.detail}`);
      t.match(reply.json.detail, /nothing was changed/);
      // Answered while PostgreSQL is still hung, so by the timeout, and not before it.
      t.ok(ms >= kWriteTimeoutMs, `at its write timeout, while PostgreSQL is hung (${Math.round(ms)} ms, timeout ${kWriteTimeoutMs} ms)`);
    }
    const [c, d] = await Promise.all([restarted, baseline]);
    t.teardown(() => c.node.stop());
    t.teardown(() => d.node.stop());
    t.pass(
      `a node started during the hang serves evaluation from its copy while PostgreSQL is hung (${Math.round(c.ms)} ms; one started at the same moment whose PostgreSQL answers: ${Math.round(d.ms)} ms)`,
    );
    const notReady = await call(c.node.baseUrl, 'GET', '/ready');
    t.equal(notReady.status, 503, 'it is not ready: its copy has not caught up');
    t.match(notReady.json.detail, /PostgreSQL/, `/ready says why: ${notReady.json.detail}`);

    pg.resume();
    resumed = true;
    await pg.admin(dbName, 'DROP TRIGGER test_hold ON flagwire_changes');
    for (const node of [a, b, c.node]) await until(async () => (await connected(node)) === true, 60_000, `${node.baseUrl} following again`);
    await waitReady(c.node);
    const after = await timedPost(b, seeded.secret, 'after');
    t.equal(after.reply.status, 201, 'a write is accepted once PostgreSQL answers');
    const latest = Number((await pg.admin<{ revision: string }>(dbName, 'SELECT revision FROM flagwire_meta')).rows[0]!.revision);
    const names = new Set<string>();
    const inPg = await cli(tempDir(t), ['flag', 'list', seeded.projectId, '--database', url]);
    for (const f of inPg.json.flags as { name: string }[]) names.add(`PostgreSQL:${f.name}`);
    for (const [i, node] of [a, b, c.node].entries()) {
      await until(async () => (await call(node.baseUrl, 'GET', '/ready')).json.replica.revision >= latest, 60_000, 'caught up');
      const listed = await call(node.baseUrl, 'GET', '/api/v1/flags', { token: seeded.secret });
      for (const f of listed.json.flags as { name: string }[]) names.add(`node ${i}:${f.name}`);
    }
    for (const where of ['PostgreSQL', 'node 0', 'node 1', 'node 2']) {
      t.ok(names.has(`${where}:after`), `the accepted write is in ${where}`);
      t.notOk(names.has(`${where}:under-way`), `the refused write under way is not in ${where}`);
      t.notOk(names.has(`${where}:waiting`), `the refused waiting write is not in ${where}`);
    }
    t.equal(await evaluate(a, seeded.flagId), false, 'evaluation answers');
  } finally {
    if (!resumed) pg.resume();
  }
});

// Two nodes on one PostgreSQL: revisions are PostgreSQL's, so a revision one node answers with means the
// same state on the other. A write answered by node A at revision R, read on node B with
// Flagwire-Min-Revision: R, is seen there every time (read-your-writes across nodes), on the Management
// API, the Evaluation API and OFREP. When B's copy cannot follow (its follower is held behind a console
// holding B's data file's write lock), B answers a plain read from its older copy, waits with the header,
// answers once its follower applies R, and answers 503 with Retry-After when the wait runs out. The
// change stream's event ids are the same revisions: a reconnect to the other node is replayed.
import t from 'tap';
import { holdLock } from '../helpers/hold-lock.js';
import { call, type Reply } from '../helpers/http.js';
import { sharedPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { readStream, readyId } from '../helpers/sse.js';
import { seedInProcess, startReadyNodes } from './support.js';

const kWaitMs = 1500;
const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

const revisionOf = (r: Reply): number => {
  const value = r.headers.get('flagwire-revision');
  if (value === null || !/^\d+$/.test(value)) throw new Error(`no Flagwire-Revision on ${r.status} ${r.text}`);
  return Number(value);
};
const atLeast = (revision: number) => ({ 'flagwire-min-revision': String(revision) });

t.test('a revision answered by one node is read at, or waited for, on the other', async (t) => {
  const url = await pg.newDatabase();
  const seeded = await seedInProcess(t, url);
  const [a, b] = (await startReadyNodes(t, url, 2, { FLAGWIRE_MIN_REVISION_WAIT_MS: String(kWaitMs) })) as [TestServer, TestServer];
  const { flagId, secret, projectId } = seeded;
  const patchOn = (node: TestServer, body: object) => call(node.baseUrl, 'PATCH', `/api/v1/flags/${flagId}`, { token: secret, body });
  const evaluateOn = (node: TestServer, headers: Record<string, string> = {}) =>
    call(node.baseUrl, 'GET', `/v1/flags/${flagId}?targetingKey=k1`, { headers });
  const readOn = (node: TestServer, headers: Record<string, string> = {}) =>
    call(node.baseUrl, 'GET', `/api/v1/flags/${flagId}`, { token: secret, headers });
  const ofrepOn = (node: TestServer, headers: Record<string, string> = {}) =>
    call(node.baseUrl, 'POST', '/ofrep/v1/evaluate/flags', {
      body: { context: { targetingKey: 'k1' } },
      headers: { 'x-flagwire-project': projectId, ...headers },
    });

  await t.test('write on A at R, read on B at least at R: the write, every time', async (t) => {
    let last = 0;
    for (let i = 0; i < 10; i++) {
      const enabled = i % 2 === 0;
      const patched = await patchOn(a, { enabled, trafficPercentage: 100 });
      t.equal(patched.status, 200);
      const revision = revisionOf(patched);
      t.ok(revision > last, `PATCH ${i} committed at revision ${revision}, past the last one`);
      last = revision;
      // No polling: each read is sent once, right after A's answer.
      const [evaluation, management, bulk] = await Promise.all([
        evaluateOn(b, atLeast(revision)),
        readOn(b, atLeast(revision)),
        ofrepOn(b, atLeast(revision)),
      ]);
      t.same([evaluation.status, evaluation.json.enabled], [200, enabled], `evaluation on B sees PATCH ${i}`);
      t.same([management.status, management.json.enabled], [200, enabled], `the Management API on B sees PATCH ${i}`);
      t.same(
        [bulk.status, bulk.json.flags.find((f: { key: string }) => f.key === flagId)?.value],
        [200, enabled],
        `OFREP on B sees PATCH ${i}`,
      );
      for (const r of [evaluation, management, bulk]) t.ok(revisionOf(r) >= revision, "B's answer names R or later");
    }
    t.ok(revisionOf(await readOn(a)) >= last, "A's answers name the same revisions");
  });

  await t.test("B's follower held back: a plain read is B's older copy, a read at R waits for R", async (t) => {
    const before = (await evaluateOn(b)).json.enabled as boolean;
    const lock = await holdLock(b.dataDir);
    let released = false;
    t.teardown(() => (released ? undefined : lock.release()));
    const patched = await patchOn(a, { enabled: !before });
    t.equal(patched.status, 200);
    const revision = revisionOf(patched);
    const stale = await evaluateOn(b);
    t.equal(stale.json.enabled, before, "without the header: B's copy, which has not the write");
    t.ok(revisionOf(stale) < revision, `and says so: revision ${revisionOf(stale)} < ${revision}`);

    const start = performance.now();
    const waiting = Promise.all([evaluateOn(b, atLeast(revision)), readOn(b, atLeast(revision)), ofrepOn(b, atLeast(revision))]);
    let answered = false;
    void waiting.then(() => (answered = true));
    await new Promise((resolve) => setTimeout(resolve, 400));
    t.notOk(answered, 'the reads at R wait while B cannot have it');
    t.ok(lock.stillHeld(), "B's write lock was held throughout (the premise)");
    await lock.release();
    released = true;
    const [evaluation, management, bulk] = await waiting;
    const ms = performance.now() - start;
    t.same([evaluation.status, evaluation.json.enabled], [200, !before], 'then evaluation answers at R');
    t.same([management.status, management.json.enabled], [200, !before], 'and the Management API');
    t.equal(bulk.status, 200);
    for (const r of [evaluation, management, bulk]) t.ok(revisionOf(r) >= revision);
    t.ok(ms >= 400 && ms < kWaitMs + 1000, `answered once B had it (${ms.toFixed(0)} ms)`);
  });

  await t.test('B never gets R within the wait: 503 Revision not reached with Retry-After; nothing written', async (t) => {
    const lock = await holdLock(b.dataDir);
    let released = false;
    t.teardown(() => (released ? undefined : lock.release()));
    const patched = await patchOn(a, { trafficPercentage: 37 });
    t.equal(patched.status, 200, "A's write goes through while B's lock is held");
    const revision = revisionOf(patched);
    const start = performance.now();
    const [evaluation, management, write] = await Promise.all([
      evaluateOn(b, atLeast(revision)),
      readOn(b, atLeast(revision)),
      call(b.baseUrl, 'PATCH', `/api/v1/flags/${flagId}`, { token: secret, body: { trafficPercentage: 12 }, headers: atLeast(revision) }),
    ]);
    const ms = performance.now() - start;
    t.ok(lock.stillHeld(), "B's write lock was held throughout (the premise)");
    await lock.release();
    released = true;
    for (const r of [evaluation, management, write]) {
      t.equal(r.status, 503);
      t.equal(r.headers.get('retry-after'), '1');
      t.ok(revisionOf(r) < revision, "naming B's revision, short of R");
    }
    t.equal(management.json.error, 'Revision not reached');
    t.equal(evaluation.json.error, 'Revision not reached');
    t.ok(ms >= kWaitMs - 50, `after the wait (${ms.toFixed(0)} ms)`);
    const far = await evaluateOn(a, atLeast(revision + 1_000_000));
    t.equal(far.status, 503, 'a revision the database has not made: 503 on A too');
    const after = await readOn(a, atLeast(revision));
    t.equal(after.json.trafficPercentage, 37, "B's refused PATCH was never applied");
  });

  await t.test("stream ids are the cluster's revisions: a reconnect to the other node is replayed", async (t) => {
    const path = `/v1/stream/project/${projectId}`;
    // A keeps the project's events from here (its stream closes; the project stays known for replay).
    const onA = readyId(await readStream(a.baseUrl, path, 300));
    // B's copy at A's revision or later (the header, once more), then a client on B.
    t.equal((await evaluateOn(b, atLeast(onA))).status, 200);
    const seenOnB = readyId(await readStream(b.baseUrl, path, 300));
    t.ok(seenOnB >= onA, `B's ready id ${seenOnB} is a revision A knows (A's was ${onA})`);
    const patched = await patchOn(a, { trafficPercentage: 64 });
    const revision = revisionOf(patched);
    // The client reconnects to A with the id B gave it: A replays what it missed.
    const replayedByA = await readStream(a.baseUrl, path, 500, String(seenOnB));
    const flagEvent = /id: (\d+)\nevent: flag\ndata: (.*)\n/.exec(replayedByA);
    t.ok(flagEvent, `A replays the change (${replayedByA})`);
    t.same(JSON.parse(flagEvent![2]!), { id: flagId, updatedAt: patched.json.flag.updatedAt });
    t.ok(Number(flagEvent![1]) >= revision, "labelled with the write's revision or later");
    t.notMatch(replayedByA, /event: reset/);
    // And B, once it has the write, replays it to the same id too.
    t.equal((await evaluateOn(b, atLeast(revision))).status, 200);
    const replayedByB = await readStream(b.baseUrl, path, 500, String(seenOnB));
    t.match(replayedByB, new RegExp(`event: flag\\ndata: \\{"id":"${flagId}"`), 'B replays it as well');
    t.ok(readyId(replayedByB) >= revision);
  });
});

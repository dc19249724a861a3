// Black-box: relays of a node on PostgreSQL (issue 45, item 4). A primary node, relay A following it and
// relay B following A (chained), clients on each (OFREP and a flagd sync stream): a change written on
// the primary is seen on both relays, at the primary's revision. kill -9 of relay A: B keeps answering and
// says it is disconnected; A back on its data dir: both catch up. A relay that falls behind its
// upstream's change log (FLAGWIRE_CHANGE_LOG_REVISIONS small there) gets a whole copy: a flag deleted
// meanwhile is gone from it too.
import t from 'tap';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { freePort } from '../helpers/free-port.js';
import { SyncClient } from '../helpers/sync-client.js';
import { cli, seedWithConsole, waitReady } from '../multinode/support.js';
import { createRelayKey, relayReady, startRelay, waitCaughtUp } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

/** A node on `url` with its sync service (relays follow it there). */
function startPrimary(url: string, env: Record<string, string> = {}): Promise<TestServer> {
  return startTestServer({ dataDir: tempDataDir(), syncPort: 'free', env: { FLAGWIRE_DATABASE_URL: url, ...env } });
}

const evaluate = async (node: TestServer, projectId: string, flag: string) => {
  const r = await call(node.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${flag}`, {
    body: { context: { targetingKey: 'k1' } },
    headers: { 'X-Flagwire-Project': projectId },
  });
  return { status: r.status, value: r.json.value as unknown, revision: Number(r.headers.get('flagwire-revision')) };
};

async function kill9(node: TestServer): Promise<void> {
  node.proc.kill('SIGKILL');
  await node.stop();
}

t.test('a primary, relay A, relay B chained to A: a change is seen on both; kill -9 of A and back', async (t) => {
  const url = await pg.newDatabase();
  const seeded = await seedWithConsole(t, url);
  const key = await createRelayKey(tempDir(t), 'edge', ['--database', url], { inProcess: true });
  const primary = await startPrimary(url);
  await waitReady(primary);
  const portA = await freePort();
  const dirA = tempDataDir();
  const startA = () =>
    startTestServer({
      dataDir: dirA,
      port: portA,
      syncPort: 'free',
      env: { FLAGWIRE_UPSTREAM_URL: primary.baseUrl, FLAGWIRE_UPSTREAM_TOKEN: key.secret },
    });
  let relayA = await startA();
  const relayB = await startRelay(relayA.baseUrl, key.secret);
  const clients: SyncClient[] = [];
  t.teardown(async () => {
    for (const c of clients) c.close();
    await Promise.all([relayB.stop(), relayA.stop(), primary.stop()]);
  });
  await waitCaughtUp(relayA, primary, seeded.projectId);
  await waitCaughtUp(relayB, primary, seeded.projectId);

  // Clients on each relay: a flagd sync stream (the seeded write token reads sets too).
  const streams = [relayA, relayB].map((relay) => {
    const client = new SyncClient(relay.syncPort);
    clients.push(client);
    return client.syncFlags({ header: `flagSetId=${seeded.projectId},token=${seeded.secret}` });
  });
  for (const stream of streams) {
    await pollUntil(
      'the first set',
      async () => stream.sets.length,
      (n) => n > 0,
    );
  }
  const patched = await call(primary.baseUrl, 'PATCH', `/api/v1/flags/${seeded.flagId}`, {
    token: seeded.secret,
    body: { enabled: true, trafficPercentage: 100 },
  });
  t.equal(patched.status, 200, patched.text);
  const written = Number(patched.headers.get('flagwire-revision'));
  for (const relay of [relayA, relayB]) {
    const seen = await pollUntil(
      `the change on ${relay.baseUrl}`,
      () => evaluate(relay, seeded.projectId, 'checkout'),
      (r) => r.value === true,
    );
    t.ok(seen.revision >= written, "at the primary's revision");
  }
  for (const stream of streams) {
    const pushed = await pollUntil(
      'the set pushed',
      async () => stream.sets.at(-1)!,
      (set) => JSON.parse(set).flags.checkout.defaultVariant === 'on',
    );
    t.ok(JSON.parse(pushed).metadata.flagwireRevision >= written);
  }

  // kill -9 of relay A: B keeps answering from its copy and says it has lost its upstream.
  await kill9(relayA);
  const lost = await pollUntil(
    'B notices',
    () => relayReady(relayB),
    (r) => r.json.relay.connected === false,
  );
  t.equal(lost.status, 200);
  t.equal((await evaluate(relayB, seeded.projectId, 'checkout')).value, true, 'B answers from its copy');
  const off = await call(primary.baseUrl, 'PATCH', `/api/v1/flags/${seeded.flagId}`, { token: seeded.secret, body: { enabled: false } });
  t.equal(off.status, 200);
  relayA = await startA();
  await waitCaughtUp(relayA, primary, seeded.projectId);
  await waitCaughtUp(relayB, primary, seeded.projectId);
  for (const relay of [relayA, relayB]) t.equal((await evaluate(relay, seeded.projectId, 'checkout')).value, false, 'caught up');
});

t.test("a relay that falls behind its upstream's change log gets a whole copy", async (t) => {
  const url = await pg.newDatabase();
  const seeded = await seedWithConsole(t, url);
  const key = await createRelayKey(tempDir(t), 'edge', ['--database', url], { inProcess: true });
  const doomed = await cli(tempDir(t), ['flag', 'create', seeded.projectId, '--name', 'doomed', '--database', url], { inProcess: true });
  t.equal(doomed.code, 0, doomed.stderr);
  const primary = await startPrimary(url, { FLAGWIRE_CHANGE_LOG_REVISIONS: '3' });
  await waitReady(primary);
  const relayDir = tempDataDir();
  let relay = await startRelay(primary.baseUrl, key.secret, { dataDir: relayDir });
  t.teardown(async () => {
    await relay.stop();
    await primary.stop();
  });
  await waitCaughtUp(relay, primary, seeded.projectId);
  t.equal((await evaluate(relay, seeded.projectId, 'doomed')).status, 200);
  const held = (await relayReady(relay)).json.relay.revision as number;

  await kill9(relay);
  // More revisions than the primary's change log keeps, a deletion among them.
  for (const traffic of [10, 20, 30, 40, 50]) {
    const r = await call(primary.baseUrl, 'PATCH', `/api/v1/flags/${seeded.flagId}`, {
      token: seeded.secret,
      body: { enabled: true, trafficPercentage: traffic },
    });
    t.equal(r.status, 200);
  }
  const deleted = await cli(tempDir(t), ['flag', 'delete', doomed.json.id, '--as', seeded.ownerId, '--database', url], {
    inProcess: true,
  });
  t.equal(deleted.code, 0, deleted.stderr);
  // The primary applies the console's deletion when PostgreSQL's notice reaches it: soon, not at once.
  const deletion = await pollUntil(
    'the deletion on the primary',
    () => evaluate(primary, seeded.projectId, 'doomed'),
    (r) => r.status === 404,
  );
  t.ok(deletion.revision - held > 3, `the relay is ${deletion.revision - held} revisions behind, past the log's 3`);

  relay = await startRelay(primary.baseUrl, key.secret, { dataDir: relayDir });
  await waitCaughtUp(relay, primary, seeded.projectId);
  // The primary commits on its own meanwhile (the activity of the token that made the changes, a second
  // later; its flag usage, once a minute), each a revision of PostgreSQL: the relay's answers are compared
  // with the primary's by what they say, at a revision at or past the deletion's.
  const said = (r: Awaited<ReturnType<typeof evaluate>>) => ({ status: r.status, value: r.value });
  const gone = await evaluate(relay, seeded.projectId, 'doomed');
  t.equal(gone.status, 404, 'the flag deleted while the relay was away is gone from it too');
  t.ok(gone.revision >= deletion.revision, `at revision ${gone.revision}, the deletion's ${deletion.revision} or past`);
  t.same(said(gone), said(await evaluate(primary, seeded.projectId, 'doomed')), 'as on the primary');
  const checkout = await evaluate(relay, seeded.projectId, 'checkout');
  t.ok(checkout.revision >= deletion.revision);
  t.same(said(checkout), said(await evaluate(primary, seeded.projectId, 'checkout')), 'checkout as on the primary');
});

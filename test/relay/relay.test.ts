// Black-box: a relay of an embedded node (issue 45), both real servers. The relay answers OFREP (single,
// bulk, ETags), the Evaluation API and the change stream as its upstream does, at the same revision; a
// change on the upstream reaches the relay's change stream and a stock flagd provider dialled to the
// relay's sync service; Flagwire-Min-Revision works through it; the Management API and the console are
// refused naming the upstream, and nothing changes. kill -9 of the upstream: the relay goes on answering
// and /ready says it is disconnected and for how long; the upstream back: the relay catches up. kill -9 of
// the relay, restarted while the upstream is down: it answers at once from what it holds. A relay key
// revoked on the upstream: the relay says so, logs it as an error, and keeps serving.
import t from 'tap';
import { FlagdProvider } from '@openfeature/flagd-provider';
import { OpenFeature } from '@openfeature/server-sdk';
import { kOperator } from '../../src/actor/audit-actor.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { freePort } from '../helpers/free-port.js';
import { buildWorld } from '../helpers/world.js';
import { createRelayKey, readStreamUntil, relayReady, revokeRelayKey, servedRevision, startRelay, waitCaughtUp } from './support.js';
import { kFlagdDeadlineMs } from '../helpers/flagd-provider.js';

const upDir = tempDataDir();
const world = buildWorld(upDir);
const { ids, secrets } = world;
const upPort = await freePort();
const upSync = await freePort();
const startUpstream = () => startTestServer({ dataDir: upDir, port: upPort, syncPort: upSync });
let upstream = await startUpstream();
const relayDir = tempDataDir();
let relay: TestServer | null = null;
t.teardown(async () => {
  await OpenFeature.close();
  await relay?.stop();
  await upstream.stop();
  await world.store.close();
});

const ofrep = (node: TestServer, path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(node.baseUrl, 'POST', path, { body, headers: { 'X-Flagwire-Project': ids.single, ...headers } });

/** kill -9, then its exit. */
async function kill9(node: TestServer): Promise<void> {
  node.proc.kill('SIGKILL');
  await node.stop();
}

// A flag flagd's language can say exactly (on for everyone), for the provider.
const made = await call(upstream.baseUrl, 'POST', '/api/v1/flags', {
  token: secrets.write,
  body: { name: 'relay-on', enabled: true, trafficPercentage: 100 },
});
if (made.status !== 201) throw new Error(`create: ${made.status} ${made.text}`);
const relayOn: string = made.json.id;

const key = await createRelayKey(upDir, 'edge-1');
relay = await startRelay(upstream.baseUrl, key.secret, { dataDir: relayDir });
const relaySync = relay.syncPort;

t.test('the relay answers as its upstream, at the same revision', async (t) => {
  await waitCaughtUp(relay!, upstream, ids.single);
  const ready = await relayReady(relay!);
  t.equal(ready.status, 200);
  t.match(ready.json.relay, { upstream: upstream.baseUrl, holdsCopy: true, connected: true });
  t.type(ready.json.relay.lastHeardMsAgo, 'number');
  for (const node of [upstream, relay!]) t.notOk('problem' in ((await relayReady(node)).json.relay ?? {}), 'no problem reported');

  const pairs: [string, (node: TestServer) => ReturnType<typeof call>][] = [
    ['Evaluation API, one flag', (n) => call(n.baseUrl, 'GET', `/v1/flags/${ids.flag}?targetingKey=alice`)],
    ['Evaluation API, a project', (n) => call(n.baseUrl, 'GET', `/v1/flags/project/${ids.single}?targetingKey=bob`)],
    ['OFREP single', (n) => ofrep(n, '/ofrep/v1/evaluate/flags/checkout', { context: { targetingKey: 'alice' } })],
    ['OFREP bulk', (n) => ofrep(n, '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'carol' } })],
    ['OFREP, a flag that does not exist', (n) => ofrep(n, '/ofrep/v1/evaluate/flags/nope', { context: { targetingKey: 'carol' } })],
  ];
  for (const [what, ask] of pairs) {
    const [up, down] = [await ask(upstream), await ask(relay!)];
    t.equal(down.status, up.status, `${what}: status`);
    t.same(down.json, up.json, `${what}: body`);
    t.equal(down.headers.get('flagwire-revision'), up.headers.get('flagwire-revision'), `${what}: Flagwire-Revision`);
  }
  const bulk = await ofrep(upstream, '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'carol' } });
  const etag = bulk.headers.get('etag')!;
  t.ok(etag, 'the upstream names an ETag');
  const again = await ofrep(relay!, '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'carol' } }, { 'If-None-Match': etag });
  t.equal(again.status, 304, "the upstream's ETag is the relay's");
});

t.test("a change on the upstream reaches the relay's change stream and a flagd provider dialled to the relay", async (t) => {
  const provider = new FlagdProvider({
    resolverType: 'in-process',
    deadlineMs: kFlagdDeadlineMs,
    host: '127.0.0.1',
    port: relaySync,
    selector: `flagSetId=${ids.single},token=${secrets.read}`,
  });
  await OpenFeature.setProviderAndWait('relay', provider);
  const client = OpenFeature.getClient('relay');
  t.equal(await client.getBooleanValue('relay-on', false, { targetingKey: 'u1' }), true, 'the set, from the relay');

  let patched: Awaited<ReturnType<typeof call>> | null = null;
  const text = await readStreamUntil(
    relay!.baseUrl,
    `/v1/stream/project/${ids.single}`,
    (s) => s.includes(`"id":"${relayOn}"`),
    () =>
      void call(upstream.baseUrl, 'PATCH', `/api/v1/flags/${relayOn}`, { token: secrets.write, body: { enabled: false } }).then(
        (r) => (patched = r),
      ),
  );
  await pollUntil(
    'the PATCH answered',
    async () => patched,
    (r) => r !== null,
  );
  t.equal(patched!.status, 200);
  const written = patched!.headers.get('flagwire-revision');
  t.match(
    text,
    new RegExp(`id: ${written}\\nevent: flag\\ndata: \\{"id":"${relayOn}"`),
    "the event, with the upstream's revision as its id",
  );
  await pollUntil(
    'the provider on the relay sees the change',
    () => client.getBooleanValue('relay-on', true, { targetingKey: 'u1' }),
    (v) => v === false,
  );
  await OpenFeature.clearProviders();
});

t.test('Flagwire-Min-Revision through the relay: a write on the upstream read at its revision on the relay', async (t) => {
  // Each read asked the moment the write is answered, with no polling: it waits on the relay's copy.
  for (const enabled of [true, false, true, false]) {
    const w = await call(upstream.baseUrl, 'PATCH', `/api/v1/flags/${relayOn}`, { token: secrets.write, body: { enabled } });
    t.equal(w.status, 200);
    const revision = Number(w.headers.get('flagwire-revision'));
    const atLeast = { 'Flagwire-Min-Revision': String(revision) };
    const r = await ofrep(relay!, '/ofrep/v1/evaluate/flags/relay-on', { context: { targetingKey: 'x' } }, atLeast);
    t.equal(r.status, 200);
    t.equal(r.json.value, enabled, 'OFREP reads the write');
    t.ok(Number(r.headers.get('flagwire-revision')) >= revision, 'answered at the revision or later');
    const read = await call(relay!.baseUrl, 'GET', `/v1/flags/${relayOn}?targetingKey=x`, { headers: atLeast });
    t.equal(read.status, 200);
    t.equal(read.json.enabled, enabled, 'so does the Evaluation API');
  }
});

t.test('the Management API and the console are refused naming the upstream; nothing changes', async (t) => {
  const before = await call(upstream.baseUrl, 'GET', '/api/v1/flags', { token: secrets.read });
  const revision = await servedRevision(relay!, ids.single);
  const detail = `This node is a read-only relay of ${upstream.baseUrl}; send changes there`;
  const refused = [
    await call(relay!.baseUrl, 'POST', '/api/v1/flags', { token: secrets.write, body: { name: 'from-relay' } }),
    await call(relay!.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag}`, { token: secrets.write, body: { enabled: false } }),
    await call(relay!.baseUrl, 'GET', '/api/v1/flags', { token: secrets.read }),
    await call(relay!.baseUrl, 'GET', '/console'),
    await call(relay!.baseUrl, 'POST', '/console/api/sign-in', { body: { email: 'owner@a.test', password: 'x' } }),
  ];
  for (const r of refused) {
    t.equal(r.status, 409);
    t.same(r.json, { error: 'Read-only relay', detail, docs: `${relay!.baseUrl}/docs#read-only-relay` });
  }
  t.equal(refused[0]!.headers.get('flagwire-revision'), String(revision), "the Management API's answer names the copy's revision");
  const after = await call(upstream.baseUrl, 'GET', '/api/v1/flags', { token: secrets.read });
  t.same(after.json, before.json, 'the upstream is unchanged');
  t.equal(await servedRevision(relay!, ids.single), revision, 'so is the relay');
  t.equal(await servedRevision(upstream, ids.single), revision);
  // What a relay does serve beside evaluation: snapshots and flag sets, from its copy, with relayed tokens.
  const snapshot = await call(relay!.baseUrl, 'GET', `/v1/snapshots/${ids.single}`, { token: secrets.read });
  const upSnapshot = await call(upstream.baseUrl, 'GET', `/v1/snapshots/${ids.single}`, { token: secrets.read });
  t.equal(snapshot.status, upSnapshot.status);
  t.same(snapshot.json, upSnapshot.json, 'the snapshot, as the upstream serves it');
  const set = await call(relay!.baseUrl, 'GET', `/v1/flag-sets/${ids.single}`, { token: secrets.read });
  const upSet = await call(upstream.baseUrl, 'GET', `/v1/flag-sets/${ids.single}`, { token: secrets.read });
  t.equal(set.status, 200);
  t.same(set.json, upSet.json, 'the flag set, as the upstream serves it');
  // Events are counted where the subjects' totals are whole (an embedded node, PostgreSQL), not on a relay.
  const events = await call(relay!.baseUrl, 'POST', '/ofrep/v1/events', {
    token: `fwc_${'a'.repeat(40)}`,
    body: { events: [{ kind: 'track', key: 'views', targetingKey: 'u1', timestamp: Date.now() }] },
  });
  t.equal(events.status, 404, events.text);
  t.match(events.json.detail, /Events are not counted on a relay/);
});

t.test('kill -9 of the upstream: the relay keeps answering and says how long it has heard nothing; back, it catches up', async (t) => {
  const answer = await ofrep(relay!, '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'dave' } });
  await kill9(upstream);
  const ready = await pollUntil(
    'the relay notices',
    () => relayReady(relay!),
    (r) => r.json.relay.connected === false,
  );
  t.equal(ready.status, 200, 'still ready: it serves what it holds');
  t.match(ready.json.relay, { holdsCopy: true, connected: false, problem: String });
  const aged = await pollUntil(
    'the age grows',
    () => relayReady(relay!),
    (r) => r.json.relay.lastHeardMsAgo > ready.json.relay.lastHeardMsAgo,
  );
  t.type(aged.json.relay.lastHeardMsAgo, 'number');
  const during = await ofrep(relay!, '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'dave' } });
  t.equal(during.status, 200);
  t.same(during.json, answer.json, 'the same answers');

  // Changes made while the upstream is down (the command line on its data dir), then it comes back.
  world.run('flagPatch', { principal: kOperator, flagId: ids.flag2, env: null, patch: { enabled: true, trafficPercentage: 100 } });
  world.run('flagPatch', { principal: kOperator, flagId: ids.flag, env: null, patch: { trafficPercentage: 70 } });
  upstream = await startUpstream();
  const target = await waitCaughtUp(relay!, upstream, ids.single);
  const after = await relayReady(relay!);
  t.match(after.json.relay, { connected: true, revision: target });
  const banner = await ofrep(relay!, '/ofrep/v1/evaluate/flags/banner', { context: { targetingKey: 'dave' } });
  t.equal(banner.json.value, true, 'a change made while it was away');
});

t.test('kill -9 of the relay, restarted while its upstream is down: it answers from what it holds', async (t) => {
  const before = await ofrep(relay!, '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'erin' } });
  const revision = Number(before.headers.get('flagwire-revision'));
  await kill9(upstream);
  await kill9(relay!);
  relay = await startRelay(upstream.baseUrl, key.secret, { dataDir: relayDir, syncPort: relaySync });
  // Asked as soon as it listens: ready, and answering, with no upstream.
  const ready = await relayReady(relay);
  t.equal(ready.status, 200, JSON.stringify(ready.json));
  t.match(ready.json.relay, { holdsCopy: true, connected: false, revision, lastHeardMsAgo: null });
  const after = await ofrep(relay, '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'erin' } });
  t.equal(after.status, 200);
  t.same(after.json, before.json);
  t.equal(Number(after.headers.get('flagwire-revision')), revision);
  upstream = await startUpstream();
  await waitCaughtUp(relay, upstream, ids.single);
});

t.test('a relay key revoked on the upstream: the relay says so, logs it once as an error, and keeps serving', async (t) => {
  const before = await ofrep(relay!, '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'fred' } });
  await revokeRelayKey(t, upDir, key.id);
  const ready = await pollUntil(
    'the relay reports the refusal',
    () => relayReady(relay!),
    (r) => typeof r.json.relay.problem === 'string' && /refused this relay's key/.test(r.json.relay.problem),
  );
  t.equal(ready.status, 200);
  t.match(ready.json.relay, { connected: false, problem: /wrong or was revoked there.*restart with --upstream-token/ });
  await pollUntil(
    'the error logged',
    async () => relay!.logs(),
    (logs) => /"level":50.*refused this relay's key/.test(logs),
  );
  const refusals = relay!.logs().match(/"level":50[^\n]*refused this relay's key/g) ?? [];
  t.equal(refusals.length, 1, 'once, not per retry or per request');
  const after = await ofrep(relay!, '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'fred' } });
  t.equal(after.status, 200);
  t.same(after.json, before.json);
});

// Flag usage through a relay (docs/deployment.md: relays; docs/operations.md: Flag usage): evaluations a
// relay answers are counted there and forwarded upstream in batches, so the upstream counts each exactly
// once: N evaluations through the relay are N on the upstream, and flushing again (the relay's, the
// upstream's) adds nothing; a batch whose answer the relay never heard (the upstream away) is sent again
// and counted once. A provider pointed at the relay has its reports forwarded the same way.
import { OpenFeature } from '@openfeature/server-sdk';
import t, { type Test } from 'tap';
import { freePort } from '../helpers/free-port.js';
import { call } from '../helpers/http.js';
import { providerClient } from '../helpers/provider-client.js';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { flushActivity } from '../helpers/test-hooks.js';
import { buildWorld } from '../helpers/world.js';
import { createRelayKey, startRelay, waitCaughtUp } from './support.js';

t.setTimeout(300_000);
const env = { FLAGWIRE_TEST_HOOKS: '1' };
const upDir = tempDataDir();
const world = buildWorld(upDir);
const { ids, secrets } = world;
const upPort = await freePort();
const upSync = await freePort();
const startUpstream = () => startTestServer({ dataDir: upDir, port: upPort, syncPort: upSync, env });
let upstream: TestServer = await startUpstream();
const key = await createRelayKey(upDir, 'edge-usage');
const relay = await startRelay(upstream.baseUrl, key.secret, { env });
t.teardown(async () => {
  await OpenFeature.close();
  await relay.stop();
  await upstream.stop();
  await world.store.close();
});
await waitCaughtUp(relay, upstream, ids.single);

const evaluations = async (flagId: string): Promise<number> =>
  (await call(upstream.baseUrl, 'GET', `/api/v1/flags/${flagId}`, { token: secrets.read })).json.evaluations as number;

async function evaluateOnRelay(t: Test, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await call(relay.baseUrl, 'GET', `/v1/flags/${ids.flag}?targetingKey=user-${i}`);
    if (r.status !== 200) t.fail(`evaluation ${i}: ${r.status} ${r.text}`);
  }
}

t.test('N evaluations answered by the relay count N upstream, once', async (t) => {
  // What the upstream counted itself (waitCaughtUp's bulk evaluation) written first.
  await flushActivity(upstream);
  const before = await evaluations(ids.flag);
  await evaluateOnRelay(t, 300);
  await flushActivity(relay);
  t.equal(await evaluations(ids.flag), before + 300, 'forwarded and counted');
  await flushActivity(relay);
  await flushActivity(upstream);
  t.equal(await evaluations(ids.flag), before + 300, 'flushed again: nothing more');
});

t.test('the upstream away: the batch waits on the relay and is counted once when it is back', async (t) => {
  const before = await evaluations(ids.flag);
  await evaluateOnRelay(t, 120);
  await upstream.stop();
  await flushActivity(relay);
  upstream = await startUpstream();
  await waitCaughtUp(relay, upstream, ids.single);
  t.equal(await evaluations(ids.flag), before, 'not yet counted');
  await evaluateOnRelay(t, 30);
  await flushActivity(relay);
  t.equal(await evaluations(ids.flag), before + 150, 'both batches, each once');
});

t.test("a provider's reports to the relay are forwarded and counted once", async (t) => {
  const before = await evaluations(ids.flag2);
  const { provider, client } = await providerClient('relayed', {
    url: relay.baseUrl,
    token: secrets.read,
    project: ids.single,
    usage: { flushIntervalMs: 3_600_000 },
  });
  for (let i = 0; i < 500; i++) await client.getBooleanValue('banner', false, { targetingKey: `user-${i}` });
  t.ok(await provider.flushUsage(), 'the relay answered the batch');
  await flushActivity(relay);
  t.equal(await evaluations(ids.flag2), before + 500);
});

// Black-box: the stock unleash-client (streaming and polling) and unleash-proxy-client (the front-end
// API, polling) through an outage of the Flagwire they read (issue 60's proof: "an outage"): each is
// synchronised, the node stops, the SDK goes on answering what it last had (as Unleash's SDKs do when
// their server is away), a flag changes while the node is down, and once a node is back on the same port
// and data the SDK gets the change by itself.
import t, { type Test } from 'tap';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { InMemoryStorageProvider, UnleashClient } from 'unleash-proxy-client';
import { kOperator } from '../../src/actor/audit-actor.js';
import { jsonBody } from '../../src/model/request-body.js';
import { freePort } from '../helpers/free-port.js';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDataDir();
const world = buildWorld(dataDir);
const { ids, secrets } = world;
// The node comes back on the same port, which the SDK keeps dialling while it is down (see freePort).
const port = await freePort();
let server: TestServer = await startTestServer({ dataDir, port });
t.teardown(async () => {
  await server.stop();
  await world.store.close();
});

/** Resolves once `done` holds, checked at each change the SDK hears and every 50 ms; a minute only catches a hang. */
function until(unleash: Unleash, done: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!done()) return;
      clearTimeout(timer);
      clearInterval(poll);
      unleash.off('changed', check);
      resolve();
    };
    const timer = setTimeout(() => {
      clearInterval(poll);
      reject(new Error('not within a minute'));
    }, 60_000);
    const poll = setInterval(check, 50);
    unleash.on('changed', check);
    check();
  });
}

async function throughOutage(t: Test, mode: 'streaming' | 'polling', flagName: string): Promise<void> {
  const flagId = world.run('flagCreate', {
    projectId: ids.single,
    body: { name: flagName, enabled: true, trafficPercentage: 100 },
    principal: kOperator,
  }).id;
  const unleash = new Unleash({
    url: `http://127.0.0.1:${port}/api`,
    appName: `outage-${mode}`,
    customHeaders: { Authorization: secrets.read },
    disableMetrics: true,
    refreshInterval: 200,
    ...(mode === 'streaming' ? { experimentalMode: { type: 'streaming' as const } } : {}),
    storageProvider: new InMemStorageProvider(),
  });
  const errors: unknown[] = [];
  unleash.on('error', (err: unknown) => errors.push(err));
  unleash.on('warn', () => {});
  t.teardown(() => unleash.destroy());
  await until(unleash, () => unleash.isEnabled(flagName));
  t.equal(unleash.isEnabled(flagName), true, 'synchronised: on');

  await server.stop();
  await until(unleash, () => errors.length > 0);
  t.ok(errors.length > 0, 'the SDK saw the node go away');
  t.equal(unleash.isEnabled(flagName), true, 'while the node is down, the SDK answers what it last had');

  world.run('flagPatch', { principal: kOperator, flagId, env: null, patch: { enabled: false } });
  server = await startTestServer({ dataDir, port });
  await until(unleash, () => !unleash.isEnabled(flagName));
  t.equal(unleash.isEnabled(flagName), false, 'the node back: the change made while it was down reaches the SDK');
}

t.test('streaming: an outage, then the change made while it lasted', (t) => throughOutage(t, 'streaming', 'outage-streamed'));
t.test('polling: an outage, then the change made while it lasted', (t) => throughOutage(t, 'polling', 'outage-polled'));

t.test('the front-end SDK (unleash-proxy-client): an outage, then the change made while it lasted', async (t) => {
  const flagName = 'outage-front';
  const flagId = world.run('flagCreate', {
    projectId: ids.single,
    body: { name: flagName, enabled: true, trafficPercentage: 100 },
    principal: kOperator,
  }).id;
  const key = world.run('clientKeyCreate', {
    principal: kOperator,
    projectId: ids.single,
    received: jsonBody(JSON.stringify({ name: 'outage web', uses: ['frontend'] })),
  }).secret;
  let failures = 0;
  const counting = async (url: string, init: RequestInit) => {
    try {
      return await fetch(url, init);
    } catch (err) {
      failures++;
      throw err;
    }
  };
  const client = new UnleashClient({
    url: `http://127.0.0.1:${port}/api/frontend`,
    clientKey: key,
    appName: 'outage-front',
    refreshInterval: 1,
    metricsInterval: 0,
    fetch: counting,
    storageProvider: new InMemoryStorageProvider(),
  });
  t.teardown(() => client.stop());
  await client.start();
  t.equal(client.isEnabled(flagName), true, 'synchronised: on');

  await server.stop();
  await waitFor(() => failures > 0);
  t.ok(failures > 0, 'the SDK saw the node go away');
  t.equal(client.isEnabled(flagName), true, 'while the node is down, the SDK answers what it last had');

  world.run('flagPatch', { principal: kOperator, flagId, env: null, patch: { enabled: false } });
  server = await startTestServer({ dataDir, port });
  await waitFor(() => !client.isEnabled(flagName));
  t.equal(client.isEnabled(flagName), false, 'the node back: the change made while it was down reaches the SDK');
});

/** Resolves once `done` holds, checked every 50 ms; a minute only catches a hang. */
async function waitFor(done: () => boolean): Promise<void> {
  const until = Date.now() + 60_000;
  while (!done()) {
    if (Date.now() > until) throw new Error('not within a minute');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

// Black-box: a relay of a relay (issue 55, item 5), three real servers: primary P, relay A of P, relay B
// of A. B's /ready reports the primary's reachability as A reports it (carried down the follow stream),
// not only its own stream to A: with P killed, A stays up and B stays connected to A, but B says the
// primary cannot be followed. A write refused on B names P, where changes go, not A.
import t from 'tap';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';
import { createRelayKey, relayReady, startRelay, waitCaughtUp } from './support.js';

const primaryDir = tempDataDir();
const world = buildWorld(primaryDir);
const { ids, secrets } = world;
await world.store.close();
const primary = await startTestServer({ dataDir: primaryDir, syncPort: 'free' });
// A key made on the primary is relayed: A takes it from B as P takes it from A.
const key = await createRelayKey(primaryDir, 'chain');
const relayA = await startRelay(primary.baseUrl, key.secret);
const relayB = await startRelay(relayA.baseUrl, key.secret);
let primaryStopped = false;
t.teardown(async () => {
  await relayB.stop();
  await relayA.stop();
  if (!primaryStopped) await primary.stop();
});

t.test('a write refused on the relay below names the primary, not the relay above', async (t) => {
  await pollUntil(
    'relay B ready',
    () => relayReady(relayB),
    (r) => r.status === 200,
  );
  // B is ready once it applied A's copy, which carried what A reports of the primary.
  const refused = await call(relayB.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag}`, { token: secrets.write, body: { enabled: false } });
  t.equal(refused.status, 409);
  t.equal(refused.json.detail, `This node is a read-only relay of ${primary.baseUrl}; send changes there`);
});

t.test("the relay below reports the primary's reachability as A sees it", async (t) => {
  await waitCaughtUp(relayA, primary, ids.single);
  const ready = await pollUntil(
    'relay B reports the primary as A follows it',
    () => relayReady(relayB),
    (r) => r.status === 200 && r.json.relay.primary?.connected === true,
  );
  t.match(ready.json.relay, { upstream: relayA.baseUrl, connected: true, primary: { url: primary.baseUrl, connected: true } });
  t.type(ready.json.relay.primary.lastHeardMsAgo, 'number');
  const aReady = await relayReady(relayA);
  t.notOk('primary' in aReady.json.relay, 'A follows the primary itself: its /ready names it as its upstream, with no primary field');
});

t.test('the primary down: the relay below stays connected to A and says the primary cannot be followed', async (t) => {
  primary.proc.kill('SIGKILL');
  await primary.stop();
  primaryStopped = true;
  const ready = await pollUntil(
    'relay B hears from A that the primary is gone',
    () => relayReady(relayB),
    (r) => r.json.relay?.primary?.connected === false,
  );
  t.equal(ready.status, 200, 'still ready: it serves what it holds');
  t.equal(ready.json.relay.connected, true, 'its own stream to A is open');
  t.equal(ready.json.relay.primary.url, primary.baseUrl);
  t.match(ready.json.relay.primary.problem, primary.baseUrl, "A's reason names the primary");
});

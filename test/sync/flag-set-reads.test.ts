// Black-box: a flag a flagd flag set serves is "usage unknown" exactly while a set serving it was read in
// the lifecycle's window (issue 99, item 3; docs/decisions.md: flag set reads): known, and so unused when
// nothing evaluated it, while no stock flagd client read its set; unknown once one did, over HTTP
// (GET /v1/flag-sets), by an export in flagd's format, or through the sync service (the stock
// @openfeature/flagd-provider), and for as long as that provider's stream stays open, however far the
// clock moves; and while a relay follows, which may serve the set to clients this server never hears of. The server's clock is moved
// (FLAGWIRE_TEST_HOOKS) instead of waiting a month; its reads are written every 200 ms, not every minute.
import t from 'tap';
import { OpenFeature } from '@openfeature/server-sdk';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { advanceClock } from '../helpers/test-hooks.js';
import { buildWorld } from '../helpers/world.js';
import { inProcessFlagdProvider } from '../helpers/flagd-provider.js';

const kDaySeconds = 24 * 3600;
const dataDir = tempDataDir();
const world = buildWorld(dataDir);
const { ids, secrets } = world;
const relayKey = world.run('relayKeyCreate', { name: 'edge' }).secret;
const server = await startTestServer({
  dataDir,
  syncPort: 'free',
  env: { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_READ_FLUSH_MS: '200' },
});
t.teardown(async () => {
  await OpenFeature.close();
  await server.stop();
  await world.store.close();
});

const created = await call(server.baseUrl, 'POST', '/api/v1/flags', {
  token: secrets.write,
  body: { name: 'served', enabled: true, trafficPercentage: 100 },
});
if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
const flagId = created.json.id as string;

interface Lifecycle {
  usageKnown: boolean;
  stage: string;
}
const lifecycle = async (): Promise<Lifecycle> =>
  (await call(server.baseUrl, 'GET', `/api/v1/flags/${flagId}/lifecycle`, { token: secrets.read })).json as Lifecycle;
const untilKnown = (what: string, known: boolean) => pollUntil(what, lifecycle, (v) => v.usageKnown === known);

t.test('no stock flagd client read its set in the window: usage known, and unused', async (t) => {
  const served = await call(server.baseUrl, 'GET', `/api/v1/flags/${flagId}/flagd`, { token: secrets.read });
  t.same(
    served.json.flagd.map((s: { served: boolean }) => s.served),
    [true],
    'its flag set serves it',
  );
  await advanceClock(server, 31 * kDaySeconds);
  const view = await untilKnown('usage known', true);
  t.equal(view.stage, 'unused', 'created before the window, evaluated by nothing');
});

t.test('a GET of its flag set in the window: unknown, never unused; known again a window later', async (t) => {
  const read = await call(server.baseUrl, 'GET', `/v1/flag-sets/${ids.single}`, { token: secrets.read });
  t.equal(read.status, 200);
  t.ok(JSON.parse(read.text).flags.served, 'the set holds the flag');
  const view = await untilKnown('the read is recorded', false);
  t.not(view.stage, 'unused', 'missing evaluations prove nothing');
  await advanceClock(server, 31 * kDaySeconds);
  const later = await untilKnown('the read falls out of the window', true);
  t.equal(later.stage, 'ready-to-archive', 'unused, past its 40 days, and no scan says it is in code');
});

t.test('a relay about to follow: it may serve any set unseen, so usage is unknown', async (t) => {
  const discovery = await call(server.baseUrl, 'GET', '/v1/relay', { token: relayKey });
  t.equal(discovery.status, 200, discovery.text);
  t.not((await untilKnown("the relay's read is recorded", false)).stage, 'ready-to-archive');
  await advanceClock(server, 31 * kDaySeconds);
  await untilKnown('no relay followed in the window', true);
});

t.test("an export in flagd's format: a file a stock flagd may serve unseen, so a read", async (t) => {
  const plain = await call(server.baseUrl, 'GET', '/api/v1/export', { token: secrets.read });
  t.equal(plain.status, 200, plain.text);
  await new Promise((r) => setTimeout(r, 1000));
  t.equal((await lifecycle()).usageKnown, true, "Flagwire's own format is no read of a flag set");
  const exported = await call(server.baseUrl, 'GET', '/api/v1/export?format=flagd', { token: secrets.read });
  t.equal(exported.status, 200, exported.text);
  t.ok(JSON.parse(exported.text).flags.served, 'the file holds the flag');
  t.not((await untilKnown('the export is recorded as a read', false)).stage, 'ready-to-archive');
  await advanceClock(server, 31 * kDaySeconds);
  await untilKnown('no export in the window', true);
});

t.test('the stock flagd provider: unknown while its sync stream is open, however long', async (t) => {
  const provider = inProcessFlagdProvider(server.syncPort, `flagSetId=${ids.single},token=${secrets.read}`);
  await OpenFeature.setProviderAndWait('reads', provider);
  t.equal(await OpenFeature.getClient('reads').getBooleanValue('served', false, { targetingKey: 'u1' }), true, 'evaluated unseen');
  t.not((await untilKnown('its read is recorded', false)).stage, 'unused');
  // A window on, the stream read the set once long ago but is still open: it still reads it.
  await advanceClock(server, 31 * kDaySeconds);
  await untilKnown('the open stream counts as reading now', false);
  const marked = await lifecycle();
  t.equal(marked.usageKnown, false);
  t.not(marked.stage, 'unused');
});

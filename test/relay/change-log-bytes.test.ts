// Black-box: a relay follows a large flag's changes as what changed, and a relay behind the upstream's
// byte-bounded change log (FLAGWIRE_CHANGE_LOG_BYTES) is sent a whole copy, after which it answers as
// its upstream does and follows it again. Both real servers; the upstream's log read from its data file.
import t, { type Test } from 'tap';
import { call } from '../helpers/http.js';
import { startTestServer, tempDataDir, type TestServer } from '../helpers/server.js';
import { freePort } from '../helpers/free-port.js';
import { buildWorld } from '../helpers/world.js';
import { createRelayKey, relayReady, startRelay, waitCaughtUp } from './support.js';

const kLogBytes = 300_000;
const upDir = tempDataDir();
const world = buildWorld(upDir);
const { ids, secrets } = world;
const upstream = await startTestServer({
  dataDir: upDir,
  port: await freePort(),
  syncPort: 'free',
  env: { FLAGWIRE_CHANGE_LOG_BYTES: String(kLogBytes) },
});
/** The upstream's data file, read as another process reads it. */
const log = world.store;
const relayDir = tempDataDir();
const key = await createRelayKey(upDir, 'edge-1');
let relay: TestServer | null = null;
t.teardown(async () => {
  await relay?.stop();
  await upstream.stop();
  await world.store.close();
});

const api = async (method: string, path: string, body?: unknown) => {
  const r = await call(upstream.baseUrl, method, path, { token: secrets.write, body });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r;
};

/** What a node answers for the project's flags: OFREP's bulk evaluation and the Evaluation API's, with their revision. */
async function answers(node: TestServer) {
  const bulk = await call(node.baseUrl, 'POST', '/ofrep/v1/evaluate/flags', {
    body: { context: { targetingKey: 'alice' } },
    headers: { 'X-Flagwire-Project': ids.single },
  });
  const project = await call(node.baseUrl, 'GET', `/v1/flags/project/${ids.single}?targetingKey=bob`);
  return { bulk: bulk.json, project: project.json, revision: bulk.headers.get('flagwire-revision') };
}

async function sameAsUpstream(t: Test, what: string): Promise<void> {
  await waitCaughtUp(relay!, upstream, ids.single);
  const [up, down] = [await answers(upstream), await answers(relay!)];
  t.strictSame(down, up, `${what}: the relay answers as the upstream, at its revision`);
}

const big = (
  await api('POST', '/api/v1/flags', {
    name: 'big',
    enabled: true,
    variants: { big: 'x'.repeat(250_000), small: 'y' },
    defaultVariant: 'big',
  })
).json.id as string;
relay = await startRelay(upstream.baseUrl, key.secret, { dataDir: relayDir });

t.test("a relay follows a large flag's small changes, sent as what changed", async (t) => {
  await sameAsUpstream(t, 'from its copy');
  const from = Number((await answers(upstream)).revision);
  for (const trafficPercentage of [10, 60, 100]) await api('PATCH', `/api/v1/flags/${big}`, { trafficPercentage });
  log.resetReadTxn();
  const logged = log.revisionsAfter(from);
  t.ok(logged !== null && logged.length === 3, 'the three PATCHes are in the log');
  const sizes = logged!.map((r) => JSON.stringify(r.changes).length);
  t.ok(
    sizes.every((size) => size < 1000),
    `each is logged as what changed, not the 250 KB flag (${sizes.join(', ')} characters)`,
  );
  await sameAsUpstream(t, 'after the PATCHes');
});

t.test('a relay behind the byte-bounded log is sent a whole copy, then answers as its upstream and follows it', async (t) => {
  const at = (await relayReady(relay!)).json.relay.revision as number;
  await relay!.stop();
  relay = null;
  // Each new flag is logged whole; two of them pass the log's 300,000 bytes, so it drops what the relay lacks.
  for (const name of ['filler-1', 'filler-2'])
    await api('POST', '/api/v1/flags', { name, variants: { on: 'z'.repeat(200_000), off: '' }, defaultVariant: 'off' });
  await api('PATCH', `/api/v1/flags/${big}`, { enabled: false });
  log.resetReadTxn();
  t.equal(log.revisionsAfter(at), null, "the upstream's log no longer reaches the relay's revision");
  const usage = log.changeLogUsage();
  t.ok(usage.bytes <= kLogBytes, `the log holds ${usage.bytes} bytes in ${usage.revisions} revisions`);

  relay = await startRelay(upstream.baseUrl, key.secret, { dataDir: relayDir });
  await sameAsUpstream(t, 'after its copy');

  await api('PATCH', `/api/v1/flags/${big}`, { enabled: true, trafficPercentage: 40 });
  await sameAsUpstream(t, 'and a change after it, applied on top of the copy');
});

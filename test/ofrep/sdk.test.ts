// Black-box: the real server driven by OpenFeature SDKs and OFREP providers from npm (clients nobody
// here wrote): @openfeature/server-sdk + @openfeature/ofrep-provider on the single-flag route, and
// @openfeature/web-sdk + @openfeature/ofrep-web-provider on the bulk route (ETag polling). Plus raw
// fetch for what a provider does not show: 304, 413, CORS, the project header.
import { kOperator } from '../../src/actor/audit-actor.js';
import { rmSync } from 'node:fs';
import t from 'tap';
import { OpenFeature, ErrorCode } from '@openfeature/server-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OpenFeature as WebOpenFeature, ClientProviderEvents } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
import { bucket } from '../../src/evaluation/engine/bucket.js';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';

const world = buildEvalWorld();
const { ids } = world;
const server = await startTestServer({ dataDir: world.dataDir, env: { FLAGWIRE_EVAL_WORKERS: '2' } });
t.teardown(async () => {
  await OpenFeature.close();
  await WebOpenFeature.close();
  await server.stop();
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});

await OpenFeature.setProviderAndWait('flagwire', new OFREPProvider({ baseUrl: server.baseUrl }));
const client = OpenFeature.getClient('flagwire');
await OpenFeature.setProviderAndWait(
  'scoped',
  new OFREPProvider({ baseUrl: server.baseUrl, headers: [['X-Flagwire-Project', ids.single]] }),
);
const scoped = OpenFeature.getClient('scoped');

const ofrep = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags${path}`, { body, headers });

t.test('server SDK: values, variants, reasons and metadata from the deciding rule', async (t) => {
  const on = await client.getBooleanDetails(ids.on, false, { targetingKey: 'u1' });
  t.same([on.value, on.variant, on.reason, on.flagMetadata], [true, 'on', 'STATIC', { id: ids.on, name: 'on' }]);
  t.same((await client.getBooleanDetails(ids.off, true, { targetingKey: 'u1' })).reason, 'DISABLED');
  t.same(await client.getBooleanValue(ids.off, true, { targetingKey: 'u1' }), false);
  const cohort = await client.getBooleanDetails(ids.zero, false, { targetingKey: 'u1', cohort: 'vip' });
  t.same([cohort.value, cohort.reason], [true, 'TARGETING_MATCH']);
  const audience = await client.getBooleanDetails(ids.aud, false, { targetingKey: 'u1', plan: 'beta', country: 'NL' });
  t.same([audience.value, audience.reason], [true, 'TARGETING_MATCH']);
  t.equal(await client.getBooleanValue(ids.aud, true, { targetingKey: 'u1', plan: 'beta', country: 'DE' }), false);
  const group = await client.getBooleanDetails(ids.group, false, { targetingKey: 'u1', env: 'production', cohort: 'qa' });
  t.same([group.value, group.reason], [true, 'TARGETING_MATCH'], 'env travels in the context');
});

t.test('server SDK: the same sticky answers as GET /v1/flags/{id}, concurrently (one engine, two routeSets)', async (t) => {
  const keys = Array.from({ length: 200 }, (_, i) => `user-${i}`);
  const viaSdk = await Promise.all(keys.map((k) => client.getBooleanDetails(ids.half, false, { targetingKey: k })));
  t.ok(viaSdk.every((d) => d.reason === 'SPLIT' && d.errorCode === undefined));
  t.same(
    viaSdk.map((d) => d.value),
    keys.map((k) => bucket(ids.half, k) < 50),
  );
  const viaGet = await Promise.all(
    keys.slice(0, 50).map(async (k) => (await call(server.baseUrl, 'GET', `/v1/flags/${ids.half}?targetingKey=${k}`)).json.enabled),
  );
  t.same(
    viaGet,
    viaSdk.slice(0, 50).map((d) => d.value),
  );
});

t.test('server SDK: errors arrive as OpenFeature error codes with the default value', async (t) => {
  const missing = await client.getBooleanDetails('flg_nope', true, { targetingKey: 'u1' });
  t.same([missing.value, missing.reason, missing.errorCode], [true, 'ERROR', ErrorCode.FLAG_NOT_FOUND]);
  const noKey = await client.getBooleanDetails(ids.half, true, {});
  t.same([noKey.value, noKey.errorCode], [true, ErrorCode.TARGETING_KEY_MISSING]);
  t.match(noKey.errorMessage, /targetingKey/);
  const noEnv = await client.getBooleanDetails(ids.group, true, { targetingKey: 'u1' });
  t.same(noEnv.errorCode, ErrorCode.INVALID_CONTEXT);
  t.match(noEnv.errorMessage, /valid environments: staging, production, dev/);
  const plan = await client.getBooleanDetails(ids.freeAud, true, { targetingKey: 'u1', plan: 'beta' });
  t.same(plan.errorCode, ErrorCode.GENERAL);
  const typed = await client.getStringDetails(ids.on, 'x', { targetingKey: 'u1' });
  t.same([typed.value, typed.errorCode], ['x', ErrorCode.TYPE_MISMATCH], 'flags are boolean');
});

t.test('server SDK with X-Flagwire-Project: flags of other projects are not found', async (t) => {
  t.equal(await scoped.getBooleanValue(ids.on, false, { targetingKey: 'u1' }), true);
  t.same((await scoped.getBooleanDetails(ids.group, false, { targetingKey: 'u1', env: 'staging' })).errorCode, ErrorCode.FLAG_NOT_FOUND);
});

t.test('flag names as keys: with X-Flagwire-Project a name works like the id; ids work everywhere', async (t) => {
  const byName = await scoped.getBooleanDetails('half', false, { targetingKey: 'user-7' });
  t.same([byName.value, byName.reason, byName.flagMetadata], [bucket(ids.half, 'user-7') < 50, 'SPLIT', { id: ids.half, name: 'half' }]);
  t.equal((await scoped.getBooleanDetails(ids.half, false, { targetingKey: 'user-7' })).value, byName.value, 'the id, with the header');
  t.equal((await client.getBooleanDetails(ids.half, false, { targetingKey: 'user-7' })).value, byName.value, 'the id, without it');
  const header = { 'x-flagwire-project': ids.single };
  const raw = await ofrep('/half', { context: { targetingKey: 'user-7' } }, header);
  t.same([raw.status, raw.json.key], [200, 'half'], "the answer's key is the key asked");
  // Unknown, and another project's flag by name or by id: the same bytes, key aside.
  const texts = await Promise.all(
    ['nope', 'group', ids.group].map(async (key) => {
      const r = await fetch(`${server.baseUrl}/ofrep/v1/evaluate/flags/${key}`, { method: 'POST', headers: header, body: '{}' });
      return [r.status, (await r.text()).replaceAll(key, 'KEY')];
    }),
  );
  t.same(
    texts,
    Array(3).fill([
      404,
      `{"key":"KEY","errorCode":"FLAG_NOT_FOUND","errorDetails":"No flag with id or name \\"KEY\\" exists in project \\"${ids.single}\\"."}`,
    ]),
  );
  const noHeader = await client.getBooleanDetails('half', true, { targetingKey: 'user-7' });
  t.same([noHeader.value, noHeader.errorCode], [true, ErrorCode.FLAG_NOT_FOUND]);
  t.match(noHeader.errorMessage, /A flag name works as the key only with the X-Flagwire-Project header/, 'the SDK shows why');
  world.run('flagRename', { principal: kOperator, flagId: ids.zero, name: 'zero-renamed' });
  t.teardown(() => world.run('flagRename', { principal: kOperator, flagId: ids.zero, name: 'zero' }));
  t.same(
    (await scoped.getBooleanDetails('zero', true, { targetingKey: 'u1' })).errorCode,
    ErrorCode.FLAG_NOT_FOUND,
    'after a rename the old name is not found',
  );
  t.same((await scoped.getBooleanDetails('zero-renamed', true, { targetingKey: 'u1' })).value, false, 'and the new one works');
  t.equal((await ofrep(`/${ids.zero}`, { context: { targetingKey: 'u1' } })).status, 200, 'the id is unaffected');
});

t.test('web SDK on the bulk route: every flag at once, then ETag polling (304) until a PATCH changes it', async (t) => {
  const statuses: { ifNoneMatch: string | null; status: number }[] = [];
  const provider = new OFREPWebProvider({
    baseUrl: server.baseUrl,
    headers: [['X-Flagwire-Project', ids.single]],
    pollInterval: 150,
    // Polling as such (the SSE change events have their own test: events.test.ts).
    changeDetection: 'polling',
    cacheMode: 'disabled',
    fetchImplementation: async (req: Request) => {
      const res = await fetch(req);
      statuses.push({ ifNoneMatch: req.headers.get('if-none-match'), status: res.status });
      return res;
    },
  });
  await WebOpenFeature.setContext('web', { targetingKey: 'user-7', plan: 'beta', country: 'NL' });
  await WebOpenFeature.setProviderAndWait('web', provider);
  const web = WebOpenFeature.getClient('web');
  t.same(web.getBooleanDetails(ids.half, false).value, bucket(ids.half, 'user-7') < 50);
  t.same(
    [web.getBooleanValue(ids.on, false), web.getBooleanValue(ids.aud, false), web.getBooleanValue(ids.off, true)],
    [true, true, false],
  );
  t.same(
    [web.getBooleanValue('on', false), web.getBooleanValue('aud', false), web.getBooleanValue('off', true)],
    [true, true, false],
    'names too',
  );
  // Two polls answered 304, however long the polls take on this machine (the bound only catches a hang).
  const answered304 = () => statuses.filter((s) => s.status === 304 && s.ifNoneMatch !== null).length;
  for (const deadline = Date.now() + 60_000; answered304() < 2 && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.ok(answered304() >= 2, `polls answered 304: ${JSON.stringify(statuses)}`);
  const changed = new Promise<void>((resolve) => web.addHandler(ClientProviderEvents.ConfigurationChanged, () => resolve()));
  const patch = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.on}`, { token: world.writeToken, body: { enabled: false } });
  t.equal(patch.status, 200);
  await changed;
  t.same(web.getBooleanDetails(ids.on, true).reason, 'DISABLED', 'the next poll got 200 with the new answer');
  t.equal(statuses.at(-1)!.status, 200);
});

t.test('bulk over fetch: ETag and 304; a changed context never gets a stale 304', async (t) => {
  const body = { context: { targetingKey: 'user-1' } };
  const first = await ofrep('', body, { 'x-flagwire-project': ids.single });
  t.equal(first.status, 200);
  const etag = first.headers.get('etag')!;
  t.match(etag, /^"[0-9a-f]{8}-[0-9a-f]{16}"$/);
  t.equal(first.headers.get('access-control-expose-headers'), 'ETag, Flagwire-Revision');
  const again = await fetch(`${server.baseUrl}/ofrep/v1/evaluate/flags`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'x-flagwire-project': ids.single, 'if-none-match': etag },
  });
  t.same([again.status, again.headers.get('etag'), await again.text()], [304, etag, '']);
  const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
  const differs = keys.find((k) => bucket(ids.half, k) < 50 !== bucket(ids.half, 'user-1') < 50)!;
  const other = await ofrep('', { context: { targetingKey: differs } }, { 'x-flagwire-project': ids.single, 'if-none-match': etag });
  t.equal(other.status, 200);
  const noProject = await ofrep('', body);
  t.same([noProject.status, noProject.json.errorCode], [400, 'GENERAL']);
  // What the web provider adds after a change event (ADR-0008) changes nothing.
  const withSse = await fetch(`${server.baseUrl}/ofrep/v1/evaluate/flags?flagConfigEtag=abc123&flagConfigLastModified=1700000000`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'x-flagwire-project': ids.single },
  });
  t.same([withSse.status, withSse.headers.get('etag')], [200, etag]);
  t.same((await withSse.json()).eventStreams, [
    { type: 'sse', endpoint: { requestUri: `/ofrep/v1/stream/project/${ids.single}` }, inactivityDelaySec: 120 },
  ]);
});

t.test('the body: 1 MiB cap (413), any content type, empty is {}; GET is not a route', async (t) => {
  const big = await ofrep(`/${ids.on}`, { context: { targetingKey: 'x'.repeat(1024 * 1024) } });
  t.same([big.status, big.json.errorCode, big.json.key], [413, 'GENERAL', ids.on]);
  const bulkBig = await ofrep('', { context: { pad: 'x'.repeat(1024 * 1024) } }, { 'x-flagwire-project': ids.single });
  t.same([bulkBig.status, bulkBig.json.errorCode], [413, 'GENERAL']);
  const plain = await call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${ids.on}`, {
    raw: '{"context":{}}',
    headers: { 'content-type': 'text/plain' },
  });
  t.equal(plain.status, 200);
  const empty = await fetch(`${server.baseUrl}/ofrep/v1/evaluate/flags/${ids.off}`, { method: 'POST' });
  t.same([empty.status, (await empty.json()).reason], [200, 'DISABLED']);
  const bad = await call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${ids.on}`, { raw: '{nope' });
  t.same([bad.status, bad.json.errorCode], [400, 'PARSE_ERROR']);
  t.equal((await call(server.baseUrl, 'GET', `/ofrep/v1/evaluate/flags/${ids.on}`)).status, 404);
});

t.test('CORS: answers allow any origin; preflight allows the OFREP headers', async (t) => {
  const r = await ofrep(`/${ids.on}`, {});
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  const pre = await fetch(`${server.baseUrl}/ofrep/v1/evaluate/flags`, { method: 'OPTIONS' });
  t.equal(pre.status, 204);
  t.match(pre.headers.get('access-control-allow-headers'), /X-Flagwire-Project/);
  t.match(pre.headers.get('access-control-allow-headers'), /If-None-Match/);
});

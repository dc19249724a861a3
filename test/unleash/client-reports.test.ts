// Black-box: what Unleash's server SDKs report (issue 60, item 2), POST /api/client/register and
// /api/client/metrics, with the stock unleash-client against a real server: both answered 202 so the SDK
// warns of nothing, its counts (yes + no) land in the usage of the token's project's flags by name,
// written at the usage flush like the eval workers' counts (docs/operations.md: Flag usage); every
// refusal (no token, a client key, a bad body) in the Management API's envelope, counting nothing.
import t, { type Test } from 'tap';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { kOperator } from '../../src/actor/audit-actor.js';
import { jsonBody } from '../../src/model/request-body.js';
import { call, type Reply } from '../helpers/http.js';
import { flushActivity } from '../helpers/test-hooks.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t, { FLAGWIRE_TEST_HOOKS: '1' });
const { ids, secrets } = world;

/** A POST with `authorization` as the whole header (as the SDKs send it); a string body is sent as it is, as JSON. */
const post = (path: string, authorization: string | null, body: unknown, headers: Record<string, string> = {}) =>
  call(server.baseUrl, 'POST', path, {
    headers: { 'content-type': 'application/json', ...(authorization === null ? {} : { authorization }), ...headers },
    ...(typeof body === 'string' ? { raw: body } : { body }),
  });
const evaluations = async (id: string, token = secrets.read) =>
  (await call(server.baseUrl, 'GET', `/api/v1/flags/${id}`, { token })).json.evaluations as number;

function refusedWith(t: Test, r: Reply, status: number, error: string, detail?: RegExp): void {
  t.equal(r.status, status, `${status} ${error}`);
  t.equal(r.json.error, error);
  if (detail !== undefined) t.match(r.json.detail, detail);
}

const report = (toggles: Record<string, unknown>) => ({
  appName: 'billing',
  instanceId: 'i-1',
  bucket: { start: new Date().toISOString(), stop: new Date().toISOString(), toggles },
});

t.test('the stock SDK registers and sends its metrics without a warning; its counts are the flags’ usage', async (t) => {
  await flushActivity(server);
  const checkoutBefore = await evaluations(ids.flag);
  const bannerBefore = await evaluations(ids.flag2);
  const warnings: unknown[] = [];
  const unleash = new Unleash({
    url: `${server.baseUrl}/api`,
    appName: 'billing',
    customHeaders: { Authorization: secrets.read },
    metricsInterval: 60_000,
    refreshInterval: 60_000,
    storageProvider: new InMemStorageProvider(),
  });
  t.teardown(() => unleash.destroy());
  unleash.on('warn', (warning: unknown) => warnings.push(warning));
  const registered = new Promise((resolve) => unleash.once('registered', resolve));
  await new Promise<void>((resolve, reject) => {
    unleash.once('synchronized', () => resolve());
    unleash.once('error', reject);
  });
  t.match(await registered, { appName: 'billing' }, 'registered (a 2xx)');
  for (let i = 0; i < 7; i++) unleash.isEnabled('checkout', { userId: `u-${i}` });
  unleash.isEnabled('banner');
  unleash.isEnabled('no-such-flag');
  const sent = new Promise((resolve) => unleash.once('sent', resolve));
  // The SDK's own send, as its timer runs it (metricsInterval is a minute: not waited for here).
  await (unleash as unknown as { metrics: { sendMetrics(): Promise<void> } }).metrics.sendMetrics();
  t.match(await sent, { bucket: { toggles: { checkout: { yes: Number, no: Number } } } }, 'sent (a 2xx)');
  t.same(warnings, [], 'the SDK warned of nothing');

  t.equal(await evaluations(ids.flag), checkoutBefore, 'not written per request');
  await flushActivity(server);
  t.equal(await evaluations(ids.flag), checkoutBefore + 7, 'checkout: its 7 evaluations by the SDK');
  t.equal(await evaluations(ids.flag2), bannerBefore + 1, 'banner: 1');
});

t.test('counts go to the token’s project, by name; a name it has no flag of counts nothing', async (t) => {
  await flushActivity(server);
  const before = await evaluations(ids.flag);
  const otherBefore = await evaluations(ids.flagB, secrets.writeB);
  // Both projects have a flag named checkout: the token's project's is the one counted.
  const r = await post(
    '/api/client/metrics',
    secrets.writeB,
    report({ checkout: { yes: 3, no: 2, variants: { a: 3 } }, nope: { yes: 1, no: 0 } }),
  );
  t.equal(r.status, 202);
  t.equal(r.text, '', 'an empty body, as Unleash answers');
  await flushActivity(server);
  t.equal(await evaluations(ids.flag), before, "another project's token counts nothing here");
  t.equal(await evaluations(ids.flagB, secrets.writeB), otherBefore + 5, "its own project's checkout: yes + no");
  t.equal((await post('/api/client/metrics', secrets.writeB, report({ checkout: { yes: 0, no: 0 } }))).status, 202, 'zero counts');
  t.equal((await post('/api/client/metrics', secrets.writeB, { appName: 'edge-like' })).status, 202, 'no bucket (Edge accepts it)');
  await flushActivity(server);
  t.equal(await evaluations(ids.flagB, secrets.writeB), otherBefore + 5, 'count nothing');
});

t.test('a project with environments: a token limited to one environment counts its flags', async (t) => {
  const id = world.run('flagCreate', {
    projectId: ids.multi,
    body: { name: 'multi-counted', environments: { staging: { enabled: true, trafficPercentage: 100 } } },
    principal: kOperator,
  }).id;
  t.equal((await post('/api/client/metrics', secrets.stagingWrite, report({ 'multi-counted': { yes: 1, no: 1 } }))).status, 202);
  await flushActivity(server);
  t.equal(await evaluations(id, secrets.stagingWrite), 2);
  const lifecycle = await call(server.baseUrl, 'GET', `/api/v1/flags/${id}/lifecycle`, { token: secrets.stagingWrite });
  t.same(
    lifecycle.json.environments.map((e: { environment: string; evaluations: number }) => [e.environment, e.evaluations]),
    [['staging', 2]],
    "counted in the token's environment",
  );
  refusedWith(t, await post('/api/client/register', secrets.multiRead, { appName: 'a' }), 403, 'Forbidden', /one environment/);
});

t.test('refusals: no token, a client key, a bad token; nothing counted', async (t) => {
  await flushActivity(server);
  const before = await evaluations(ids.flag);
  const clientKey = world.run('clientKeyCreate', {
    principal: kOperator,
    projectId: ids.single,
    received: jsonBody(JSON.stringify({ name: 'web', uses: ['frontend'] })),
  }).secret;
  const body = report({ checkout: { yes: 5, no: 0 } });
  for (const path of ['/api/client/register', '/api/client/metrics']) {
    refusedWith(t, await post(path, null, body), 401, 'Missing bearer token', /customHeaders/);
    // A client key is for the front-end API, and reads no rules.
    refusedWith(t, await post(path, clientKey, body), 401, 'Malformed bearer token', /a client key.*\/api\/frontend.*token of the project/);
    refusedWith(t, await post(path, `Bearer ${clientKey}`, body), 401, 'Malformed bearer token', /a client key/);
    refusedWith(t, await post(path, `fw_${'x'.repeat(40)}`, body), 401, 'Invalid token');
    refusedWith(t, await post(path, 'not a token', body), 401, 'Malformed bearer token');
    refusedWith(t, await post(`${path}?token=${secrets.read}`, secrets.read, body), 400, 'Invalid request', /never accepted in the URL/);
    refusedWith(t, await post(path, secrets.free, body), 402, 'Plan does not include the Management API');
  }
  await flushActivity(server);
  t.equal(await evaluations(ids.flag), before, 'nothing refused was counted');
});

t.test('bad bodies: 400 naming the problem, nothing counted; over 1 MiB: 413', async (t) => {
  await flushActivity(server);
  const before = await evaluations(ids.flag);
  const bad: [string, unknown, RegExp][] = [
    ['/api/client/register', '{"appName": ', /not valid JSON/],
    ['/api/client/register', '[]', /must be a JSON object/],
    ['/api/client/register', {}, /appName is required/],
    ['/api/client/register', { appName: 'a', strategies: 'default' }, /strategies/],
    ['/api/client/metrics', { bucket: { toggles: {} } }, /appName is required/],
    ['/api/client/metrics', report({ checkout: { yes: -1, no: 0 } }), /bucket\.toggles\.checkout\.yes/],
    ['/api/client/metrics', report({ checkout: { yes: 1.5, no: 0 } }), /yes/],
    ['/api/client/metrics', report({ checkout: { yes: 2 ** 31, no: 0 } }), /yes/],
    ['/api/client/metrics', report({ checkout: { yes: 1 } }), /no is required/],
    ['/api/client/metrics', { appName: 'a', bucket: { toggles: [] } }, /toggles/],
    ['/api/client/metrics', { ...report({ checkout: { yes: 1, no: 0 } }), appName: 7 }, /appName/],
  ];
  for (const [path, body, detail] of bad) refusedWith(t, await post(path, secrets.read, body), 400, 'Invalid request', detail);
  refusedWith(
    t,
    await post('/api/client/metrics', secrets.read, '{}', { 'content-type': 'text/plain' }),
    400,
    'Invalid request',
    /Content-Type must be application\/json/,
  );
  const huge = await post('/api/client/metrics', secrets.read, JSON.stringify({ appName: 'x'.repeat(1024 * 1024) }));
  t.equal(huge.status, 413, 'over 1 MiB');
  await flushActivity(server);
  t.equal(await evaluations(ids.flag), before, 'no bad body counted anything');
  // Fields Unleash's SDKs may add later are read past, not refused.
  t.equal((await post('/api/client/register', secrets.read, { appName: 'a', yggdrasilVersion: null, sdkFlavor: 'x' })).status, 202);
});

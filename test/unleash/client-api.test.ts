// Black-box: GET /api/client/features (issue 60, item 2) with Unleash's stock Node SDK (unleash-client),
// which fetches it and evaluates locally: for every flag Flagwire says in Unleash's model, the SDK's
// isEnabled equals Flagwire's Evaluation API for the same caller (the context mapped as docs/api.md says:
// userId the targetingKey, else the cohort; properties.cohort the cohort; properties the attributes); the
// flags it cannot say are left out and named with why; ETag and 304; the token decides the project and,
// for a project with environments, the environment; every refusal in the Management API's envelope.
import t, { type Test } from 'tap';
import { InMemStorageProvider, Unleash } from 'unleash-client';
import { startUnleashSdk } from '../helpers/unleash-sdk.js';
import { kOperator } from '../../src/actor/audit-actor.js';
import { call, type Reply } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
const features = (authorization: string | null, headers: Record<string, string> = {}) =>
  call(server.baseUrl, 'GET', '/api/client/features', { headers: authorization === null ? headers : { authorization, ...headers } });

function refusedWith(t: Test, r: Reply, status: number, error: string, detail?: RegExp): void {
  t.equal(r.status, status, `${status} ${error}`);
  t.equal(r.json.error, error);
  if (detail !== undefined) t.match(r.json.detail, detail);
}

/** The stock SDK on this server with the read token, once it has its first answer; destroyed at `t`'s end. */
const startSdk = (t: Test, appName: string, namePrefix?: string): Promise<Unleash> =>
  startUnleashSdk(t, server.baseUrl, secrets.read, appName, namePrefix);

const create = (name: string, body: Record<string, unknown>, projectId = ids.single) =>
  world.run('flagCreate', { projectId, body: { name, ...body }, principal: kOperator }).id;
const userIdAudience = world.run('audienceCreate', {
  principal: kOperator,
  projectId: ids.single,
  name: 'By user id',
  rules: [{ attribute: 'userId', values: ['u1'] }],
}).id;
// Said in Unleash's model: every shape of the spec's rules ("checkout": 50%, cohort alice; "banner": off).
create('beta-split', { enabled: true, trafficPercentage: 30, audienceId: ids.audience, cohorts: ['vip'] });
create('everyone', { enabled: true, trafficPercentage: 100 });
create('beta-everyone', { enabled: true, trafficPercentage: 100, audienceId: ids.audience });
create('cohorts-only', { enabled: true, trafficPercentage: 0, cohorts: ['vip', 'alice'] });
create('nobody', { enabled: true, trafficPercentage: 0 });
// Left out, each with why.
create('flagd-buckets', { enabled: true, trafficPercentage: 40, bucketing: 'fractional' });
create('reads-user-id', { enabled: true, trafficPercentage: 100, audienceId: userIdAudience });
create('padded-cohort', { enabled: true, trafficPercentage: 10, cohorts: [' bob'] });
const kSaid = ['checkout', 'banner', 'beta-split', 'everyone', 'beta-everyone', 'cohorts-only', 'nobody'];

t.test('the stock SDK answers every said flag as the Evaluation API does, for every caller', async (t) => {
  const unleash = await startSdk(t, 'flagwire-test');
  t.same(
    unleash
      .getFeatureToggleDefinitions()!
      .map((f) => f.name)
      .sort(),
    [...kSaid].sort(),
  );
  let compared = 0;
  for (let i = 0; i < 200; i++) {
    // A key, a cohort (sometimes a listed one), or both; the audience's attribute or another value.
    const key = i % 5 === 4 ? null : `user-${i}`;
    const cohort = i % 3 === 0 ? ['alice', 'vip', 'bob'][i % 9 === 0 ? 0 : (i / 3) % 3]! : i % 5 === 4 ? `c-${i}` : null;
    const plan = i % 2 === 0 ? 'beta' : 'free';
    const query = new URLSearchParams({ plan });
    if (key !== null) query.set('targetingKey', key);
    if (cohort !== null) query.set('cohort', cohort);
    const answers = await call(server.baseUrl, 'GET', `/v1/flags/project/${ids.single}?${query}`);
    t.equal(answers.status, 200);
    const context = { userId: key ?? cohort ?? undefined, properties: { plan, ...(cohort === null ? {} : { cohort }) } };
    for (const answer of answers.json as { name: string; enabled: boolean }[]) {
      if (!kSaid.includes(answer.name)) continue;
      const got = unleash.isEnabled(answer.name, context);
      if (got !== answer.enabled) t.fail(`${answer.name} for ${JSON.stringify(context)}: Unleash ${got}, Flagwire ${answer.enabled}`);
      compared++;
    }
  }
  t.equal(compared, 200 * kSaid.length, 'every said flag compared for every caller');
  // Both answers over a split: some callers in and some out (the comparison above is not all one value).
  const split = [...Array(200).keys()].map((i) => unleash.isEnabled('checkout', { userId: `k-${i}` }));
  t.ok(split.includes(true) && split.includes(false), 'the 50% flag lets some in and keeps some out');
});

t.test('the answer: version 2, the said flags, the left-out ones named; ETag and 304; a change moves it', async (t) => {
  const first = await features(secrets.read);
  t.equal(first.status, 200);
  t.equal(first.json.version, 2);
  t.same(first.json.segments, []);
  t.equal(first.json.flagwire.project, ids.single);
  t.equal(first.json.flagwire.environment, null);
  const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
  t.equal(first.json.flagwire.omitted.length, 3);
  t.match([...first.json.flagwire.omitted].sort(byName), [
    { name: 'flagd-buckets', reason: /fractional/ },
    { name: 'padded-cohort', reason: /spaces/ },
    { name: 'reads-user-id', reason: /reads "userId"/ },
  ]);
  const checkout = first.json.features.find((f: { name: string }) => f.name === 'checkout');
  t.same(checkout.strategies, [
    {
      name: 'default',
      parameters: {},
      constraints: [{ contextName: 'cohort', operator: 'IN', values: ['alice'], inverted: false, caseInsensitive: false }],
    },
    { name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'default', groupId: ids.flag }, constraints: [] },
  ]);
  t.equal(first.json.features.find((f: { name: string }) => f.name === 'nobody').enabled, false, 'no caller can get it');
  const etag = first.headers.get('etag')!;
  t.match(etag, /^".+"$/);
  const bearer = await features(`Bearer ${secrets.read}`, { 'If-None-Match': etag });
  t.equal(bearer.status, 304, 'the header with "Bearer " works too');
  t.equal(bearer.text, '');
  t.equal(
    (await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flagB}`, { token: secrets.writeB, body: { enabled: false } })).status,
    200,
  );
  t.equal((await features(secrets.read, { 'If-None-Match': etag })).status, 304, "another project's change changes nothing here");
  t.equal(
    (
      await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag2}`, {
        token: secrets.write,
        body: { enabled: true, trafficPercentage: 100 },
      })
    ).status,
    200,
  );
  const changed = await features(secrets.read, { 'If-None-Match': etag });
  t.equal(changed.status, 200);
  t.not(changed.headers.get('etag'), etag);
  t.same(changed.json.features.find((f: { name: string }) => f.name === 'banner').strategies, [
    { name: 'default', parameters: {}, constraints: [] },
  ]);
});

t.test("the SDK's namePrefix: only those flags, under their own ETag", async (t) => {
  const all = await features(secrets.read);
  const beta = await call(server.baseUrl, 'GET', '/api/client/features?namePrefix=beta-&project=ignored', {
    headers: { authorization: secrets.read },
  });
  t.equal(beta.status, 200);
  // Sorted: flags made in the same millisecond are listed in the order of their ids.
  t.same(beta.json.features.map((f: { name: string }) => f.name).sort(), ['beta-everyone', 'beta-split']);
  t.same(beta.json.flagwire.omitted, [], 'the left-out flags outside the prefix are not named either');
  t.not(beta.headers.get('etag'), all.headers.get('etag'));
  const unleash = await startSdk(t, 'flagwire-test-prefix', 'beta-');
  t.same(
    unleash
      .getFeatureToggleDefinitions()!
      .map((f) => f.name)
      .sort(),
    ['beta-everyone', 'beta-split'],
  );
});

t.test('a project with environments: the token limited to one of them decides which', async (t) => {
  const staging = await features(secrets.stagingWrite);
  t.equal(staging.status, 200);
  t.equal(staging.json.flagwire.environment, 'staging');
  t.same(
    staging.json.features.map((f: { name: string; enabled: boolean }) => [f.name, f.enabled]),
    [['search', true]],
  );
  refusedWith(
    t,
    await features(secrets.multiRead),
    403,
    'Forbidden',
    /covers every environment.*use a token limited to one environment.*staging, production/,
  );
});

t.test('a token of every environment: the stock SDK says its key is not allowed, not a bare status', async (t) => {
  const unleash = new Unleash({
    url: `${server.baseUrl}/api`,
    appName: 'every-environment',
    customHeaders: { Authorization: secrets.multiRead },
    disableMetrics: true,
    refreshInterval: 60_000,
    storageProvider: new InMemStorageProvider(),
  });
  t.teardown(() => unleash.destroy());
  const error = await new Promise<Error>((resolve) => unleash.once('error', resolve));
  t.match(error.message, /responded 403 which means your API key is not allowed to connect/);
});

t.test('tokens: missing, wrong, in the URL, of an organisation without the plan', async (t) => {
  refusedWith(t, await features(null), 401, 'Missing bearer token', /customHeaders/);
  refusedWith(t, await features(`fw_${'x'.repeat(40)}`), 401, 'Invalid token');
  refusedWith(t, await features(`fwc_${'x'.repeat(32)}`), 401, 'Malformed bearer token', /a client key.*token of the project/);
  refusedWith(t, await features('not a token'), 401, 'Malformed bearer token');
  const inUrl = await call(server.baseUrl, 'GET', `/api/client/features?token=${secrets.read}`, {
    headers: { authorization: secrets.read },
  });
  refusedWith(t, inUrl, 400, 'Invalid request', /never accepted in the URL/);
  refusedWith(t, await features(secrets.free), 402, 'Plan does not include the Management API');
});

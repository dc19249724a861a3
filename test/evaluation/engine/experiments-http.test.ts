// Black-box: experiments on flags (issue 58, item 1) through the real server. The Management API makes
// and patches a flag state's experiment key (a slug; null ends it) and shows it; every answer for the
// flag then names it where each protocol carries flag metadata, with whether it is an exposure: OFREP's
// `metadata` (single and bulk, and through OpenFeature's stock OFREP provider), the Evaluation API beside
// `enabled`, and flagd's flag metadata in the flag set. Match (the split), disabled, cohort override and
// error, each on every surface. A flag file exports, plans and applies it.
import t from 'tap';
import { OpenFeature } from '@openfeature/server-sdk';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { call } from '../../helpers/http.js';
import { startWorldServer } from '../../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
t.teardown(() => OpenFeature.close());
const api = (method: string, path: string, body?: unknown, token = secrets.write) => call(server.baseUrl, method, path, { token, body });
const evaluate = (path: string) => call(server.baseUrl, 'GET', `/v1/flags/${path}`);
const ofrep = (path: string, context: Record<string, unknown>) =>
  call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags${path}`, { body: { context }, headers: { 'X-Flagwire-Project': ids.single } });

const made = await api('POST', '/api/v1/flags', {
  name: 'new-checkout',
  enabled: true,
  trafficPercentage: 50,
  cohorts: ['vip'],
  bucketing: 'fractional',
  experiment: 'checkout-2026',
});
const flagId = made.json.id as string;

/** A targeting key the split lets in, and one it leaves out. */
async function keysBothSides(): Promise<{ inKey: string; outKey: string }> {
  let inKey: string | null = null;
  let outKey: string | null = null;
  for (let i = 0; inKey === null || outKey === null; i++) {
    const enabled = (await evaluate(`${flagId}?targetingKey=user-${i}`)).json.enabled as boolean;
    if (enabled) inKey ??= `user-${i}`;
    else outKey ??= `user-${i}`;
  }
  return { inKey, outKey };
}
const { inKey, outKey } = await keysBothSides();

t.test('the Management API makes, shows, patches and ends an experiment; a bad key is refused', async (t) => {
  t.equal(made.status, 201, made.text);
  t.equal(made.json.experiment, 'checkout-2026');
  const read = await api('GET', `/api/v1/flags/${flagId}`, undefined, secrets.read);
  t.equal(read.json.experiment, 'checkout-2026');
  t.notOk('experiment' in (await api('GET', `/api/v1/flags/${ids.flag}`, undefined, secrets.read)).json, 'a flag without one shows none');
  const bad = await api('PATCH', `/api/v1/flags/${ids.flag}`, { experiment: 'Not A Slug' });
  t.equal(bad.status, 400);
  t.match(bad.json.detail, /"experiment" must be an experiment key/);
  const set = await api('PATCH', `/api/v1/flags/${ids.flag2}`, { experiment: 'banner-test' });
  t.match(set.json, { changed: true, flag: { experiment: 'banner-test' } });
  const ended = await api('PATCH', `/api/v1/flags/${ids.flag2}`, { experiment: null });
  t.equal(ended.json.changed, true);
  t.notOk('experiment' in ended.json.flag, 'ended');
  const group = await api('PATCH', `/api/v1/flags/${ids.groupFlag}?env=staging`, { experiment: 'search-v2' }, secrets.multiWrite);
  t.equal(group.status, 200, group.text);
  const environments = (await api('GET', `/api/v1/flags/${ids.groupFlag}`, undefined, secrets.multiRead)).json.environments;
  t.equal(environments.staging.experiment, 'search-v2');
  t.notOk('experiment' in environments.production, "production's state has none");
});

t.test('OFREP: the split is an exposure, in or out; a cohort override, a disabled flag and an error are not', async (t) => {
  const expect = (exposed: boolean) => ({ id: flagId, name: 'new-checkout', experimentKey: 'checkout-2026', inExperiment: exposed });
  const inside = await ofrep(`/${flagId}`, { targetingKey: inKey });
  t.strictSame(inside.json, { key: flagId, value: true, reason: 'SPLIT', variant: 'on', metadata: expect(true) });
  t.strictSame((await ofrep('/new-checkout', { targetingKey: outKey })).json.metadata, expect(true), 'out of the split: still allocated');
  const cohort = await ofrep(`/${flagId}`, { targetingKey: outKey, cohort: 'vip' });
  t.match(cohort.json, { value: true, reason: 'TARGETING_MATCH', metadata: expect(false) });
  const missing = await ofrep(`/${flagId}`, {});
  t.equal(missing.status, 400);
  t.match(missing.json, { errorCode: 'TARGETING_KEY_MISSING', metadata: { experimentKey: 'checkout-2026', inExperiment: false } });
  const bulk = await ofrep('', { targetingKey: inKey });
  t.equal(bulk.status, 200);
  const entries = bulk.json.flags.filter((f: { key: string }) => f.key === flagId || f.key === 'new-checkout');
  t.equal(entries.length, 2, 'under its id and its name');
  for (const entry of entries) t.strictSame(entry.metadata, expect(true));

  t.equal((await api('PATCH', `/api/v1/flags/${flagId}`, { enabled: false })).status, 200);
  t.match((await ofrep(`/${flagId}`, { targetingKey: inKey })).json, { reason: 'DISABLED', metadata: expect(false) });
  t.equal((await api('PATCH', `/api/v1/flags/${flagId}`, { enabled: true })).status, 200);
});

t.test('the Evaluation API carries them beside the answer', async (t) => {
  t.strictSame((await evaluate(`${flagId}?targetingKey=${inKey}`)).json, {
    id: flagId,
    name: 'new-checkout',
    enabled: true,
    experimentKey: 'checkout-2026',
    inExperiment: true,
  });
  t.match((await evaluate(`${flagId}?targetingKey=${outKey}`)).json, { enabled: false, inExperiment: true });
  t.match((await evaluate(`${flagId}?targetingKey=${outKey}&cohort=vip`)).json, { enabled: true, inExperiment: false });
  const project = (await evaluate(`project/${ids.single}?targetingKey=${inKey}`)).json as Record<string, unknown>[];
  t.match(
    project.find((f) => f.id === flagId),
    { experimentKey: 'checkout-2026', inExperiment: true },
  );
  t.strictSame(Object.keys(project.find((f) => f.id === ids.flag)!), ['id', 'name', 'enabled'], 'a flag without one: as before');
  t.equal((await api('PATCH', `/api/v1/flags/${flagId}`, { enabled: false })).status, 200);
  t.match((await evaluate(`${flagId}?targetingKey=${inKey}`)).json, {
    enabled: false,
    experimentKey: 'checkout-2026',
    inExperiment: false,
  });
  t.equal((await api('PATCH', `/api/v1/flags/${flagId}`, { enabled: true })).status, 200);
});

t.test("OpenFeature's stock OFREP provider hands the metadata to the application", async (t) => {
  await OpenFeature.setProviderAndWait(
    'experiments',
    new OFREPProvider({ baseUrl: server.baseUrl, headers: [['X-Flagwire-Project', ids.single]] }),
  );
  const client = OpenFeature.getClient('experiments');
  const details = await client.getBooleanDetails('new-checkout', false, { targetingKey: inKey });
  t.equal(details.value, true);
  t.match(details.flagMetadata, { experimentKey: 'checkout-2026', inExperiment: true });
  const override = await client.getBooleanDetails('new-checkout', false, { targetingKey: outKey, cohort: 'vip' });
  t.match(override.flagMetadata, { experimentKey: 'checkout-2026', inExperiment: false });
});

t.test("flagd's flag set names the experiment in the flag's metadata", async (t) => {
  const set = await call(server.baseUrl, 'GET', `/v1/flag-sets/${ids.single}`, { token: secrets.read });
  t.equal(set.status, 200, set.text);
  t.match(set.json.flags['new-checkout'].metadata, { id: flagId, name: 'new-checkout', experimentKey: 'checkout-2026' });
  t.notOk('inExperiment' in set.json.flags['new-checkout'].metadata, "flagd's fixed metadata cannot say it per answer");
});

t.test('a flag file carries the experiment: exported, planned as a field, applied and ended', async (t) => {
  const file = (await api('GET', '/api/v1/export', undefined, secrets.read)).json;
  t.equal(file.flags['new-checkout'].experiment, 'checkout-2026', 'exported');
  t.notOk('experiment' in file.flags.checkout, 'a flag without one: none written');
  file.flags.checkout.experiment = 'from-a-file';
  delete file.flags['new-checkout'].experiment;
  const planned = await api('POST', '/api/v1/plan', file, secrets.read);
  t.equal(planned.status, 200, planned.text);
  const fields = (name: string) => planned.json.changes.find((c: { name: string }) => c.name === name)?.fields;
  t.strictSame(fields('checkout'), [{ path: 'experiment', before: null, after: 'from-a-file' }]);
  t.strictSame(fields('new-checkout'), [{ path: 'experiment', before: 'checkout-2026', after: null }]);
  const applied = await api('POST', '/api/v1/apply', file);
  t.equal(applied.status, 200, applied.text);
  t.match((await ofrep(`/${ids.flag}`, { targetingKey: inKey })).json.metadata, { experimentKey: 'from-a-file' });
  t.notOk('experimentKey' in (await ofrep(`/${flagId}`, { targetingKey: inKey })).json.metadata, 'ended by the file');
  const again = await api('POST', '/api/v1/plan', (await api('GET', '/api/v1/export', undefined, secrets.read)).json, secrets.read);
  t.equal(again.json.changed, false, 'its own export plans no change');
});

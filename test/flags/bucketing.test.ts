// A flag's bucketing (issue 44) over the Management API, the Evaluation API and OFREP, against the real
// server: a flag made with "bucketing": "fractional" answers by flagd's fractional point, a modulo flag
// (made without choosing, or with "modulo") as design §2 always did, and its answers' bodies keep every
// byte they had; a write that would change a flag's bucketing is refused and changes nothing.
import t, { type Test } from 'tap';
import { bucket, fractionalBucket } from '../../src/evaluation/engine/bucket.js';
import { call, keptAliveCall } from '../helpers/http.js';
import { kEnvironmentEntryKeys, kFlatFlagKeys } from '../helpers/flag-keys.js';
import { refusedRequest } from '../helpers/refused.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const post = (token: string, body: unknown) => call(server.baseUrl, 'POST', '/api/v1/flags', { token, body });
const patch = (token: string, id: string, body: unknown, query = '') =>
  call(server.baseUrl, 'PATCH', `/api/v1/flags/${id}${query}`, { token, body });
const refused = (t: Test, status: number, request: () => Promise<{ status: number; json: any }>) =>
  refusedRequest(t, world, status, request);

/** 300 keys of every shape a caller sends: enough that the two functions disagree on some at 30%. */
const kKeys = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? `user-${i}` : i % 3 === 1 ? `${i}@example.com` : `k${i * 7919}`));

/** What the Evaluation API and OFREP answer for `key`; both must agree (2,400 pairs: kept-alive node:http). */
async function answers(t: Test, id: string, key: string, env: string | null): Promise<boolean> {
  const query = `targetingKey=${encodeURIComponent(key)}${env === null ? '' : `&env=${env}`}`;
  const evaluation = await keptAliveCall(server.baseUrl, 'GET', `/v1/flags/${id}?${query}`);
  t.equal(evaluation.status, 200);
  const ofrep = await keptAliveCall(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${id}`, {
    body: { context: { targetingKey: key, ...(env === null ? {} : { env }) } },
  });
  t.equal(ofrep.status, 200);
  if (ofrep.json.value !== evaluation.json.enabled) t.fail(`OFREP and the Evaluation API differ for ${key}`);
  return evaluation.json.enabled as boolean;
}

/** Checks every key's answer against `rule`; returns how many keys the other function would answer otherwise. */
async function checkAnswers(t: Test, id: string, percentage: number, env: string | null, fractional: boolean): Promise<number> {
  let wrong = 0;
  let differs = 0;
  for (const key of kKeys) {
    const expected = (fractional ? fractionalBucket(id, key) : bucket(id, key)) < percentage;
    const other = (fractional ? bucket(id, key) : fractionalBucket(id, key)) < percentage;
    if ((await answers(t, id, key, env)) !== expected) wrong++;
    if (other !== expected) differs++;
  }
  t.equal(wrong, 0, `every key answers by the ${fractional ? 'fractional' : 'modulo'} bucket`);
  return differs;
}

t.test("a fractional single flag answers by flagd's fractional point, and shows its bucketing", async (t) => {
  const r = await post(world.secrets.write, { name: 'frac', bucketing: 'fractional', enabled: true, trafficPercentage: 30 });
  t.equal(r.status, 201);
  t.same(Object.keys(r.json), ['id', 'name', 'kind', 'bucketing', ...kFlatFlagKeys.slice(3)], 'bucketing after kind');
  t.equal(r.json.bucketing, 'fractional');
  const got = await call(server.baseUrl, 'GET', `/api/v1/flags/${r.json.id}`, { token: world.secrets.read });
  t.same(got.json, r.json, 'GET shows what POST did');
  const listed = await call(server.baseUrl, 'GET', '/api/v1/flags?name=frac', { token: world.secrets.read });
  t.equal(listed.json.flags[0].bucketing, 'fractional', 'the list shows it');
  const differs = await checkAnswers(t, r.json.id, 30, null, true);
  t.ok(differs > 0, `design §2's modulo would answer ${differs} of ${kKeys.length} keys otherwise`);
  const patched = await patch(world.secrets.write, r.json.id, { trafficPercentage: 30, bucketing: 'fractional' });
  t.equal(patched.status, 200, 'its own bucketing may be repeated');
  t.same({ changed: patched.json.changed, bucketing: patched.json.flag.bucketing }, { changed: false, bucketing: 'fractional' });
});

t.test('a modulo flag answers by design §2, chosen or not, and its bodies are as before', async (t) => {
  for (const body of [{ name: 'mod-default' }, { name: 'mod-chosen', bucketing: 'modulo' }]) {
    const r = await post(world.secrets.write, { ...body, enabled: true, trafficPercentage: 30 });
    t.equal(r.status, 201);
    t.same(Object.keys(r.json), kFlatFlagKeys, `${body.name}: the representation's keys are the spec's, no bucketing`);
    await checkAnswers(t, r.json.id, 30, null, false);
    const patched = await patch(world.secrets.write, r.json.id, { bucketing: 'modulo' });
    t.same({ status: patched.status, changed: patched.json.changed }, { status: 200, changed: false });
    t.same(Object.keys(patched.json.flag), kFlatFlagKeys);
  }
  const existing = await call(server.baseUrl, 'GET', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.read });
  t.same(Object.keys(existing.json), kFlatFlagKeys, 'a flag made before bucketing existed');
  const list = await call(server.baseUrl, 'GET', '/api/v1/flags', { token: world.secrets.read });
  for (const f of list.json.flags) if (f.name !== 'frac') t.notOk(Object.hasOwn(f, 'bucketing'), `${f.name}: no bucketing`);
});

t.test('a fractional group flag: bucketing at the flag, both forms show it, every environment answers by it', async (t) => {
  const r = await post(world.secrets.multiWrite, {
    name: 'g-frac',
    bucketing: 'fractional',
    environments: { production: { enabled: true, trafficPercentage: 45 } },
  });
  t.equal(r.status, 201);
  t.equal(r.json.bucketing, 'fractional');
  t.same(Object.keys(r.json.environments.production), kEnvironmentEntryKeys, 'nothing per environment');
  const flat = await call(server.baseUrl, 'GET', `/api/v1/flags/${r.json.id}?env=production`, { token: world.secrets.multiRead });
  t.equal(flat.json.bucketing, 'fractional', 'the flat form shows it');
  await checkAnswers(t, r.json.id, 45, 'production', true);
  const perEnv = await refused(t, 400, () =>
    post(world.secrets.multiWrite, { name: 'g-frac-2', environments: { production: { bucketing: 'fractional' } } }),
  );
  t.match(perEnv.detail, /unknown field "environments\.production\.bucketing"/, 'a flag has one bucketing, not one per environment');
  const group = await call(server.baseUrl, 'GET', `/api/v1/flags/${world.ids.groupFlag}`, { token: world.secrets.multiRead });
  t.notOk(Object.hasOwn(group.json, 'bucketing'), 'a modulo group flag shows none');
});

t.test('a write that would change a bucketing is refused with why, and changes nothing', async (t) => {
  const frac = await post(world.secrets.write, { name: 'frac-fixed', bucketing: 'fractional', enabled: true, trafficPercentage: 10 });
  const toModulo = await refused(t, 400, () => patch(world.secrets.write, frac.json.id, { bucketing: 'modulo', trafficPercentage: 20 }));
  t.equal(toModulo.error, 'Invalid request');
  t.equal(
    toModulo.detail,
    '"bucketing": the flag\'s bucketing is "fractional" and cannot become "modulo": a flag\'s bucketing is fixed when the flag is made, since changing it would move users between buckets; make a new flag with "bucketing": "modulo" instead',
  );
  const toFractional = await refused(t, 400, () => patch(world.secrets.write, world.ids.flag, { bucketing: 'fractional', enabled: 'yes' }));
  t.match(toFractional.detail, /"enabled" must be true or false/, "reported with the body's other problems");
  t.match(toFractional.detail, /the flag's bucketing is "modulo" and cannot become "fractional".*move users between buckets/);
  const group = await refused(t, 400, () =>
    patch(world.secrets.multiWrite, world.ids.groupFlag, { bucketing: 'fractional' }, '?env=production'),
  );
  t.match(group.detail, /cannot become "fractional"/);
});

t.test('a value that is no bucketing is a clear 400', async (t) => {
  const created = await refused(t, 400, () => post(world.secrets.write, { name: 'bad-bucketing', bucketing: 'murmur' }));
  t.equal(created.detail, 'bucketing must be "modulo" (the default) or "fractional"');
  const patched = await refused(t, 400, () => patch(world.secrets.write, world.ids.flag, { bucketing: null }));
  t.equal(patched.detail, '"bucketing" cannot be null');
  const number = await refused(t, 400, () => patch(world.secrets.write, world.ids.flag, { bucketing: 1 }));
  t.equal(number.detail, '"bucketing" must be "modulo" (the default) or "fractional"');
});

t.test('the OpenAPI document names the field in the create, the patch and the representations', async (t) => {
  const doc = (await call(server.baseUrl, 'GET', '/api/v1/openapi.json')).json;
  const schemas = doc.components.schemas;
  for (const name of ['FlagCreate', 'FlagPatch'])
    t.same(
      schemas[name].properties.bucketing.anyOf.map((o: any) => o.const),
      ['modulo', 'fractional'],
      name,
    );
  for (const form of schemas.FlagRepresentation.anyOf) {
    t.equal(form.properties.bucketing.const, 'fractional', 'a representation names only fractional');
    t.notOk(form.required.includes('bucketing'), 'and only for such a flag');
  }
});

// A flag's lifecycle and archive through the Management API, black-box (issue 99, items 1 and 2; docs/api.md:
// Flag lifecycle): type, owner and lifetime on create and by PATCH .../lifecycle, shown where set and
// with defaults by GET .../lifecycle; an archived flag answers as no flag on every evaluation surface
// (Evaluation API, OFREP, flagd's flag sets, Unleash's client API), keeps its audit, keeps its name
// (a create of it is refused) until deleted for good, refuses changes of state, and serves again restored.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
const api = (method: string, path: string, body?: unknown, token = secrets.write) =>
  call(server.baseUrl, method, path, { token, ...(body === undefined ? {} : { body }) });

const made = await api('POST', '/api/v1/flags', {
  name: 'retiring',
  enabled: true,
  trafficPercentage: 100,
  type: 'kill-switch',
  owner: 'team-payments',
});
const id = made.json.id as string;

t.test('type, owner and lifetime: on create, shown where set, defaults resolved by .../lifecycle', async (t) => {
  t.equal(made.status, 201);
  t.match(made.json, { type: 'kill-switch', owner: 'team-payments' });
  t.notOk('lifetimeDays' in made.json, 'a lifetime not set is not shown on the flag');
  const lifecycle = await api('GET', `/api/v1/flags/${id}/lifecycle`);
  t.equal(lifecycle.status, 200);
  t.match(lifecycle.json, { id, name: 'retiring', type: 'kill-switch', owner: 'team-payments', lifetimeDays: 'permanent', stage: 'new' });
  t.equal(lifecycle.json.usageKnown, false, 'in-process evaluations are not reported yet: usage is not known');
  t.equal(lifecycle.json.codeReferences, null, 'never scanned');

  const old = await api('GET', `/api/v1/flags/${ids.flag}`);
  t.notOk('type' in old.json || 'owner' in old.json || 'archivedAt' in old.json, 'a flag made before keeps its representation');
  t.match((await api('GET', `/api/v1/flags/${ids.flag}/lifecycle`)).json, { type: 'release', owner: null, lifetimeDays: 40 });

  const patched = await api('PATCH', `/api/v1/flags/${id}/lifecycle`, { type: 'release', lifetimeDays: 7, owner: null });
  t.equal(patched.status, 200);
  t.match(patched.json, { type: 'release', lifetimeDays: 7, owner: null });
  t.notOk('owner' in (await api('GET', `/api/v1/flags/${id}`)).json, 'null returned the owner to none');
  const bad = await api('PATCH', `/api/v1/flags/${id}/lifecycle`, { type: 'forever', lifetimeDays: 0 });
  t.equal(bad.status, 400);
  t.match(bad.json.detail, /type/);
  t.match(bad.json.detail, /lifetimeDays/);
  const refused = await api('POST', '/api/v1/flags', { name: 'bad-type', type: 'forever' });
  t.equal(refused.status, 400);
});

/** What each evaluation surface says of the flag: found or not. */
async function surfaces() {
  const evaluation = await call(server.baseUrl, 'GET', `/v1/flags/${id}`);
  const ofrep = await call(server.baseUrl, 'POST', '/ofrep/v1/evaluate/flags/retiring', {
    headers: { 'x-flagwire-project': ids.single },
    body: { context: { targetingKey: 'u' } },
  });
  const flagd = await call(server.baseUrl, 'GET', `/v1/flag-sets/${ids.single}`, { token: secrets.read });
  const unleash = await call(server.baseUrl, 'GET', '/api/client/features', { headers: { authorization: secrets.read } });
  return {
    evaluation: evaluation.status,
    ofrep: ofrep.json.errorCode ?? ofrep.json.value,
    flagd: 'retiring' in flagd.json.flags,
    unleash: (unleash.json.features as { name: string }[]).some((f) => f.name === 'retiring'),
    listed: ((await api('GET', '/api/v1/flags')).json.flags as { id: string }[]).some((f) => f.id === id),
  };
}

t.test('archived: no evaluation surface serves it; kept, its name kept; restored, it serves again', async (t) => {
  t.same(await surfaces(), { evaluation: 200, ofrep: true, flagd: true, unleash: true, listed: true }, 'served before');

  const archived = await api('POST', `/api/v1/flags/${id}/archive`);
  t.equal(archived.status, 200);
  t.type(archived.json.archivedAt, 'number');
  t.same(
    await surfaces(),
    { evaluation: 404, ofrep: 'FLAG_NOT_FOUND', flagd: false, unleash: false, listed: false },
    'every surface answers as for no flag; the list leaves it out',
  );
  const kept = await api('GET', `/api/v1/flags/${id}`);
  t.equal(kept.status, 200, 'read by its id, it is still there');
  t.equal(kept.json.archivedAt, archived.json.archivedAt);
  t.match((await api('GET', `/api/v1/flags/${id}/lifecycle`)).json, { stage: 'archived' });
  t.match((await api('GET', '/api/v1/lifecycle?stage=archived')).json, { flags: [{ id, stage: 'archived' }] });
  t.same((await api('GET', '/api/v1/flags?name=retiring')).json, { flags: [] }, 'nor is it found by name in the list');
  t.equal((await api('POST', `/api/v1/flags/${id}/archive`)).status, 200, 'archiving again changes nothing');

  const reuse = await api('POST', '/api/v1/flags', { name: 'retiring' });
  t.equal(reuse.status, 400, 'its name is not free');
  t.match(reuse.json.detail, /archived/);
  const patch = await api('PATCH', `/api/v1/flags/${id}`, { enabled: false });
  t.equal(patch.status, 400, 'its state does not change while archived');
  t.match(patch.json.detail, /archived/);

  const restored = await api('POST', `/api/v1/flags/${id}/restore`);
  t.equal(restored.status, 200);
  t.notOk('archivedAt' in restored.json);
  t.same(await surfaces(), { evaluation: 200, ofrep: true, flagd: true, unleash: true, listed: true }, 'served again, as it was');

  const actions = world.store
    .listAudit(ids.single, { limit: 100, before: null })
    .filter((e) => e.flagId === id)
    .map((e) => e.action);
  for (const action of ['flag.create', 'flag.lifecycle', 'flag.archive', 'flag.restore'])
    t.ok(actions.includes(action), `${action} audited`);
});

t.test('deleted for good, the name is free again', async (t) => {
  const other = (await api('POST', '/api/v1/flags', { name: 'gone-for-good' })).json.id as string;
  t.equal((await api('POST', `/api/v1/flags/${other}/archive`)).status, 200);
  world.run('flagDelete', { flagId: other, principal: kOperator });
  t.equal((await api('POST', '/api/v1/flags', { name: 'gone-for-good' })).status, 201);
});

t.test('a token limited to some environments may not archive a flag of them all', async (t) => {
  const r = await api('POST', `/api/v1/flags/${ids.groupFlag}/archive`, undefined, secrets.stagingWrite);
  t.equal(r.status, 403);
  t.equal((await api('GET', `/api/v1/flags/${ids.groupFlag}`, undefined, secrets.multiRead)).json.archivedAt, undefined);
});

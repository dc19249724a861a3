// spec: GET /api/v1/flags, GET /api/v1/flags/{id}, Flag representation.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';

const { server, world } = await startWorldServer(t);
const get = (path: string, token: string) => call(server.baseUrl, 'GET', path, { token });

t.test('list: every flag of the project, flat form for single flags', async (t) => {
  const r = await get('/api/v1/flags', world.secrets.read);
  t.equal(r.status, 200);
  t.same(
    r.json.flags.map((f: { name: string }) => f.name),
    ['checkout', 'banner'],
  );
  const [checkout] = r.json.flags;
  t.match(checkout, {
    id: world.ids.flag,
    name: 'checkout',
    kind: 'flag',
    enabled: true,
    trafficPercentage: 50,
    cohorts: ['alice'],
    audienceId: null,
  });
  t.type(checkout.updatedAt, 'number');
  t.notOk('environments' in checkout);
  t.notOk('environment' in checkout);
  t.same(r.json.flags[1].cohorts, [], 'cohorts is [] when none');
});

t.test('list: ?name= is an exact filter; no match is an empty array', async (t) => {
  const r = await get('/api/v1/flags?name=banner', world.secrets.read);
  t.same(
    r.json.flags.map((f: { id: string }) => f.id),
    [world.ids.flag2],
  );
  t.same((await get('/api/v1/flags?name=Banner', world.secrets.read)).json, { flags: [] });
  t.same((await get('/api/v1/flags?name=ban', world.secrets.read)).json, { flags: [] });
});

t.test('list: group flags in environments form with effective cohorts', async (t) => {
  const r = await get('/api/v1/flags', world.secrets.multiRead);
  t.equal(r.status, 200);
  const [flag] = r.json.flags;
  t.equal(flag.kind, 'groupflag');
  t.notOk('enabled' in flag, 'no flat state in environments form');
  t.same(flag.environments.staging, {
    enabled: true,
    trafficPercentage: 100,
    cohorts: ['wide-1', 'wide-2'],
    audienceId: null,
    updatedAt: flag.updatedAt,
  });
  t.same(flag.environments.production, {
    enabled: false,
    trafficPercentage: 0,
    cohorts: ['qa'],
    audienceId: null,
    updatedAt: flag.updatedAt,
  });
});

t.test('list: ?env= gives group flags in flat form for that environment', async (t) => {
  const r = await get('/api/v1/flags?env=production', world.secrets.multiRead);
  t.equal(r.status, 200);
  t.match(r.json.flags[0], { kind: 'groupflag', environment: 'production', cohorts: ['qa'], enabled: false });
  const single = await get('/api/v1/flags?env=staging', world.secrets.read);
  t.equal(single.status, 400, 'single project: drop env');
  t.equal(single.json.error, 'Invalid request');
  t.equal(
    single.json.detail,
    'This project is a single-environment project, which has no environments; drop the "env" query parameter.',
    'worded for the list, not a flag',
  );
});

t.test('get: single flag flat; group flag environments form, or flat with ?env=', async (t) => {
  const single = await get(`/api/v1/flags/${world.ids.flag}`, world.secrets.read);
  t.equal(single.status, 200);
  t.equal(single.json.id, world.ids.flag);
  const group = await get(`/api/v1/flags/${world.ids.groupFlag}`, world.secrets.multiRead);
  t.same(Object.keys(group.json.environments), ['staging', 'production']);
  const flat = await get(`/api/v1/flags/${world.ids.groupFlag}?env=staging`, world.secrets.multiRead);
  t.match(flat.json, {
    id: world.ids.groupFlag,
    kind: 'groupflag',
    environment: 'staging',
    enabled: true,
    trafficPercentage: 100,
    cohorts: ['wide-1', 'wide-2'],
    audienceId: null,
  });
  t.notOk('environments' in flat.json);
});

t.test('get: env on a single-environment project is a 400 telling to drop it', async (t) => {
  const r = await get(`/api/v1/flags/${world.ids.flag}?env=production`, world.secrets.read);
  t.equal(r.status, 400);
  t.equal(r.json.error, 'Invalid request');
  t.equal(r.json.detail, 'This flag belongs to a single-environment project, which has no environments; drop the "env" query parameter.');
});

t.test('get: an unknown environment is a 400 listing the valid ones', async (t) => {
  const r = await get(`/api/v1/flags/${world.ids.groupFlag}?env=prod`, world.secrets.multiRead);
  t.equal(r.status, 400);
  t.match(r.json.detail, /"prod"/);
  t.match(r.json.detail, /staging, production/);
});

t.test("get: 404 for an unknown id and for another project's flag, byte-identical", async (t) => {
  const other = await get(`/api/v1/flags/${world.ids.flagB}`, world.secrets.read);
  t.equal(other.status, 404);
  t.equal(other.json.error, 'Not found');
  t.equal(other.json.detail, 'No flag with that id exists in this project.');
  const unknown = await get('/api/v1/flags/flg_doesNotExist01', world.secrets.read);
  t.equal(unknown.status, 404);
  t.equal(unknown.text, other.text, 'identical bytes');
  const patch = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${world.ids.flagB}`, {
    token: world.secrets.write,
    body: { enabled: false },
  });
  t.equal(patch.status, 404);
  t.equal(patch.text, other.text, 'PATCH gives the same bytes');
});

t.test('environments is {} for a multi-environment project without environments', async (t) => {
  const projectId = world.run('projectCreate', { principal: kOperator, name: 'Empty', orgId: world.ids.orgA, kind: 'multi' }).id;
  const token = world.run('tokenCreate', { projectId, principal: principalOf(world.ids.owner), name: 'empty', permission: 'write' });
  const created = await call(server.baseUrl, 'POST', '/api/v1/flags', { token: token.secret, body: { name: 'lonely' } });
  t.equal(created.status, 201);
  t.same(created.json.environments, {});
});

t.test('unknown paths under /api/v1 are 404 Not found in the envelope', async (t) => {
  for (const [method, path] of [
    ['GET', '/api/v1/nope'],
    ['GET', '/api/v1/flags/a/b'],
    ['DELETE', `/api/v1/flags/${world.ids.flag}`],
    ['PUT', '/api/v1/flags'],
    ['GET', '/api/v1/'],
  ]) {
    const r = await call(server.baseUrl, method!, path!, { token: world.secrets.write });
    t.equal(r.status, 404, `${method} ${path}`);
    t.equal(r.json.error, 'Not found');
    t.match(r.json.docs, /#not-found$/);
  }
});

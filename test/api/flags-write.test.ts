// spec: POST /api/v1/flags, PATCH /api/v1/flags/{id}, audit side effects, "bad input changes nothing".
// A body over the limit: body-limit.test.ts; CORS: cors.test.ts.
import t, { type Test } from 'tap';
import { call } from '../helpers/http.js';
import { refusedRequest } from '../helpers/refused.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const post = (token: string, body: unknown) => call(server.baseUrl, 'POST', '/api/v1/flags', { token, body });
const patch = (token: string, id: string, body: unknown, query = '') =>
  call(server.baseUrl, 'PATCH', `/api/v1/flags/${id}${query}`, { token, body });
const audit = (projectId: string) => {
  world.store.resetReadTxn();
  return world.store.listAudit(projectId, { limit: 100, before: null });
};

/** Sends a request that must be refused and checks that no record changed. */
const refused = (t: Test, status: number, request: () => Promise<{ status: number; json: any }>) =>
  refusedRequest(t, world, status, request);

t.test('create on a single-environment project: defaults and 201 with the representation', async (t) => {
  const r = await post(world.secrets.write, { name: 'fresh', description: 'd', tags: ['x', 'x', 'y'] });
  t.equal(r.status, 201);
  t.match(r.json, {
    name: 'fresh',
    kind: 'flag',
    enabled: false,
    trafficPercentage: 0,
    cohorts: [],
    audienceId: null,
    description: 'd',
    tags: ['x', 'y'],
  });
  const got = await call(server.baseUrl, 'GET', `/api/v1/flags/${r.json.id}`, { token: world.secrets.read });
  t.same(got.json, r.json, 'GET returns what POST returned');
  const entry = audit(world.ids.single)[0]!;
  t.match(entry, { actor: `token:${world.tokenIds.write}`, actorName: 'ci-write', action: 'flag.create', flagId: r.json.id });
});

t.test('create with full state and an audience of the project', async (t) => {
  const r = await post(world.secrets.write, {
    name: 'full',
    enabled: true,
    trafficPercentage: 100,
    cohorts: ['a'],
    audienceId: world.ids.audience,
  });
  t.equal(r.status, 201);
  t.match(r.json, { enabled: true, trafficPercentage: 100, cohorts: ['a'], audienceId: world.ids.audience });
});

t.test('create on a multi-environment project: left-out environments start at defaults', async (t) => {
  const r = await post(world.secrets.multiWrite, {
    name: 'g-new',
    environments: { staging: { enabled: true, trafficPercentage: 30, cohorts: ['s'] }, production: {} },
  });
  t.equal(r.status, 201);
  t.equal(r.json.kind, 'groupflag');
  t.match(r.json.environments.staging, { enabled: true, trafficPercentage: 30, cohorts: ['s'], audienceId: null });
  t.match(r.json.environments.production, { enabled: false, trafficPercentage: 0, cohorts: [], audienceId: null });
  const bare = await post(world.secrets.multiWrite, { name: 'g-bare' });
  t.same(Object.keys(bare.json.environments), ['staging', 'production']);
});

t.test('create: an empty body says it is empty and a JSON object must be sent', async (t) => {
  const json = await refused(t, 400, () => call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.write, raw: '' }));
  t.equal(json.error, 'Invalid request');
  t.match(json.detail, /request body is empty/);
  t.match(json.detail, /JSON object/);
});

t.test('create: malformed JSON, non-object bodies and wrong content type are 400 with a fix', async (t) => {
  const send = (raw: string, contentType = 'application/json') =>
    call(server.baseUrl, 'POST', '/api/v1/flags', { token: world.secrets.write, raw, headers: { 'content-type': contentType } });
  t.match((await refused(t, 400, () => send('{"name":'))).detail, /not valid JSON/);
  t.match((await refused(t, 400, () => send('[1,2]'))).detail, /must be a JSON object, not an array/);
  t.match((await refused(t, 400, () => send('null'))).detail, /not null/);
  t.match((await refused(t, 400, () => send('"x"'))).detail, /not a string/);
  t.match((await refused(t, 400, () => send('{"name":"ct"}', 'text/plain'))).detail, /Content-Type must be application\/json/);
  t.equal((await send('{"name":"ct-ok"}', 'application/json; charset=utf-8')).status, 201, 'charset parameter is fine');
});

t.test('create: every body problem reported together with its path', async (t) => {
  const json = await refused(t, 400, () =>
    post(world.secrets.multiWrite, {
      environments: { staging: { trafficPercentage: 101, enabled: 'yes' }, production: { cohorts: 'qa' } },
      colour: 1,
    }),
  );
  t.equal(json.error, 'Invalid request');
  for (const part of [
    'name is required',
    'unknown field "colour"',
    'environments.staging.trafficPercentage must be a whole number between 0 and 100',
    'environments.staging.enabled must be true or false',
    'environments.production.cohorts must be an array',
  ])
    t.match(json.detail, part);
  t.equal(json.detail.split('; ').length, 5);
});

t.test('create: flat state on a multi project and environments on a single project name the fix', async (t) => {
  const flat = await refused(t, 400, () => post(world.secrets.multiWrite, { name: 'x', enabled: true }));
  t.match(flat.detail, /multi-environment project: move enabled under "environments"/);
  const envs = await refused(t, 400, () => post(world.secrets.write, { name: 'x', environments: { prod: {} } }));
  t.match(envs.detail, /single-environment project: drop "environments"/);
  const unknownEnv = await refused(t, 400, () => post(world.secrets.multiWrite, { name: 'x', environments: { prod: {} } }));
  t.match(unknownEnv.detail, /environments\.prod is not an environment of this project \(valid environments: staging, production\)/);
});

t.test("create: an audience that is not the project's is a 400", async (t) => {
  const json = await refused(t, 400, () => post(world.secrets.write, { name: 'x', audienceId: world.ids.audienceB }));
  t.equal(json.detail, `Audience "${world.ids.audienceB}" does not exist on this project.`);
  const nested = await refused(t, 400, () =>
    post(world.secrets.multiWrite, { name: 'x', environments: { staging: { audienceId: 'aud_nope' } } }),
  );
  t.equal(nested.detail, 'Audience "aud_nope" does not exist on this project.');
});

t.test("create: schema problems and the project's problems are reported together", async (t) => {
  const flat = await refused(t, 400, () => post(world.secrets.multiWrite, { name: 'x', enabled: 'yes', trafficPercentage: 10 }));
  t.equal(flat.error, 'Invalid request');
  t.equal(
    flat.detail,
    [
      'enabled must be true or false',
      'this is a multi-environment project: move enabled, trafficPercentage under "environments" (for example {"environments": {"staging": {"enabled": true}}})',
    ].join('; '),
  );
  const audience = await refused(t, 400, () => post(world.secrets.write, { trafficPercentage: 500, audienceId: 'aud_nope' }));
  t.equal(
    audience.detail,
    [
      'name is required',
      'trafficPercentage must be a whole number between 0 and 100',
      'Audience "aud_nope" does not exist on this project.',
    ].join('; '),
  );
  const unknownEnv = await refused(t, 400, () =>
    post(world.secrets.multiWrite, { name: 'x', environments: { prod: { trafficPercentage: 500 } } }),
  );
  t.equal(
    unknownEnv.detail,
    [
      'environments.prod.trafficPercentage must be a whole number between 0 and 100',
      'environments.prod is not an environment of this project (valid environments: staging, production)',
    ].join('; '),
  );
  const everything = await refused(t, 400, () =>
    post(world.secrets.multiWrite, {
      name: 'search',
      colour: 1,
      cohorts: ['a'],
      environments: { staging: { enabled: 'on', audienceId: 'aud_nope' }, qa: {} },
    }),
  );
  t.equal(
    everything.detail,
    [
      'unknown field "colour"',
      'environments.staging.enabled must be true or false',
      'this is a multi-environment project: move cohorts under "environments" (for example {"environments": {"staging": {"enabled": true}}})',
      'environments.qa is not an environment of this project (valid environments: staging, production)',
      'Audience "aud_nope" does not exist on this project.',
      'a flag named "search" already exists in this project',
    ].join('; '),
  );
  const single = await refused(t, 400, () => post(world.secrets.write, { name: 'x', environments: { prod: { enabled: 1 } } }));
  t.equal(
    single.detail,
    [
      'environments.prod.enabled must be true or false',
      'this is a single-environment project: drop "environments" and send enabled, trafficPercentage, cohorts and audienceId at the top level',
    ].join('; '),
  );
});

t.test('create: a body problem is a 400 even for an environment the token may not change; a valid one is the 403', async (t) => {
  const bad = await refused(t, 400, () =>
    post(world.secrets.stagingWrite, { name: 'x', environments: { production: { trafficPercentage: 500 } } }),
  );
  t.equal(bad.detail, 'environments.production.trafficPercentage must be a whole number between 0 and 100');
  const denied = await refused(t, 403, () =>
    post(world.secrets.stagingWrite, { name: 'x', environments: { production: { trafficPercentage: 50 } } }),
  );
  t.equal(denied.error, 'Forbidden');
});

t.test('create: a duplicate name in the project is refused', async (t) => {
  const json = await refused(t, 400, () => post(world.secrets.write, { name: 'checkout' }));
  t.match(json.detail, /already exists/);
  t.equal((await post(world.secrets.writeB, { name: 'banner' })).status, 201, 'names are per project');
});

t.test('patch: a real change is 200 changed:true, moves updatedAt and writes one audit entry', async (t) => {
  const before = (await call(server.baseUrl, 'GET', `/api/v1/flags/${world.ids.flag}`, { token: world.secrets.read })).json;
  const auditBefore = audit(world.ids.single).length;
  const r = await patch(world.secrets.write, world.ids.flag, { enabled: false, trafficPercentage: 75 });
  t.equal(r.status, 200);
  t.equal(r.json.changed, true);
  t.match(r.json.flag, { id: world.ids.flag, enabled: false, trafficPercentage: 75, cohorts: ['alice'], audienceId: null });
  t.ok(r.json.flag.updatedAt > before.updatedAt, 'updatedAt increases');
  const entries = audit(world.ids.single);
  t.equal(entries.length, auditBefore + 1);
  t.match(entries[0], {
    actor: `token:${world.tokenIds.write}`,
    actorName: 'ci-write',
    action: 'flag.patch',
    flagId: world.ids.flag,
    changes: { enabled: { before: true, after: false }, trafficPercentage: { before: 50, after: 75 } },
  });
});

t.test('patch: repeating it is changed:false and writes nothing', async (t) => {
  const first = await patch(world.secrets.write, world.ids.flag, { cohorts: ['bob', 'carol'] });
  t.equal(first.json.changed, true);
  const before = world.snapshot();
  const again = await patch(world.secrets.write, world.ids.flag, { cohorts: ['carol', 'bob'] });
  t.equal(again.status, 200);
  t.equal(again.json.changed, false);
  t.same(again.json.flag, first.json.flag, 'current flag returned, same updatedAt');
  t.equal(world.snapshot(), before, 'no updatedAt change, no audit entry');
});

t.test('patch rules 2, 3, 8, 9: null, unknown keys, empty bodies, all problems joined', async (t) => {
  const id = world.ids.flag;
  const nulls = await refused(t, 400, () => patch(world.secrets.write, id, { enabled: null }));
  t.equal(nulls.detail, '"enabled" cannot be null');
  const unknown = await refused(t, 400, () => patch(world.secrets.write, id, { name: 'renamed' }));
  t.equal(unknown.detail, 'unknown field "name"');
  for (const raw of ['', '{}']) {
    const empty = await refused(t, 400, () => call(server.baseUrl, 'PATCH', `/api/v1/flags/${id}`, { token: world.secrets.write, raw }));
    t.match(empty.detail, /no fields to update/i);
    for (const key of ['enabled', 'trafficPercentage', 'cohorts', 'audienceId']) t.match(empty.detail, `"${key}"`);
  }
  const many = await refused(t, 400, () => patch(world.secrets.write, id, { trafficPercentage: 150, cohorts: null, colour: 'x' }));
  t.equal(many.detail, 'unknown field "colour"; "trafficPercentage" must be a whole number between 0 and 100; "cohorts" cannot be null');
});

t.test('patch rule 9: query, schema and audience problems in one detail', async (t) => {
  const body = await refused(t, 400, () => patch(world.secrets.write, world.ids.flag, { audienceId: 'aud_nope', trafficPercentage: 500 }));
  t.equal(body.error, 'Invalid request');
  t.equal(body.detail, '"trafficPercentage" must be a whole number between 0 and 100; Audience "aud_nope" does not exist on this project.');
  const group = world.ids.groupFlag;
  const missing = await refused(t, 400, () =>
    patch(world.secrets.multiWrite, group, { trafficPercentage: 500, audienceId: 'aud_nope', colour: 1 }),
  );
  t.equal(
    missing.detail,
    [
      'This flag belongs to a multi-environment project: add the "env" query parameter (valid environments: staging, production).',
      'unknown field "colour"',
      '"trafficPercentage" must be a whole number between 0 and 100',
      'Audience "aud_nope" does not exist on this project.',
    ].join('; '),
  );
  const unknown = await refused(t, 400, () => patch(world.secrets.multiWrite, group, { enabled: 'yes' }, '?env=qa'));
  t.equal(unknown.detail, 'Unknown environment "qa"; valid environments: staging, production.; "enabled" must be true or false');
  const single = await refused(t, 400, () => patch(world.secrets.write, world.ids.flag, { cohorts: null }, '?env=staging'));
  t.equal(
    single.detail,
    'This flag belongs to a single-environment project, which has no environments; drop the "env" query parameter.; "cohorts" cannot be null',
  );
  const notJson = await refused(t, 400, () =>
    call(server.baseUrl, 'PATCH', `/api/v1/flags/${group}`, { token: world.secrets.multiWrite, raw: '{"enabled":' }),
  );
  t.match(
    notJson.detail,
    /^This flag belongs to a multi-environment project: add the "env" query parameter .*; The request body is not valid JSON/,
  );
  for (const raw of ['', '{}']) {
    const empty = await refused(t, 400, () =>
      call(server.baseUrl, 'PATCH', `/api/v1/flags/${group}`, { token: world.secrets.multiWrite, raw }),
    );
    t.match(empty.detail, /add the "env" query parameter/);
    t.match(empty.detail, /no fields to update/i);
    for (const key of ['enabled', 'trafficPercentage', 'cohorts', 'audienceId']) t.match(empty.detail, `"${key}"`);
  }
});

t.test('patch: 404 and 403 keep precedence over 400 problems', async (t) => {
  const bad = { trafficPercentage: 500, colour: 1 };
  const known404 = (await call(server.baseUrl, 'GET', '/api/v1/flags/flg_doesNotExist01', { token: world.secrets.read })).json;
  // An id that exists nowhere, another project's single flag, another project's group flag.
  for (const [id, query] of [
    ['flg_doesNotExist01', '?env=qa'],
    [world.ids.flagB, ''],
    [world.ids.groupFlag, '?env=qa'],
  ] as const) {
    const r = await refused(t, 404, () =>
      call(server.baseUrl, 'PATCH', `/api/v1/flags/${id}${query}`, { token: world.secrets.write, body: bad }),
    );
    t.same(r, known404, `${id}${query}: the 404 of an unknown flag`);
  }
  const denied = await refused(t, 403, () => patch(world.secrets.stagingWrite, world.ids.groupFlag, bad, '?env=production'));
  t.equal(denied.error, 'Environment not permitted');
});

t.test('patch rules 5 and 10: audienceId attaches, null detaches, unknown is 400', async (t) => {
  const id = world.ids.flag2;
  const on = await patch(world.secrets.write, id, { audienceId: world.ids.audience });
  t.equal(on.json.flag.audienceId, world.ids.audience);
  const bad = await refused(t, 400, () => patch(world.secrets.write, id, { audienceId: 'aud_missing' }));
  t.equal(bad.detail, 'Audience "aud_missing" does not exist on this project.');
  const other = await refused(t, 400, () => patch(world.secrets.write, id, { audienceId: world.ids.audienceB }));
  t.equal(other.detail, `Audience "${world.ids.audienceB}" does not exist on this project.`);
  const off = await patch(world.secrets.write, id, { audienceId: null });
  t.equal(off.json.changed, true);
  t.equal(off.json.flag.audienceId, null);
});

t.test('patch on a group flag: env required, per environment, flat result', async (t) => {
  const id = world.ids.groupFlag;
  const missing = await refused(t, 400, () => patch(world.secrets.multiWrite, id, { enabled: true }));
  t.match(missing.detail, /add the "env" query parameter/);
  const unknown = await refused(t, 400, () => patch(world.secrets.multiWrite, id, { enabled: true }, '?env=qa'));
  t.match(unknown.detail, /valid environments: staging, production/);
  const single = await refused(t, 400, () => patch(world.secrets.write, world.ids.flag, { enabled: true }, '?env=staging'));
  t.match(single.detail, /drop the "env" query parameter/);
  const r = await patch(world.secrets.multiWrite, id, { enabled: true, audienceId: world.ids.multiAudience }, '?env=production');
  t.equal(r.status, 200);
  t.match(r.json.flag, { environment: 'production', enabled: true, audienceId: world.ids.multiAudience, cohorts: ['qa'] });
  t.notOk('environments' in r.json.flag);
});

t.test('patch on a group flag: cohorts [] removes the override and shows the inherited list', async (t) => {
  const id = world.ids.groupFlag;
  const r = await patch(world.secrets.multiWrite, id, { cohorts: [] }, '?env=production');
  t.equal(r.json.changed, true);
  t.same(r.json.flag.cohorts, ['wide-1', 'wide-2']);
  const again = await patch(world.secrets.multiWrite, id, { cohorts: [] }, '?env=production');
  t.equal(again.json.changed, false, 'an empty list always means inherit');
  const inherited = await patch(world.secrets.multiWrite, id, { cohorts: ['wide-2', 'wide-1'] }, '?env=staging');
  t.equal(inherited.json.changed, false, 'the inherited list creates no override');
  const own = await patch(world.secrets.multiWrite, id, { cohorts: ['beta'] }, '?env=staging');
  t.equal(own.json.changed, true);
  t.same(own.json.flag.cohorts, ['beta']);
  const full = await call(server.baseUrl, 'GET', `/api/v1/flags/${id}`, { token: world.secrets.multiRead });
  t.same(full.json.environments.staging.cohorts, ['beta']);
  t.same(full.json.environments.production.cohorts, ['wide-1', 'wide-2']);
});

t.test('patch on a group flag: the audit entry names the environment; other environments are unchanged', async (t) => {
  const id = world.ids.groupFlag;
  const read = async () => (await call(server.baseUrl, 'GET', `/api/v1/flags/${id}`, { token: world.secrets.multiRead })).json;
  const withoutTime = ({ updatedAt: _, ...state }: { updatedAt: number }) => state;
  const before = await read();
  t.equal(before.environments.staging.audienceId, null);
  const r = await patch(world.secrets.multiWrite, id, { audienceId: world.ids.multiAudience }, '?env=staging');
  t.equal(r.json.changed, true);
  const after = await read();
  t.equal(after.environments.staging.audienceId, world.ids.multiAudience);
  t.same(
    withoutTime(after.environments.staging),
    { ...withoutTime(before.environments.staging), audienceId: world.ids.multiAudience },
    'only audienceId changed in staging',
  );
  t.same(withoutTime(after.environments.production), withoutTime(before.environments.production), 'production unchanged');
  const [entry] = audit(world.ids.multi);
  t.strictSame(
    {
      actor: entry!.actor,
      actorName: entry!.actorName,
      action: entry!.action,
      flagId: entry!.flagId,
      env: entry!.env,
      changes: entry!.changes,
    },
    {
      actor: `token:${world.tokenIds.multiWrite}`,
      actorName: 'platform-write',
      action: 'flag.patch',
      flagId: id,
      env: 'staging',
      changes: { audienceId: { before: null, after: world.ids.multiAudience } },
    },
  );
});

t.test("a token of project A can neither read nor change project B's flags", async (t) => {
  const before = world.snapshot();
  for (const [method, body] of [
    ['GET', undefined],
    ['PATCH', { enabled: false }],
  ] as const) {
    const r = await call(server.baseUrl, method, `/api/v1/flags/${world.ids.flagB}`, { token: world.secrets.write, body });
    t.equal(r.status, 404, method);
  }
  const list = await call(server.baseUrl, 'GET', '/api/v1/flags', { token: world.secrets.write });
  t.notOk(
    list.json.flags.some((f: { id: string }) => f.id === world.ids.flagB),
    'not listed',
  );
  t.equal(world.snapshot(), before);
});

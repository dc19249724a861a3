// Black-box: GET /v1/snapshots/{project_id}[?env=] (src/snapshots/routes.ts) on a real server. What the
// snapshot holds (each flag's state in the environment, its bucketing, typed variants, the audiences
// its states name, the plan, the revision), ETag and 304, and the Management API's token rules: a read
// token of the project, its environment limit honoured, another project's id not found, refusals in the
// spec's envelope and on the token's activity.
import { rmSync } from 'node:fs';
import t from 'tap';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import { flushActivity } from '../helpers/test-hooks.js';
import { principalOf } from '../../src/actor/audit-actor.js';
import { getActivity } from '../../src/model/records/token-records.js';

const world = buildEvalWorld();
const { ids } = world;
const readToken = world.run('tokenCreate', {
  projectId: ids.single,
  principal: principalOf(ids.owner),
  name: 'snapshot',
  permission: 'read',
});
const multiRead = world.run('tokenCreate', {
  projectId: ids.multi,
  principal: principalOf(ids.owner),
  name: 'snapshot',
  permission: 'read',
}).secret;
const stagingOnly = world.run('tokenCreate', {
  projectId: ids.multi,
  principal: principalOf(ids.owner),
  name: 'staging only',
  permission: 'read',
  environments: ['staging'],
}).secret;
const typed = world.run('flagCreate', {
  projectId: ids.single,
  principal: { kind: 'operator' },
  body: {
    name: 'colour',
    enabled: true,
    trafficPercentage: 100,
    variants: { red: '#d33', green: '#2a2' },
    defaultVariant: 'red',
    targeting: { if: [{ '==': [{ var: 'plan' }, 'beta'] }, 'green', null] },
  },
}).id;
const server = await startTestServer({ dataDir: world.dataDir, env: { FLAGWIRE_TEST_HOOKS: '1' } });
t.teardown(async () => {
  await server.stop();
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});
const get = (path: string, token: string | undefined, headers: Record<string, string> = {}) =>
  call(server.baseUrl, 'GET', path, { token, headers });

t.test("a single-environment project: every flag's state, the audiences they name, the plan and the revision", async (t) => {
  const res = await get(`/v1/snapshots/${ids.single}`, readToken.secret);
  t.equal(res.status, 200, res.text);
  const body = res.json;
  t.equal(body.projectId, ids.single);
  t.equal(body.environment, null);
  t.equal(body.audiencesAllowed, true);
  t.equal(body.audiencesUntil, null, 'a Teams plan: no end by the clock');
  t.equal(body.revision, Number(res.headers.get('flagwire-revision')), 'the revision it was read at');
  t.same(
    body.flags.map((f: { name: string }) => f.name),
    ['on', 'off', 'half', 'zero', 'aud', 'aud-half', 'colour'],
    'in creation order',
  );
  const half = body.flags.find((f: { id: string }) => f.id === ids.half);
  t.same(half.state, { enabled: true, trafficPercentage: 50, audienceId: null, cohorts: ['alice', 'bob'] });
  t.notOk('bucketing' in half, "design §2's bucketing: absent");
  const colour = body.flags.find((f: { id: string }) => f.id === typed);
  t.same(colour.state.typed.variants, { red: '#d33', green: '#2a2' });
  t.equal(colour.state.typed.defaultVariant, 'red');
  t.same(body.audiences, [
    {
      id: ids.audience,
      name: 'Beta NL',
      updatedAt: body.audiences[0].updatedAt,
      rules: [
        { attribute: 'plan', values: ['beta', 'alpha'] },
        { attribute: 'country', values: ['NL'] },
      ],
    },
  ]);
});

t.test('a multi-environment project: the environment asked for, with effective cohorts', async (t) => {
  const prod = await get(`/v1/snapshots/${ids.multi}?env=production`, multiRead);
  t.equal(prod.status, 200, prod.text);
  t.equal(prod.json.environment, 'production');
  const group = prod.json.flags.find((f: { id: string }) => f.id === ids.group);
  t.same(group.state, { enabled: true, trafficPercentage: 0, audienceId: null, cohorts: ['qa'] }, "production's own cohorts");
  const staging = await get(`/v1/snapshots/${ids.multi}?env=staging`, multiRead);
  t.same(
    staging.json.flags.find((f: { id: string }) => f.id === ids.group).state.cohorts,
    ['wide-1', 'wide-2'],
    'staging inherits the flag-wide list',
  );
  t.same(staging.json.audiences, [], 'only the audiences its states name (production names one, staging none)');
  const dev = await get(`/v1/snapshots/${ids.multi}?env=dev`, multiRead);
  t.same(dev.json.flags.find((f: { id: string }) => f.id === ids.group).state.enabled, false, 'an environment never set: its defaults');
});

t.test('ETag and If-None-Match: 304 while the content is the same, 200 once it changes', async (t) => {
  const first = await get(`/v1/snapshots/${ids.single}`, readToken.secret);
  const tag = first.headers.get('etag')!;
  t.match(tag, /^"snapshot-[0-9a-f]{16}"$/);
  const again = await get(`/v1/snapshots/${ids.single}`, readToken.secret, { 'if-none-match': tag });
  t.equal(again.status, 304);
  t.equal(again.text, '', 'no body');
  t.equal(again.headers.get('etag'), tag);
  t.ok(again.headers.get('flagwire-revision'), 'Flagwire-Revision on a 304 too');
  const patched = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.zero}`, {
    token: world.writeToken,
    body: { trafficPercentage: 5 },
  });
  t.equal(patched.status, 200, patched.text);
  const changed = await get(`/v1/snapshots/${ids.single}`, readToken.secret, { 'if-none-match': tag });
  t.equal(changed.status, 200);
  t.not(changed.headers.get('etag'), tag);
  t.equal(changed.json.flags.find((f: { id: string }) => f.id === ids.zero).state.trafficPercentage, 5);
  t.ok(changed.json.revision >= Number(patched.headers.get('flagwire-revision')), 'at or after the change');
});

t.test("the Management API's token rules, refusals in the spec's envelope", async (t) => {
  const missing = await get(`/v1/snapshots/${ids.single}`, undefined);
  t.equal(missing.status, 401);
  t.match(missing.json, { error: String, detail: /Authorization: Bearer/ });
  t.equal((await get(`/v1/snapshots/${ids.single}`, 'fw_notarealtokennotarealtoken')).status, 401);
  const other = await get(`/v1/snapshots/${ids.multi}?env=staging`, readToken.secret);
  t.equal(other.status, 404, "another project's id");
  t.same(other.json.detail, `No project with id "${ids.multi}" exists.`);
  const noEnv = await get(`/v1/snapshots/${ids.multi}`, multiRead);
  t.equal(noEnv.status, 400);
  t.match(noEnv.json.detail, /add the "env" query parameter \(valid environments: staging, production, dev\)/);
  const unknownEnv = await get(`/v1/snapshots/${ids.multi}?env=qa`, multiRead);
  t.equal(unknownEnv.status, 400);
  t.match(unknownEnv.json.detail, /Unknown environment "qa"/);
  const singleEnv = await get(`/v1/snapshots/${ids.single}?env=production`, readToken.secret);
  t.equal(singleEnv.status, 400, 'a single-environment project has none');
  t.equal((await get(`/v1/snapshots/${ids.multi}?env=staging`, stagingOnly)).status, 200);
  const limited = await get(`/v1/snapshots/${ids.multi}?env=production`, stagingOnly);
  t.equal(limited.status, 403);
  t.match(limited.json.detail, /may not access environment "production"/);
  t.equal((await get(`/v1/snapshots/${ids.single}?token=x`, readToken.secret)).status, 400, 'never a token in the URL');
});

t.test("requests count on the token's activity, refusals as denials", async (t) => {
  await get(`/v1/snapshots/${ids.single}`, readToken.secret);
  const limitedToken = world.run('tokenCreate', {
    projectId: ids.multi,
    principal: principalOf(ids.owner),
    name: 'limited for activity',
    permission: 'read',
    environments: ['dev'],
  });
  // A token made after the server started: the server reads the same store.
  await get(`/v1/snapshots/${ids.multi}?env=production`, limitedToken.secret);
  await flushActivity(server);
  world.store.resetReadTxn();
  t.match(getActivity(world.store, readToken.id)!.recent[0], { method: 'GET', path: `/v1/snapshots/${ids.single}`, status: 200 });
  const denied = getActivity(world.store, limitedToken.id)!;
  t.match(denied.recent[0], { status: 403 });
  t.match(denied.denials[0], { reason: /may not access environment "production"/, path: `/v1/snapshots/${ids.multi}` });
});

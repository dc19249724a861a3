// Black-box: GET /v1/flag-sets/{project_id}[?env=NAME], the sync service's flag set over HTTP (issue
// 44, item 1): a token of the project, ETag and If-None-Match, Flagwire-Revision, the environment limit,
// and every refusal in the Management API's envelope and words.
import t, { type Test } from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { call, type Reply } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
const flagSet = (path: string, token?: string, headers: Record<string, string> = {}) =>
  call(server.baseUrl, 'GET', `/v1/flag-sets/${path}`, { ...(token === undefined ? {} : { token }), headers });

function refusedWith(t: Test, r: Reply, status: number, error: string, detail?: RegExp): void {
  t.equal(r.status, status, `${status} ${error}`);
  t.equal(r.json.error, error);
  if (detail !== undefined) t.match(r.json.detail, detail);
  t.match(r.json.docs, /\/docs#/);
  t.match(r.headers.get('flagwire-revision'), /^\d+$/);
}

t.test('the set, its ETag and Flagwire-Revision; 304 while it holds; a change moves both', async (t) => {
  const first = await flagSet(ids.single, secrets.read);
  t.equal(first.status, 200);
  t.match(first.headers.get('content-type'), 'application/json');
  const set = first.json;
  t.equal(set.metadata.flagSetId, ids.single);
  t.equal(String(set.metadata.flagwireRevision), first.headers.get('flagwire-revision'));
  t.same(Object.keys(set.flags), ['banner'], '"checkout" (50%, cohorts) is left out');
  t.equal(set.metadata.flagwireOmitted, 'checkout');
  const etag = first.headers.get('etag')!;
  t.match(etag, /^".+"$/);
  const same = await flagSet(ids.single, secrets.read, { 'If-None-Match': etag });
  t.equal(same.status, 304);
  t.equal(same.text, '');
  t.equal(same.headers.get('etag'), etag);
  // A commit in another project changes nothing here.
  t.equal(
    (await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flagB}`, { token: secrets.writeB, body: { enabled: false } })).status,
    200,
  );
  t.equal((await flagSet(ids.single, secrets.read, { 'If-None-Match': etag })).status, 304);
  t.equal(
    (await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag2}`, { token: secrets.write, body: { enabled: true } })).status,
    200,
  );
  const changed = await flagSet(ids.single, secrets.read, { 'If-None-Match': etag });
  t.equal(changed.status, 200);
  t.not(changed.headers.get('etag'), etag);
  t.ok(Number(changed.headers.get('flagwire-revision')) > Number(first.headers.get('flagwire-revision')));
  t.equal(changed.json.flags.banner.defaultVariant, 'off', 'banner is on at 0%: off for everyone');
});

t.test('one environment of a multi-environment project; the token limited to other environments', async (t) => {
  world.run('flagCreate', {
    projectId: ids.multi,
    body: { name: 'http-group', environments: { staging: { enabled: true, trafficPercentage: 100 } } },
    principal: kOperator,
  });
  const staging = await flagSet(`${ids.multi}?env=staging`, secrets.stagingWrite);
  t.equal(staging.status, 200);
  t.equal(staging.json.metadata.flagwireEnvironment, 'staging');
  t.equal(staging.json.flags['http-group'].defaultVariant, 'on');
  refusedWith(
    t,
    await flagSet(`${ids.multi}?env=production`, secrets.stagingWrite),
    403,
    'Environment not permitted',
    /^This token may not access environment "production"; it is limited to: staging\.$/,
  );
  refusedWith(t, await flagSet(ids.multi, secrets.multiRead), 400, 'Invalid request', /valid environments: staging, production/);
  refusedWith(t, await flagSet(`${ids.multi}?env=qa`, secrets.multiRead), 404, 'Not found', /Unknown environment "qa"/);
  refusedWith(t, await flagSet(`${ids.single}?env=staging`, secrets.read), 400, 'Invalid request');
});

t.test('tokens: missing, wrong, in the URL, of another project, of an organisation without the plan', async (t) => {
  refusedWith(t, await flagSet(ids.single), 401, 'Missing bearer token');
  refusedWith(t, await flagSet(ids.single, `fw_${'x'.repeat(40)}`), 401, 'Invalid token');
  refusedWith(t, await flagSet(`${ids.single}?token=${secrets.read}`, secrets.read), 400, 'Invalid request', /never accepted in the URL/);
  const other = await flagSet(ids.singleB, secrets.read);
  const nowhere = await flagSet(`prj_${'n'.repeat(16)}`, secrets.read);
  refusedWith(t, other, 404, 'Not found');
  t.equal(
    other.json.detail,
    nowhere.json.detail.replace(`prj_${'n'.repeat(16)}`, ids.singleB),
    "the same words as a project that doesn't exist",
  );
  refusedWith(t, await flagSet(ids.free, secrets.free), 402, 'Plan does not include the Management API');
});

t.test('the route is in the OpenAPI document, with its token', async (t) => {
  const doc = (await call(server.baseUrl, 'GET', '/api/v1/openapi.json')).json;
  const operation = doc.paths['/v1/flag-sets/{project_id}'].get;
  t.equal(operation.operationId, 'getFlagSet');
  t.same(operation.security, [{ bearerAuth: [] }]);
});

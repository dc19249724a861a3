// The Management API's flag precondition, black-box (docs/api.md, "Changing a flag only if unchanged"):
// GET answers the flag's version as ETag, PATCH with If-Match of another version is 412 in the spec's
// envelope and changes nothing, a PATCH without it behaves as ever, and concurrent PATCHes sent with one
// tag let exactly one through (checked in the writer's transaction, not before it).
import t from 'tap';
import { call } from '../helpers/http.js';
import { refusedRequest } from '../helpers/refused.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
const get = (id: string, query = '', token = secrets.multiRead) => call(server.baseUrl, 'GET', `/api/v1/flags/${id}${query}`, { token });
const patch = (id: string, body: unknown, query: string, ifMatch?: string, token = secrets.multiWrite) =>
  call(server.baseUrl, 'PATCH', `/api/v1/flags/${id}${query}`, {
    token,
    body,
    headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
  });

t.test('GET answers a strong ETag naming the whole flag, the same with ?env=', async (t) => {
  const all = await get(ids.groupFlag);
  const tag = all.headers.get('etag');
  t.match(tag, /^"flag-[0-9a-f]{16}"$/);
  t.equal((await get(ids.groupFlag, '?env=staging')).headers.get('etag'), tag, 'one tag per flag, whichever environment is shown');
  t.equal((await get(ids.groupFlag)).headers.get('etag'), tag, 'unchanged flag, unchanged tag');
});

t.test('a PATCH without If-Match behaves as ever, and answers the new version', async (t) => {
  const before = (await get(ids.groupFlag)).headers.get('etag');
  const r = await patch(ids.groupFlag, { trafficPercentage: 11 }, '?env=staging');
  t.equal(r.status, 200);
  t.match(r.json, { changed: true, flag: { trafficPercentage: 11, environment: 'staging' } });
  const after = (await get(ids.groupFlag)).headers.get('etag');
  t.not(after, before, 'the change moved the version');
  t.equal(r.headers.get('etag'), after, "the PATCH's ETag is what a GET now answers");
});

t.test('If-Match of the current version applies; of another, 412 in the envelope and nothing changed', async (t) => {
  const old = (await get(ids.groupFlag)).headers.get('etag')!;
  const applied = await patch(ids.groupFlag, { trafficPercentage: 12 }, '?env=staging', old);
  t.equal(applied.status, 200);
  const now = applied.headers.get('etag')!;

  const json = await refusedRequest(t, world, 412, () => patch(ids.groupFlag, { enabled: true }, '?env=production', old));
  t.equal(json.error, 'Precondition failed');
  t.match(json.detail, /has changed since you read it/);
  t.ok(String(json.detail).includes(now), 'the detail names the version it is at now');
  t.match(json.docs, /#precondition-failed$/);
  t.same(Object.keys(json).sort(), ['detail', 'docs', 'error'], "the spec's envelope");

  t.equal(
    (await refusedRequest(t, world, 412, () => patch(ids.groupFlag, { enabled: true }, '?env=production', `W/${now}`))).error,
    'Precondition failed',
    'a weak tag never matches',
  );
  t.equal((await patch(ids.groupFlag, { trafficPercentage: 13 }, '?env=staging', '*')).status, 200, '* : any version');
});

t.test("another project's flag is 404 whatever the tag: nothing says it exists", async (t) => {
  const r = await refusedRequest(t, world, 404, () => patch(ids.flagB, { enabled: true }, '', '"flag-0000000000000000"', secrets.write));
  t.equal(r.error, 'Not found');
});

t.test('concurrent PATCHes sent with one tag: exactly one is applied, the others are 412', async (t) => {
  const tag = (await get(ids.flag, '', secrets.read)).headers.get('etag')!;
  const n = 8;
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) => patch(ids.flag, { trafficPercentage: 40 + i }, '', tag, secrets.write)),
  );
  const statuses = answers.map((a) => a.status).sort();
  t.same(statuses, [200, ...Array<number>(n - 1).fill(412)], 'one through, every other refused');
  const winner = answers.find((a) => a.status === 200)!;
  const stored = await get(ids.flag, '', secrets.read);
  t.equal(stored.json.trafficPercentage, winner.json.flag.trafficPercentage, "the stored flag is the one applied change's");
  t.equal(stored.headers.get('etag'), winner.headers.get('etag'));
});

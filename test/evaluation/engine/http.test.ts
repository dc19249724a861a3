// Black-box: the real server (`flagwire serve`) with the real eval pool, over HTTP.
// spec: Evaluation API; design §2; docs/decisions.md (403, project route env, unknown project).
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import t from 'tap';
import { bucket } from '../../../src/evaluation/engine/bucket.js';
import { call, type Reply } from '../../helpers/http.js';
import { startTestServer } from '../../helpers/server.js';
import { buildEvalWorld } from './eval-world.js';

const world = buildEvalWorld();
const { ids } = world;
const kCrashId = 'flg_crash_test';
const server = await startTestServer({
  dataDir: world.dataDir,
  env: { FLAGWIRE_EVAL_WORKERS: '2', FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_EVAL_CRASH_ID: kCrashId },
});
t.teardown(async () => {
  await server.stop();
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});

/** A GET as fetch makes it (helpers/http.ts: without loading undici); every answer here is JSON. */
async function get(path: string): Promise<Reply> {
  const r = await call(server.baseUrl, 'GET', path);
  return { ...r, json: JSON.parse(r.text) };
}
const flag = (id: string, query = '') => get(`/v1/flags/${id}${query === '' ? '' : `?${query}`}`);
const project = (id: string, query = '') => get(`/v1/flags/project/${id}${query === '' ? '' : `?${query}`}`);
const enabled = async (id: string, query = '') => {
  const r = await flag(id, query);
  if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
  return r.json.enabled as boolean;
};

/** Runs `fn` over `items`, `width` at a time (concurrent requests share batches). */
async function inParallel<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

t.test('200 {id, name, enabled}, JSON, with Access-Control-Allow-Origin: *', async (t) => {
  const r = await flag(ids.on);
  t.equal(r.status, 200);
  t.equal(r.text, `{"id":"${ids.on}","name":"on","enabled":true}`);
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  t.equal(r.headers.get('content-type'), 'application/json');
  t.same((await flag(ids.off)).json, { id: ids.off, name: 'off', enabled: false });
});

t.test('stickiness: 500 keys at 50% match the reference bucket, and again', async (t) => {
  const keys = Array.from({ length: 500 }, (_, i) => `user-${i}`);
  const first = await inParallel(keys, 100, (k) => enabled(ids.half, `targetingKey=${k}`));
  const expected = keys.map((k) => bucket(ids.half, k) < 50);
  t.same(first, expected);
  const again = await inParallel(keys.slice(0, 100), 100, (k) => enabled(ids.half, `targetingKey=${encodeURIComponent(k)}`));
  t.same(again, expected.slice(0, 100), 'the same answers on the next requests');
  const on = expected.filter(Boolean).length;
  t.ok(on > 200 && on < 300, `${on} of 500 on`);
});

t.test('with only cohort, the cohort is the sticky key; a listed cohort is always on', async (t) => {
  const cohorts = Array.from({ length: 100 }, (_, i) => `team-${i}`);
  t.same(
    await inParallel(cohorts, 50, (c) => enabled(ids.half, `cohort=${c}`)),
    cohorts.map((c) => bucket(ids.half, c) < 50),
  );
  t.equal(await enabled(ids.half, 'cohort=alice&targetingKey=someone'), true);
  t.equal(await enabled(ids.zero, 'cohort=vip'), true, 'listed cohort at 0%');
});

t.test('0% always false, 100% always true', async (t) => {
  const queries = [...Array.from({ length: 50 }, (_, i) => `targetingKey=k${i}`), ...Array.from({ length: 50 }, () => '')];
  t.ok((await inParallel(queries, 50, (q) => enabled(ids.zero, q))).every((e) => e === false));
  t.ok((await inParallel(queries, 50, (q) => enabled(ids.on, q))).every((e) => e === true));
});

t.test('neither key: a fresh random roll; both answers over 200 calls at 50%', async (t) => {
  const answers = await inParallel(Array.from({ length: 200 }), 50, () => enabled(ids.half));
  const on = answers.filter(Boolean).length;
  t.ok(on > 0 && on < 200, `${on} of 200 on`);
});

t.test('audiences: match, mismatch, missing attribute; cohort/env/targetingKey are never attributes', async (t) => {
  t.equal(await enabled(ids.aud, 'plan=beta&country=NL'), true);
  t.equal(await enabled(ids.aud, 'country=NL&plan=alpha&extra=1'), true);
  t.equal(await enabled(ids.aud, 'plan=beta&country=DE'), false, 'mismatch');
  t.equal(await enabled(ids.aud, 'plan=BETA&country=NL'), false, 'case-sensitive');
  t.equal(await enabled(ids.aud, 'plan=beta'), false, 'missing attribute');
  t.equal(await enabled(ids.aud, 'cohort=beta&targetingKey=NL'), false);
  t.equal(await enabled(ids.aud, 'plan=be%74a&country=N%4C'), true, 'decoded attribute values');
  const keys = Array.from({ length: 50 }, (_, i) => `k${i}`);
  t.same(
    await inParallel(keys, 50, (k) => enabled(ids.audHalf, `targetingKey=${k}&plan=beta&country=NL`)),
    keys.map((k) => bucket(ids.audHalf, k) < 50),
    'audience matched, then the percentage',
  );
  t.equal(await enabled(ids.audHalf, 'cohort=insider'), true, 'a listed cohort needs no audience');
});

t.test('group flags: env required, cohorts with per-environment overrides', async (t) => {
  t.equal(await enabled(ids.group, 'env=staging&cohort=wide-1'), true, 'inherits the flag-wide list');
  t.equal(await enabled(ids.group, 'env=staging&cohort=qa'), false);
  t.equal(await enabled(ids.group, 'env=production&cohort=qa'), true, 'own override');
  t.equal(await enabled(ids.group, 'env=production&cohort=wide-1'), false, 'override replaces the flag-wide list');
  t.equal(await enabled(ids.group, 'env=dev&cohort=wide-1'), false, 'environment never set: disabled');
  t.equal(await enabled(ids.groupAud, 'env=production&plan=beta'), true);
  t.equal(await enabled(ids.groupAud, 'env=production'), false);
});

t.test('errors: 404s carry {error, detail}', async (t) => {
  const unknown = await flag('flg_doesnotexist');
  t.equal(unknown.status, 404);
  t.same(unknown.json, { error: 'Not found', detail: 'No flag with id "flg_doesnotexist" exists.' });
  t.equal(unknown.headers.get('access-control-allow-origin'), '*');
  const noEnv = await flag(ids.group);
  t.equal(noEnv.status, 404);
  t.match(noEnv.json.detail, /add the "env" query parameter/);
  const badEnv = await flag(ids.group, 'env=prod');
  t.equal(badEnv.status, 404);
  t.match(badEnv.json.detail, /Unknown environment "prod"/);
  t.equal((await flag(ids.on, 'env=prod')).status, 200, 'env is ignored on a single-environment flag');
});

t.test('errors: undecodable cohort is a 400 explaining the encoding, on both routes', async (t) => {
  for (const bad of ['%', '100%', '%zz', '%C3', '%FF%FE', '%C0%AF']) {
    for (const r of [await flag(ids.on, `cohort=${bad}`), await project(ids.single, `cohort=${bad}`)]) {
      t.equal(r.status, 400, bad);
      t.equal(r.json.error, 'Invalid request');
      t.match(r.json.detail, /"cohort" query parameter cannot be decoded/);
      t.match(r.json.detail, /URL-encode/);
      t.match(r.json.detail, /"\+" as %2B/);
      t.equal(r.headers.get('access-control-allow-origin'), '*');
    }
  }
  t.equal(await enabled(ids.zero, `cohort=${encodeURIComponent('vip')}`), true);
  // spec: an unencoded "+" is the usual cause of the cohort 400 (it would silently become a space).
  for (const r of [await flag(ids.on, 'cohort=bob+beta@example.com'), await project(ids.single, 'cohort=a+b')]) {
    t.equal(r.status, 400, 'literal "+" in cohort');
    t.match(r.json.detail, /unencoded "\+"/);
    t.match(r.json.detail, /%2B/);
  }
  t.equal((await flag(ids.on, 'cohort=a%20b')).status, 200, 'an encoded space is fine');
  t.equal((await flag(ids.on, 'cohort=a%2Bb')).status, 200, 'an encoded "+" is fine');
  t.equal((await flag(ids.on, 'targetingKey=a+b')).status, 200, 'other parameters keep form decoding ("+" is a space)');
});

t.test('errors: 403 for a flag applying an audience on a plan without audiences', async (t) => {
  const r = await flag(ids.freeAud, 'plan=beta');
  t.equal(r.status, 403);
  t.equal(r.json.error, 'Forbidden');
  t.match(r.json.detail, /Teams or Enterprise/);
  t.equal((await flag(ids.freePlain)).status, 200);
  const list = await project(ids.freeProject, 'plan=beta');
  t.same(
    list.json,
    [
      { id: ids.freeAud, name: 'aud', enabled: false },
      { id: ids.freePlain, name: 'plain', enabled: true },
    ],
    'project route: false, not 403',
  );
});

t.test('project route: array of {id, name, enabled}; env rules; unknown project 404', async (t) => {
  const r = await project(ids.single, 'targetingKey=user-7&plan=beta&country=NL');
  t.equal(r.status, 200);
  t.equal(r.headers.get('access-control-allow-origin'), '*');
  t.same(
    r.json.map((f: { id: string }) => f.id),
    [ids.on, ids.off, ids.half, ids.zero, ids.aud, ids.audHalf],
  );
  t.same(r.json[2], { id: ids.half, name: 'half', enabled: bucket(ids.half, 'user-7') < 50 });
  t.same((await project(ids.empty)).json, []);
  t.equal((await project(ids.multi)).status, 404, 'multi-environment project without env');
  t.equal((await project(ids.multi, 'env=nope')).status, 404);
  t.same(
    (await project(ids.multi, 'env=production&cohort=qa')).json.map((f: { enabled: boolean }) => f.enabled),
    [true, false],
  );
  const none = await project('prj_nope');
  t.same([none.status, none.json], [404, { error: 'Not found', detail: 'No project with id "prj_nope" exists.' }]);
});

t.test('other /v1 paths and methods: 404 JSON; preflight answered', async (t) => {
  const r = await get('/v1/nothing');
  t.equal(r.status, 404);
  t.ok(r.json.error);
  const post = await call(server.baseUrl, 'POST', `/v1/flags/${ids.on}`);
  t.equal(post.status, 404);
  const pre = await call(server.baseUrl, 'OPTIONS', `/v1/flags/${ids.on}`);
  t.equal(pre.status, 204);
  t.equal(pre.headers.get('access-control-allow-origin'), '*');
});

t.test('clients that go away before their answer do not crash or stall the server', async (t) => {
  await Promise.all(
    Array.from(
      { length: 50 },
      (_, i) =>
        new Promise<void>((resolve) => {
          const socket = connect(server.port, '127.0.0.1', () => {
            socket.write(`GET /v1/flags/${ids.half}?targetingKey=gone-${i} HTTP/1.1\r\nHost: x\r\n\r\n`);
            // Half vanish at once, half right after the server saw the request.
            if (i % 2 === 0) socket.destroy();
            else setImmediate(() => socket.destroy());
          });
          socket.on('close', () => resolve());
          socket.on('error', () => {});
        }),
    ),
  );
  t.equal(await enabled(ids.on), true);
  t.equal(server.proc.exitCode, null);
});

t.test('a worker that dies: its batch gets 500 eval bodies, never a hang; the pool recovers', async (t) => {
  const batch = await Promise.all([flag(kCrashId), flag(ids.on), flag(ids.on), flag(ids.half, 'targetingKey=x')]);
  const statuses = batch.map((r) => r.status);
  t.equal(statuses[0], 500);
  t.ok(
    statuses.every((s) => s === 500 || s === 200),
    `${statuses}`,
  );
  t.same(batch[0]!.json, {
    error: 'Internal server error',
    detail: 'An unexpected error occurred while evaluating; it has been logged. Retry, and report it if it persists.',
  });
  t.equal(batch[0]!.headers.get('access-control-allow-origin'), '*');
  // Replacement workers: every later request is answered.
  const after = await inParallel(
    Array.from({ length: 100 }, (_, i) => i),
    25,
    (i) => flag(ids.half, `targetingKey=after-${i}`),
  );
  t.ok(after.every((r) => r.status === 200));
  const again = await flag(kCrashId);
  t.equal(again.status, 500, 'a second crash is recovered from too');
  t.equal((await flag(ids.on)).status, 200);
});

t.test('SIGTERM stops the server cleanly: the pool shuts down, exit code 0', async (t) => {
  const inFlight = Array.from({ length: 20 }, (_, i) =>
    flag(ids.half, `targetingKey=last-${i}`).then(
      (r) => r.status,
      () => 'closed',
    ),
  );
  t.equal(await server.stop(), 0);
  const outcomes = await Promise.all(inFlight);
  t.ok(
    outcomes.every((o) => o === 200 || o === 'closed'),
    `${outcomes}`,
  );
});

// Black-box, one node (LMDB alone): every answer of the Management API, the Evaluation API and OFREP
// names the store revision it was computed at (Flagwire-Revision), errors included, and a write's is
// the one it committed at; Flagwire-Min-Revision is served at once when this node has it, waits for it
// (a change made meanwhile by the console, another process), is a 400 when it is not a revision and a
// 503 with Retry-After when the wait runs out. Several nodes: test/multinode/revisions-pg.test.ts.
import { once } from 'node:events';
import net from 'node:net';
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { call, type Reply } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startWorldServer } from '../helpers/world-server.js';

// The node's wait for a revision. The wait test's change is made by another process than the server
// (the console, in the test process) while its requests wait: on a loaded 2-core machine that has taken
// over 300 ms, so the wait is long enough to hold at load; the test of the wait running out sends its
// requests at once, so it waits it once.
const kWaitMs = 5_000;
const { server, world } = await startWorldServer(t, { FLAGWIRE_MIN_REVISION_WAIT_MS: String(kWaitMs) });
const { ids, secrets } = world;

const revisionOf = (r: Reply): number => {
  const value = r.headers.get('flagwire-revision');
  if (value === null || !/^\d+$/.test(value)) throw new Error(`no Flagwire-Revision on ${r.status} ${r.text}`);
  return Number(value);
};
const evaluate = (headers: Record<string, string> = {}, id = ids.flag) =>
  call(server.baseUrl, 'GET', `/v1/flags/${id}?targetingKey=k1`, { headers });
const ofrep = (headers: Record<string, string> = {}, key = ids.flag) =>
  call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${key}`, { body: { context: { targetingKey: 'k1' } }, headers });
const ofrepBulk = (headers: Record<string, string> = {}) =>
  call(server.baseUrl, 'POST', '/ofrep/v1/evaluate/flags', {
    body: { context: {} },
    headers: { 'x-flagwire-project': ids.single, ...headers },
  });
const getFlag = (headers: Record<string, string> = {}) =>
  call(server.baseUrl, 'GET', `/api/v1/flags/${ids.flag}`, { token: secrets.read, headers });
const patch = (body: object, headers: Record<string, string> = {}) =>
  call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag}`, { token: secrets.write, body, headers });

t.test('every answer names its revision, errors included, and browsers may read it', async (t) => {
  const answers: [string, Reply][] = [
    ['Management 200', await getFlag()],
    ['Management 404', await call(server.baseUrl, 'GET', '/api/v1/flags/flg_nope', { token: secrets.read })],
    ['Management 401', await call(server.baseUrl, 'GET', '/api/v1/flags')],
    ['Management 400', await call(server.baseUrl, 'GET', `/api/v1/flags/${ids.flag}?env=prod`, { token: secrets.read })],
    ['Management 403', await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag}`, { token: secrets.read, body: { enabled: false } })],
    ['Evaluation 200', await evaluate()],
    ['Evaluation project 200', await call(server.baseUrl, 'GET', `/v1/flags/project/${ids.single}`)],
    ['Evaluation 404', await evaluate({}, 'flg_nope')],
    ['Evaluation 400', await call(server.baseUrl, 'GET', `/v1/flags/${ids.flag}?cohort=a+b`)],
    ['OFREP 200', await ofrep()],
    ['OFREP 404', await ofrep({}, 'flg_nope')],
    ['OFREP 400', await call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${ids.flag}`, { raw: '{not json' })],
    ['OFREP bulk 200', await ofrepBulk()],
  ];
  const revisions = new Set<number>();
  for (const [what, r] of answers) {
    t.ok(r.status >= 200, what);
    revisions.add(revisionOf(r));
    t.match(r.headers.get('access-control-expose-headers'), /\bFlagwire-Revision\b/, `${what}: exposed to browsers`);
  }
  t.same([...revisions], [revisions.values().next().value], 'nothing was written meanwhile: one revision everywhere');
  const bulk = answers.at(-1)![1];
  t.equal(bulk.headers.get('access-control-expose-headers'), 'ETag, Flagwire-Revision', "the bulk answer's ETag stays readable");
  const notModified = await ofrepBulk({ 'if-none-match': bulk.headers.get('etag')! });
  t.equal(notModified.status, 304);
  t.equal(revisionOf(notModified), revisionOf(bulk), 'a 304 too');
});

t.test('a write answers with the revision it committed at; every later answer names it or a later one', async (t) => {
  const before = revisionOf(await getFlag());
  const patched = await patch({ trafficPercentage: 70 });
  t.equal(patched.status, 200);
  const committed = revisionOf(patched);
  t.ok(committed > before, `the PATCH's revision ${committed} is past ${before}`);
  for (const r of [await getFlag(), await evaluate(), await ofrep(), await ofrepBulk()]) {
    t.equal(revisionOf(r), committed, `${r.status}: the revision the write committed at`);
  }
  const unchanged = await patch({ trafficPercentage: 70 });
  t.equal(unchanged.json.changed, false);
  t.equal(revisionOf(unchanged), committed, 'a PATCH that changes nothing commits nothing: the revision it read');
  const created = await call(server.baseUrl, 'POST', '/api/v1/flags', { token: secrets.write, body: { name: 'revised' } });
  t.equal(created.status, 201);
  t.ok(revisionOf(created) > committed, 'a POST moves it on');
  // A console change (another process) moves it too: the next answer names it.
  world.run('flagRename', { principal: kOperator, flagId: ids.flag2, name: 'banner-renamed' });
  t.ok(revisionOf(await evaluate()) > revisionOf(created), "the console's commit");
});

t.test('Flagwire-Min-Revision at or below this node: served at once', async (t) => {
  const now = revisionOf(await getFlag());
  for (const min of ['0', String(now), String(now - 1), `00${now}`]) {
    const headers = { 'flagwire-min-revision': min };
    for (const r of [await getFlag(headers), await evaluate(headers), await ofrep(headers), await ofrepBulk(headers)]) {
      t.equal(r.status, 200, `min ${min}`);
      t.equal(revisionOf(r), now);
    }
  }
  const written = await patch({ enabled: true }, { 'flagwire-min-revision': String(now) });
  t.equal(written.status, 200, 'a write too');
});

t.test('Flagwire-Min-Revision that is not a revision: 400, each API in its own envelope', async (t) => {
  for (const bad of ['abc', '-1', '1.5', '1e3', '12345678901234567', '0x10', '1,2']) {
    const headers = { 'flagwire-min-revision': bad };
    const management = await getFlag(headers);
    t.equal(management.status, 400, `management "${bad}"`);
    t.same(Object.keys(management.json), ['error', 'detail', 'docs']);
    t.equal(management.json.error, 'Invalid request');
    t.match(management.json.detail, /Flagwire-Min-Revision/);
    revisionOf(management);
    const evaluation = await evaluate(headers);
    t.same([evaluation.status, Object.keys(evaluation.json)], [400, ['error', 'detail']], `evaluation "${bad}"`);
    t.match(evaluation.json.detail, /Flagwire-Min-Revision/);
    revisionOf(evaluation);
    const single = await ofrep(headers);
    t.same([single.status, single.json.key, single.json.errorCode], [400, ids.flag, 'GENERAL'], `OFREP "${bad}"`);
    revisionOf(single);
    const bulk = await ofrepBulk(headers);
    t.same([bulk.status, bulk.json.errorCode], [400, 'GENERAL']);
  }
  const write = await patch({ enabled: false }, { 'flagwire-min-revision': 'soon' });
  t.equal(write.status, 400);
  t.equal((await getFlag()).json.enabled, true, 'the write with a bad header changed nothing');
});

t.test('OFREP answers a Flagwire-Min-Revision that is not a revision before its body, drains the body and serves on', async (t) => {
  // Written at once, after the bad request: the next request is answered only if the server read the
  // first body to its declared end and kept the connection (docs/decisions.md: A refused body is drained).
  const socket = net.connect(server.port, '127.0.0.1');
  await once(socket, 'connect');
  t.teardown(() => socket.destroy());
  let received = '';
  let closed = false;
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  socket.on('close', () => (closed = true));
  // 60,000 characters: as much as a context may hold (65,536 of keys and strings).
  const body = Buffer.from(JSON.stringify({ context: { targetingKey: 'k1', padding: 'x'.repeat(60_000) } }));
  const post = (extra: [string, string][]) =>
    rawRequest(
      'POST',
      `/ofrep/v1/evaluate/flags/${ids.flag}`,
      [['Host', '127.0.0.1'], ['Content-Type', 'application/json'], ['Content-Length', String(body.length)], ...extra],
      body,
    );
  socket.write(Buffer.concat([post([['Flagwire-Min-Revision', 'abc']]), post([])]));
  const statuses = () => received.match(/HTTP\/1\.1 \d{3}/g) ?? [];
  await pollUntil(
    'both answers',
    async () => [statuses().length, closed] as const,
    ([answers, ended]) => ended || (answers === 2 && received.endsWith('}')),
  );
  t.same(statuses(), ['HTTP/1.1 400', 'HTTP/1.1 200'], 'the 400, then the next request on the same connection served');
  t.notMatch(received, /\r\nconnection: close\r\n/i, 'the connection is kept');
  t.match(received, /"errorCode":"GENERAL"/);
  t.equal(closed, false);
});

t.test('a revision this node does not get within the wait: 503 Revision not reached, Retry-After, on time', async (t) => {
  const far = { 'flagwire-min-revision': '999999999' };
  const requests: [string, () => Promise<Reply>][] = [
    ['Management read', () => getFlag(far)],
    ['Management write', () => patch({ enabled: false }, far)],
    ['Evaluation', () => evaluate(far)],
    ['OFREP', () => ofrep(far)],
    ['OFREP bulk', () => ofrepBulk(far)],
  ];
  const before = revisionOf(await getFlag());
  const answers = await Promise.all(
    requests.map(async ([what, send]) => {
      const start = performance.now();
      const r = await send();
      return [what, r, performance.now() - start] as const;
    }),
  );
  for (const [what, r, ms] of answers) {
    t.equal(r.status, 503, what);
    t.equal(r.headers.get('retry-after'), '1', `${what}: Retry-After`);
    t.ok(ms >= kWaitMs - 20 && ms < kWaitMs + 1500, `${what}: answered after the wait (${ms.toFixed(0)} ms)`);
    t.equal(revisionOf(r), before);
    if (what.startsWith('Management')) {
      t.same([r.json.error, r.json.docs.endsWith('#revision-not-reached')], ['Revision not reached', true]);
    } else if (what === 'Evaluation') {
      t.same(Object.keys(r.json), ['error', 'detail']);
      t.equal(r.json.error, 'Revision not reached');
    } else t.equal(r.json.errorCode, 'GENERAL');
  }
  t.equal((await getFlag()).json.enabled, true, 'the refused write was never applied');
  const docs = await call(server.baseUrl, 'GET', '/docs');
  t.match(docs.text, /id="revision-not-reached"/, 'the docs page explains it');
});

t.test('a request for the next revision waits for it, then answers at it', async (t) => {
  const now = revisionOf(await getFlag());
  const next = { 'flagwire-min-revision': String(now + 1) };
  const waiting = Promise.all([evaluate(next), getFlag(next), ofrep(next)]);
  await new Promise((resolve) => setTimeout(resolve, 50));
  // The console, in another process than the server: nothing but the store tells the server.
  world.run('flagPatch', { flagId: ids.flag, env: null, patch: { trafficPercentage: 0 }, principal: kOperator });
  const [evaluation, management, single] = await waiting;
  for (const r of [evaluation, management, single]) {
    t.equal(r.status, 200);
    t.ok(revisionOf(r) >= now + 1, 'at the revision asked for');
  }
  t.equal(management.json.trafficPercentage, 0, 'the change it waited for');
  t.equal(evaluation.json.enabled, false, 'evaluated at it: 0%');
  t.equal(single.json.value, false);
});

t.test('CORS: OFREP preflights allow Flagwire-Min-Revision; the spec routes keep exactly theirs', async (t) => {
  const preflight = (path: string, method: string) =>
    call(server.baseUrl, 'OPTIONS', path, {
      headers: {
        origin: 'https://example.test',
        'access-control-request-method': method,
        'access-control-request-headers': 'flagwire-min-revision',
      },
    });
  const ofrepPre = await preflight('/ofrep/v1/evaluate/flags', 'POST');
  t.match(ofrepPre.headers.get('access-control-allow-headers'), /\bFlagwire-Min-Revision\b/);
  for (const path of [`/v1/flags/${ids.flag}`, `/api/v1/flags/${ids.flag}`]) {
    t.equal((await preflight(path, 'GET')).headers.get('access-control-allow-headers'), 'Content-Type, Authorization', path);
  }
});

t.test('the OpenAPI document names both headers on each operation of the three APIs', async (t) => {
  const doc = (await call(server.baseUrl, 'GET', '/api/v1/openapi.json')).json;
  for (const [path, method] of [
    ['/api/v1/flags/{flag_id}', 'get'],
    ['/api/v1/flags/{flag_id}', 'patch'],
    ['/v1/flags/{flag_id}', 'get'],
    ['/ofrep/v1/evaluate/flags', 'post'],
  ] as const) {
    const op = doc.paths[path][method];
    t.ok(
      op.parameters.some((p: { name: string; in: string }) => p.name === 'Flagwire-Min-Revision' && p.in === 'header'),
      `${method} ${path}: the request header`,
    );
    for (const [status, response] of Object.entries(op.responses) as [string, any][])
      t.ok(response.headers?.['Flagwire-Revision'], `${method} ${path} ${status}: the response header`);
    t.match(op.responses['503'].description, /Revision not reached|Flagwire-Min-Revision/, `${method} ${path}: its 503`);
  }
  const stream = doc.paths['/v1/stream/project/{project_id}'].get;
  t.notOk(
    stream.parameters.some((p: { name: string }) => p.name === 'Flagwire-Min-Revision'),
    "the stream's ids are revisions: no header",
  );
});

// Black-box: one bound on the evaluation context for every evaluation route (issue 96, item 5;
// src/evaluation/engine/context-bounds.ts). A context past it is refused with a 4xx in the route's own shape
// before any flag is evaluated: OFREP's single and bulk routes (400 INVALID_CONTEXT), Unleash's front-end
// API by POST at every path (400 in its {error, detail} envelope), and the query routes (the Evaluation
// API, a front-end GET) by uWS's 4 KiB request head (431). Unleash's client API and flagd's sync take no
// context. The probe's 900 KB `userId` on the front-end API, sent six at once beside another project's
// evaluations on a single eval worker, is refused, and the other project's answers stay 200 (the probe
// saw them answered 500 with the batch the huge context held past its timeout). A body larger than any
// context within the bound takes (kMaxContextBodyBytes), the 900 KB one among them, is refused 413 on the
// front-end thread, before it is read or reaches a worker; a context within the bound written with the
// longest escapes still evaluates.
import t from 'tap';
import { kOperator } from '../../../src/actor/audit-actor.js';
import { kMaxContextBodyBytes, kMaxContextChars } from '../../../src/evaluation/engine/context-bounds.js';
import { kEvalBodyTooLarge } from '../../../src/evaluation/engine/queued-body.js';
import { jsonBody } from '../../../src/model/request-body.js';
import { call, type Reply, scrapeMetrics } from '../../helpers/http.js';
import { kNoEvalBodyBudget, startWorldServer } from '../../helpers/world-server.js';

/** A hang, not a slow machine. */
const kHangMs = 60_000;
t.setTimeout(5 * kHangMs);

// The bytes per second a key may send in large bodies (test/evaluation/engine/eval-body-rate.test.ts) lifted to their
// most: these requests, some large, come within a second of each other from one key and one address.
const { server, world } = await startWorldServer(t, { FLAGWIRE_EVAL_WORKERS: '1', ...kNoEvalBodyBudget });
const { ids } = world;
const web = world.run('clientKeyCreate', {
  principal: kOperator,
  projectId: ids.single,
  received: jsonBody(JSON.stringify({ name: 'web', uses: ['frontend'] })),
}).secret;
// Rollouts bucket by the userId: each hashes the whole of it.
for (let i = 0; i < 40; i++) {
  world.run('flagCreate', {
    projectId: ids.single,
    body: { name: `roll-${i}`, enabled: true, trafficPercentage: 50 },
    principal: kOperator,
  });
}

const kHuge = 'u'.repeat(900_000);
const kOver = 'u'.repeat(kMaxContextChars + 1);
const kFits = 'u'.repeat(kMaxContextChars - 100);

async function within(what: string, request: Promise<Reply>): Promise<Reply> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${kHangMs} ms`)), kHangMs)),
  );
  try {
    return await Promise.race([request, hang]);
  } finally {
    clearTimeout(timer);
  }
}

const frontend = (method: string, path: string, body?: unknown) =>
  within(`${method} ${path}`, call(server.baseUrl, method, path, { body, headers: { authorization: web } }));
const ofrep = (path: string, context: object, headers: Record<string, string> = {}) =>
  within(path, call(server.baseUrl, 'POST', path, { body: { context }, headers }));

t.test("Unleash's front-end API refuses a context past the bound, by body, at every path", async (t) => {
  for (const path of ['/api/frontend', '/api/frontend/all', '/api/frontend/features/roll-1', '/api/proxy', '/api/proxy/all']) {
    for (const [what, body] of [
      ['{"context": ...}', { context: { userId: kOver } }],
      ['the context itself', { userId: 'u1', properties: { note: kOver } }],
    ] as const) {
      const r = await frontend('POST', path, body);
      t.equal(r.status, 400, `${path}, ${what}: 400`);
      t.equal(r.json.error, 'Invalid request', `${path}, ${what}: in its envelope`);
      t.match(
        r.json.detail,
        `more than ${kMaxContextChars} characters of keys and strings`,
        `${path}, ${what}: the detail names the bound`,
      );
    }
    const huge = await frontend('POST', path, { context: { userId: kHuge } });
    t.same([huge.status, huge.json], [413, { error: 'Request body too large', detail: kEvalBodyTooLarge }], `${path}, 900 KB userId: 413`);
    t.equal((await frontend('POST', path, { context: { userId: kFits } })).status, 200, `${path}: a context within the bound is answered`);
  }
  const many = Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`p${i}`, 'x']));
  const r = await frontend('POST', '/api/frontend', { context: { userId: 'u1', properties: many } });
  t.equal(r.status, 400, 'more than 10,000 properties: 400');
});

t.test('OFREP refuses it, single and bulk, with INVALID_CONTEXT', async (t) => {
  const single = await ofrep(`/ofrep/v1/evaluate/flags/${ids.flag}`, { targetingKey: kOver });
  t.same([single.status, single.json.errorCode], [400, 'INVALID_CONTEXT'], 'single');
  const bulk = await ofrep('/ofrep/v1/evaluate/flags', { targetingKey: kOver }, { 'X-Flagwire-Project': ids.single });
  t.same([bulk.status, bulk.json.errorCode], [400, 'INVALID_CONTEXT'], 'bulk');
  t.match(bulk.json.errorDetails, `more than ${kMaxContextChars} characters`, 'the same detail as every route');
  const hugeSingle = await ofrep(`/ofrep/v1/evaluate/flags/${ids.flag}`, { targetingKey: kHuge });
  t.same(
    [hugeSingle.status, hugeSingle.json],
    [413, { key: ids.flag, errorCode: 'GENERAL', errorDetails: kEvalBodyTooLarge }],
    "a 900 KB body: 413 in OFREP's shape, naming the flag",
  );
  const hugeBulk = await ofrep('/ofrep/v1/evaluate/flags', { targetingKey: kHuge }, { 'X-Flagwire-Project': ids.single });
  t.same([hugeBulk.status, hugeBulk.json.errorCode], [413, 'GENERAL'], 'bulk: 413');
});

t.test(
  'a body past the byte cap is refused before it reaches a worker; a context within the bound at the longest escapes is not',
  async (t) => {
    // Every request a worker evaluates is counted in a batch; none of these may be.
    const evaluated = async () => (await scrapeMetrics(server.baseUrl)).get('flagwire_eval_batch_size_sum') ?? 0;
    const before = await evaluated();
    // One byte past the cap, as text: the context inside it would also be past the bound.
    const past = `{"context":{"userId":"${'u'.repeat(kMaxContextBodyBytes)}"}}`.slice(0, kMaxContextBodyBytes + 1);
    const refused = await Promise.all([
      frontend('POST', '/api/frontend', { context: { userId: kHuge } }),
      within('front-end, one byte past', call(server.baseUrl, 'POST', '/api/frontend/all', { raw: past, headers: { authorization: web } })),
      ofrep(`/ofrep/v1/evaluate/flags/${ids.flag}`, { targetingKey: kHuge }),
      within(
        'OFREP, one byte past',
        call(server.baseUrl, 'POST', '/ofrep/v1/evaluate/flags', { raw: past, headers: { 'X-Flagwire-Project': ids.single } }),
      ),
    ]);
    t.same(
      refused.map((r) => r.status),
      [413, 413, 413, 413],
      'refused 413',
    );
    t.equal(await evaluated(), before, 'no worker evaluated any of them');
    // Each character a control character: JSON.stringify writes it \u00XX, six bytes, the longest a
    // character takes; the body is still within the cap, and the context within the bound.
    const escaped = '\u0001'.repeat(kMaxContextChars - 100);
    const fits = { context: { userId: escaped } };
    t.ok(JSON.stringify(fits).length > 6 * (kMaxContextChars - 100), 'the body is over six bytes a character');
    t.equal((await frontend('POST', '/api/frontend/all', fits)).status, 200, 'the front-end API evaluates it');
    t.equal((await ofrep(`/ofrep/v1/evaluate/flags/${ids.flag}`, { targetingKey: escaped })).status, 200, 'OFREP evaluates it');
    t.ok((await evaluated()) > before, 'on a worker');
  },
);

t.test('the query routes refuse a query past 4 KiB with 431, before it reaches a worker', async (t) => {
  const query = `targetingKey=${'u'.repeat(5000)}`;
  const v1 = await within('/v1', call(server.baseUrl, 'GET', `/v1/flags/${ids.flag}?${query}`));
  t.equal(v1.status, 431, 'the Evaluation API');
  const get = await frontend('GET', `/api/frontend?userId=${'u'.repeat(5000)}`);
  t.equal(get.status, 431, "the front-end API's GET");
});

t.test(
  "six 900 KB front-end contexts at once beside another project's evaluations: refused, and the other project's answers are 200",
  async (t) => {
    const huge = Array.from({ length: 6 }, () => frontend('POST', '/api/frontend/all', { context: { userId: kHuge } }));
    const other = Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0
        ? within('/v1', call(server.baseUrl, 'GET', `/v1/flags/${ids.flagB}?targetingKey=u${i}`))
        : ofrep(`/ofrep/v1/evaluate/flags/${ids.flagB}`, { targetingKey: `u${i}` }),
    );
    const [hugeReplies, otherReplies] = await Promise.all([Promise.all(huge), Promise.all(other)]);
    t.same(
      hugeReplies.map((r) => r.status),
      Array(6).fill(413),
      'every huge context refused',
    );
    t.same(
      otherReplies.map((r) => r.status),
      Array(20).fill(200),
      "the other project's evaluations answered",
    );
  },
);

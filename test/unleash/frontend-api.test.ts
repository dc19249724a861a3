// Black-box: Unleash's front-end API (issue 60, item 1) with the stock unleash-proxy-client against a real
// server: for several contexts and every kind of flag, its isEnabled and getVariant equal Flagwire's
// Evaluation API for the same caller (the context mapped as src/unleash/context.ts says), by GET and by
// POST; the answer in Unleash Edge's shape at /api/frontend, /all, /features/{name} and the legacy
// /api/proxy; ETag and 304 (the stock client's own poll too); the SDK's metrics accepted; a client key of
// the use `frontend` decides the project and the environment, and every other credential is refused in
// the Evaluation API's envelope; CORS as a browser needs it; generated requests never get a 5xx.
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { type IVariant, InMemoryStorageProvider, UnleashClient } from 'unleash-proxy-client';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { jsonBody } from '../../src/model/request-body.js';
import { kBadEscapes, kProtoWords, unicode } from '../helpers/fuzz-bodies.js';
import { call, type Reply } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;

const makeKey = (name: string, uses: string[], projectId = ids.single, environment?: string) =>
  world.run('clientKeyCreate', {
    principal: kOperator,
    projectId,
    received: jsonBody(JSON.stringify({ name, uses, ...(environment === undefined ? {} : { environment }) })),
  });
const web = makeKey('web', ['frontend']).secret;
const eventsOnly = makeKey('events only', ['events']).secret;
const revoked = makeKey('old web', ['frontend', 'events']);
world.run('clientKeyRevoke', { principal: kOperator, keyId: revoked.id });
const staging = makeKey('staging web', ['frontend'], ids.multi, 'staging').secret;
const production = makeKey('production web', ['frontend'], ids.multi, 'production').secret;

const create = (name: string, body: Record<string, unknown>, projectId = ids.single) =>
  world.run('flagCreate', { projectId, body: { name, ...body }, principal: kOperator }).id;
const kPlanRule = { if: [{ '==': [{ var: 'plan' }, 'beta'] }, 'b', null] };
// Beside the world's "checkout" (50%, cohort alice) and "banner" (off): every kind of flag.
create('beta-split', { enabled: true, trafficPercentage: 30, audienceId: ids.audience, cohorts: ['vip'] });
create('colour', { enabled: true, trafficPercentage: 100, variants: { red: '#f00', green: '#0f0' }, defaultVariant: 'red' });
create('limit', { enabled: true, trafficPercentage: 50, variants: { low: 10, high: 1000.5 }, defaultVariant: 'low' });
create('layout', {
  enabled: true,
  trafficPercentage: 100,
  variants: { a: { cols: 2 }, b: { cols: 3 } },
  defaultVariant: 'a',
  targeting: kPlanRule,
});
create('dark-mode', { enabled: true, trafficPercentage: 40, variants: { on: true, off: false }, defaultVariant: 'on' });
create('no-default', { enabled: true, trafficPercentage: 100, variants: { x: 'x' } });
create('b-only', { enabled: true, trafficPercentage: 100 }, ids.singleB);
const kNames = ['banner', 'beta-split', 'checkout', 'colour', 'dark-mode', 'layout', 'limit', 'no-default'];

const frontend = (
  method: string,
  path: string,
  authorization: string | null,
  opts: { body?: unknown; headers?: Record<string, string> } = {},
) =>
  call(server.baseUrl, method, path, {
    body: opts.body,
    headers: { ...(authorization === null ? {} : { authorization }), ...opts.headers },
  });

function refusedWith(t: Test, r: Reply, status: number, error: string, detail: RegExp): void {
  t.equal(r.status, status, `${status} ${error}`);
  t.equal(r.json.error, error);
  t.match(r.json.detail, detail);
}

interface EvalAnswer {
  name: string;
  enabled: boolean;
  variant?: string;
  value?: unknown;
}

/** What the stock client's getVariant must say for the Evaluation API's answer. */
function expectedVariant(answer: EvalAnswer): Pick<IVariant, 'name' | 'enabled' | 'payload'> {
  if (!answer.enabled || answer.variant === undefined) return { name: 'disabled', enabled: false };
  const { value } = answer;
  const payload =
    typeof value === 'string'
      ? { type: 'string', value }
      : typeof value === 'number'
        ? { type: 'number', value: String(value) }
        : { type: 'json', value: JSON.stringify(value) };
  return { name: answer.variant, enabled: true, payload };
}

/** The stock client, started with `context`, its first answer in; every request it makes is in `seen`. */
async function startClient(
  t: Test,
  clientKey: string,
  options: { context?: Record<string, unknown>; usePOSTrequests?: boolean; path?: string } = {},
): Promise<{ client: UnleashClient; seen: { url: string; method: string; status: number; ifNoneMatch: string | null }[] }> {
  const seen: { url: string; method: string; status: number; ifNoneMatch: string | null }[] = [];
  const recording = async (url: string, init: RequestInit) => {
    const res = await fetch(url, init);
    const headers = new Headers(init.headers);
    seen.push({ url, method: init.method ?? 'GET', status: res.status, ifNoneMatch: headers.get('if-none-match') });
    return res;
  };
  const client = new UnleashClient({
    url: `${server.baseUrl}${options.path ?? '/api/frontend'}`,
    clientKey,
    appName: 'flagwire-test',
    context: options.context,
    usePOSTrequests: options.usePOSTrequests,
    disableRefresh: true,
    metricsInterval: 0,
    fetch: recording,
    storageProvider: new InMemoryStorageProvider(),
  });
  t.teardown(() => client.stop());
  await client.start();
  return { client, seen };
}

async function evaluationApi(query: URLSearchParams, projectId = ids.single): Promise<EvalAnswer[]> {
  const answers = await call(server.baseUrl, 'GET', `/v1/flags/project/${projectId}?${query}`);
  return answers.json as EvalAnswer[];
}

t.test('the stock client answers every flag as the Evaluation API does, for every caller, by GET and by POST', async (t) => {
  for (const usePOSTrequests of [false, true]) {
    const { client } = await startClient(t, web, { usePOSTrequests });
    let compared = 0;
    let on = 0;
    for (let i = 0; i < 40; i++) {
      const key = `user-${i}`;
      const cohort = i % 4 === 0 ? ['alice', 'vip', 'bob'][(i / 4) % 3]! : null;
      const plan = i % 2 === 0 ? 'beta' : 'free';
      await client.updateContext({ userId: key, properties: { plan, ...(cohort === null ? {} : { cohort }) } });
      const query = new URLSearchParams({ targetingKey: key, plan, ...(cohort === null ? {} : { cohort }) });
      for (const answer of await evaluationApi(query)) {
        const where = `${answer.name} for user-${i} (${usePOSTrequests ? 'POST' : 'GET'})`;
        t.equal(client.isEnabled(answer.name), answer.enabled, `${where}: isEnabled`);
        t.match(client.getVariant(answer.name), { ...expectedVariant(answer), feature_enabled: answer.enabled }, `${where}: getVariant`);
        if (answer.enabled) on++;
        compared++;
      }
    }
    t.equal(compared, 40 * kNames.length, 'every flag compared for every caller');
    t.ok(on > 0 && on < compared, 'some answers on, some off');
  }
});

t.test("without a userId the client's sessionId is the targeting key, as Unleash's default stickiness buckets", async (t) => {
  const { client } = await startClient(t, web);
  const sessionId = client.getContext().sessionId!;
  t.match(sessionId, /^\d+$/, 'the stock client made a session id');
  for (const answer of await evaluationApi(new URLSearchParams({ targetingKey: sessionId }))) {
    t.equal(client.isEnabled(answer.name), answer.enabled, `${answer.name}: isEnabled`);
    t.match(client.getVariant(answer.name), expectedVariant(answer), `${answer.name}: getVariant`);
  }
});

t.test("the answer in Unleash Edge's shape: on flags by name, /all with the off ones, one flag, the legacy path", async (t) => {
  const query = 'userId=user-3&properties[plan]=beta&properties%5Bcohort%5D=vip&environment=ignored';
  const all = await frontend('GET', `/api/frontend/all?${query}`, web);
  t.equal(all.status, 200);
  t.equal(all.headers.get('content-type'), 'application/json');
  const toggles = all.json.toggles as { name: string; enabled: boolean }[];
  t.same(
    toggles.map((toggle) => toggle.name),
    kNames,
    "every flag of the key's project, by name; none of another project's",
  );
  t.same(
    toggles.find((toggle) => toggle.name === 'banner'),
    {
      name: 'banner',
      enabled: false,
      variant: { name: 'disabled', enabled: false },
      impressionData: false,
    },
  );
  t.same(
    toggles.find((toggle) => toggle.name === 'beta-split'),
    {
      name: 'beta-split',
      enabled: true,
      variant: { name: 'disabled', enabled: false },
      impressionData: false,
    },
  );
  t.same(
    toggles.find((toggle) => toggle.name === 'layout'),
    {
      name: 'layout',
      enabled: true,
      variant: { name: 'b', enabled: true, payload: { type: 'json', value: '{"cols":3}' } },
      impressionData: false,
    },
  );
  const variantOf = (name: string) => (toggles.find((toggle) => toggle.name === name) as { variant?: unknown } | undefined)?.variant;
  t.same(variantOf('colour'), { name: 'red', enabled: true, payload: { type: 'string', value: '#f00' } });
  t.same(variantOf('no-default'), { name: 'disabled', enabled: false }, 'no value: no variant');

  const enabled = await frontend('GET', `/api/frontend?${query}`, web);
  t.same(
    enabled.json.toggles,
    toggles.filter((toggle) => toggle.enabled),
    '/api/frontend: the on ones only',
  );
  const legacy = await frontend('GET', `/api/proxy?${query}`, `Bearer ${web}`);
  t.equal(legacy.text, enabled.text, '/api/proxy answers the same, and the key may follow "Bearer "');
  t.equal((await frontend('GET', `/api/proxy/all?${query}`, web)).text, all.text);

  const context = { userId: 'user-3', environment: 'ignored', properties: { plan: 'beta', cohort: 'vip' } };
  const posted = await frontend('POST', '/api/frontend/all', web, { body: { context } });
  t.equal(posted.text, all.text, 'POST {context} answers as the query does');
  t.equal((await frontend('POST', '/api/frontend/all', web, { body: context })).text, all.text, 'so does the context itself (Edge)');
  t.equal((await frontend('POST', '/api/frontend', web, { body: { context } })).text, enabled.text);

  const one = await frontend('GET', `/api/frontend/features/layout?${query}`, web);
  t.equal(one.status, 200);
  t.same(
    one.json,
    toggles.find((toggle) => toggle.name === 'layout'),
  );
  t.same((await frontend('POST', '/api/frontend/features/layout', web, { body: { context } })).json, one.json);
  t.same((await frontend('GET', '/api/frontend/features/banner', web)).json.enabled, false, 'one flag answers when off too');
  refusedWith(t, await frontend('GET', '/api/frontend/features/nope', web), 404, 'Not found', /No flag named "nope"/);
  refusedWith(t, await frontend('GET', '/api/frontend/features/b-only', web), 404, 'Not found', /No flag named "b-only"/);
  refusedWith(t, await frontend('GET', '/api/proxy/features/b-only', web), 404, 'Not found', /No flag named "b-only"/);
});

t.test("every list is byte for byte its flags' own toggles, whether a context can change them or not", async (t) => {
  // The kinds above: off ("banner"), a typed flag on for everyone without a rule ("colour"), one without a
  // default variant ("no-default"): toggles no context changes, written once per version; the rest decided
  // per request. A key of each environment of the multi-environment project too.
  const queries = [
    'userId=user-3&properties[plan]=beta&properties%5Bcohort%5D=vip',
    'userId=user-9&properties[plan]=alpha',
    'properties[cohort]=alice',
    'sessionId=42',
  ];
  for (const key of [web, staging, production]) {
    for (const query of queries) {
      const all = await frontend('GET', `/api/frontend/all?${query}`, key);
      t.equal(all.status, 200);
      const names = (all.json.toggles as { name: string }[]).map((toggle) => toggle.name);
      t.ok(names.length > 0, 'the project has flags');
      const own = await Promise.all(names.map((name) => frontend('GET', `/api/frontend/features/${name}?${query}`, key)));
      t.equal(all.text, `{"toggles":[${own.map((r) => r.text).join(',')}]}`, `/all ${query}`);
      const on = own.filter((r) => r.json.enabled === true).map((r) => r.text);
      t.equal((await frontend('GET', `/api/frontend?${query}`, key)).text, `{"toggles":[${on.join(',')}]}`, `on ones ${query}`);
    }
  }
});

t.test('ETag: an unchanged poll is a 304, the stock client sends it back; a change is a new answer', async (t) => {
  const first = await frontend('GET', '/api/frontend?userId=u1', web);
  const tag = first.headers.get('etag');
  t.match(tag, /^"[^"]+"$/);
  t.match(first.headers.get('access-control-expose-headers'), /ETag/, 'a page can read the ETag');
  const again = await frontend('GET', '/api/frontend?userId=u1', web, { headers: { 'if-none-match': tag! } });
  t.equal(again.status, 304);
  t.equal(again.text, '');
  t.equal(again.headers.get('etag'), tag);
  const other = await frontend('GET', '/api/frontend/all?userId=u1', web, { headers: { 'if-none-match': tag! } });
  t.equal(other.status, 200, 'another answer is not the tagged one');

  const { client, seen } = await startClient(t, web, { context: { userId: 'u1' } });
  await client.updateContext({ userId: 'u1' });
  t.same(
    seen.map(({ status, ifNoneMatch }) => ({ status, ifNoneMatch })),
    [
      { status: 200, ifNoneMatch: null },
      { status: 304, ifNoneMatch: tag },
    ],
    "the stock client's second poll sends the ETag back and gets a 304",
  );
  t.equal(client.isEnabled('colour'), true, 'and keeps its answers');

  world.run('flagCreate', { projectId: ids.single, body: { name: 'zz-new', enabled: true, trafficPercentage: 100 }, principal: kOperator });
  const changed = await frontend('GET', '/api/frontend?userId=u1', web, { headers: { 'if-none-match': tag! } });
  t.equal(changed.status, 200, 'a new flag is a new answer');
  t.not(changed.headers.get('etag'), tag);
  t.ok((changed.json.toggles as { name: string }[]).some((toggle) => toggle.name === 'zz-new'));
});

t.test("the SDK's metrics and registration are accepted (202) for a key that may use the API", async (t) => {
  const { client, seen } = await startClient(t, web, { context: { userId: 'u1' } });
  client.isEnabled('colour');
  await client.sendMetrics();
  const sent = seen.find((request) => request.url.endsWith('/api/frontend/client/metrics'));
  t.equal(sent?.status, 202, 'the stock client posted its metrics');
  for (const path of [
    '/api/frontend/client/metrics',
    '/api/frontend/client/register',
    '/api/proxy/client/metrics',
    '/api/proxy/client/register',
  ]) {
    const accepted = await frontend('POST', path, web, { body: { appName: 'web', bucket: { toggles: {} } } });
    t.equal(accepted.status, 202, path);
    t.equal(accepted.text, '');
    refusedWith(t, await frontend('POST', path, eventsOnly, { body: {} }), 403, 'Insufficient permission', /may not be used for frontend/);
  }
});

t.test("the key decides the project's environment; the context's environment is not read", async (t) => {
  create(
    'production-only',
    { environments: { staging: { enabled: false }, production: { enabled: true, trafficPercentage: 100 } } },
    ids.multi,
  );
  const answer = async (key: string, name: string, query: string) => {
    const r = await frontend('GET', `/api/frontend/all?${query}`, key);
    t.equal(r.status, 200);
    return (r.json.toggles as { name: string; enabled: boolean }[]).find((toggle) => toggle.name === name)!.enabled;
  };
  t.equal(await answer(staging, 'search', 'userId=u1&environment=production'), true, 'search is on in staging');
  t.equal(await answer(staging, 'production-only', 'userId=u1&environment=production'), false);
  t.equal(await answer(production, 'search', 'userId=u1&environment=staging'), false, 'and off in production');
  t.equal(await answer(production, 'production-only', 'userId=u1&environment=staging'), true);
  const { client } = await startClient(t, staging, { context: { userId: 'u1' } });
  t.equal(client.isEnabled('search'), true);
  t.equal(client.isEnabled('checkout'), false, "another project's flag is not there");
});

t.test('refusals: no key, an API token, a relay key, a revoked key, a key without the use, anything else', async (t) => {
  refusedWith(t, await frontend('GET', '/api/frontend', null), 401, 'Missing bearer token', /client key/);
  refusedWith(t, await frontend('GET', '/api/frontend', secrets.read), 401, 'Invalid token', /API tokens never go in a browser or app/);
  refusedWith(t, await frontend('GET', '/api/frontend', `Bearer ${secrets.write}`), 401, 'Invalid token', /API tokens never go/);
  refusedWith(
    t,
    await frontend('GET', '/api/frontend/all', `fwr_${'a'.repeat(40)}`),
    401,
    'Invalid token',
    /This is a relay key: relay keys never go/,
  );
  refusedWith(t, await frontend('GET', '/api/frontend', revoked.secret), 401, 'Token revoked', new RegExp(revoked.id));
  refusedWith(
    t,
    await frontend('GET', '/api/frontend', eventsOnly),
    403,
    'Insufficient permission',
    /may not be used for frontend \(its uses: events\)/,
  );
  refusedWith(t, await frontend('GET', '/api/frontend', `fwc_${'a'.repeat(40)}`), 401, 'Invalid token', /does not exist/);
  refusedWith(t, await frontend('GET', '/api/proxy', 'not-a-key'), 401, 'Malformed bearer token', /fwc_/);
  refusedWith(t, await frontend('GET', '/api/frontend/features/colour', secrets.read), 401, 'Invalid token', /API tokens never go/);
  refusedWith(t, await frontend('POST', '/api/frontend', web, { body: '[1]' }), 400, 'Invalid request', /JSON object/);
  const notJson = await call(server.baseUrl, 'POST', '/api/frontend', { headers: { authorization: web }, raw: '{"context":' });
  refusedWith(t, notJson, 400, 'Invalid request', /not valid JSON/);
  // A client key opens nothing of the Management API.
  t.equal((await call(server.baseUrl, 'GET', '/api/v1/flags', { token: web })).status, 401);

  // The stock client with a revoked key reports the refusal and answers nothing.
  const errors: unknown[] = [];
  const client = new UnleashClient({
    url: `${server.baseUrl}/api/frontend`,
    clientKey: revoked.secret,
    appName: 'flagwire-test',
    disableRefresh: true,
    disableMetrics: true,
    storageProvider: new InMemoryStorageProvider(),
  });
  client.on('error', (err: unknown) => errors.push(err));
  t.teardown(() => client.stop());
  await client.start();
  t.match(errors, [{ type: 'HttpError', code: 401 }]);
  t.equal(client.isEnabled('colour'), false);
});

t.test('a front-end key reads no rule: every route that shows a flag’s rules refuses it', async (t) => {
  const flagId = ids.flag;
  const rules = [
    '/api/client/features',
    '/api/client/streaming',
    '/api/v1/flags',
    `/api/v1/flags/${flagId}`,
    `/api/v1/flags/${flagId}/flagd`,
    `/v1/flag-sets/${ids.single}`,
  ];
  for (const path of rules) {
    for (const authorization of [web, `Bearer ${web}`]) {
      const r = await frontend('GET', path, authorization);
      t.equal(r.status, 401, `${path}: 401`);
      t.notOk(/"strategies"|"trafficPercentage"|"cohorts"|"targeting"/.test(r.text), `${path}: no rule in the refusal`);
    }
  }
  t.equal((await frontend('GET', '/api/frontend', web)).status, 200, 'the same key answers on the front-end API');
});

t.test('a key revoked while in use is refused from the next request on', async (t) => {
  const key = makeKey('soon revoked', ['frontend']);
  for (let i = 0; i < 3; i++) t.equal((await frontend('GET', '/api/frontend?userId=u1', key.secret)).status, 200, 'in use');
  world.run('clientKeyRevoke', { principal: kOperator, keyId: key.id });
  refusedWith(t, await frontend('GET', '/api/frontend?userId=u1', key.secret), 401, 'Token revoked', new RegExp(key.id));
  refusedWith(t, await frontend('POST', '/api/proxy/client/metrics', key.secret, { body: {} }), 401, 'Token revoked', /revoked/);
});

t.test('a key whose environment was renamed away is refused, as a token keeps its old name (spec: Token settings)', async (t) => {
  world.run('envRename', { projectId: ids.multi, from: 'staging', to: 'stage', principal: principalOf(ids.owner) });
  t.teardown(() => world.run('envRename', { projectId: ids.multi, from: 'stage', to: 'staging', principal: principalOf(ids.owner) }));
  for (const path of ['/api/frontend', '/api/frontend/all', '/api/frontend/features/search'])
    refusedWith(t, await frontend('GET', `${path}?userId=u1`, staging), 403, 'Forbidden', /environment is no longer one of its project's/);
  t.equal((await frontend('GET', '/api/frontend?userId=u1', production)).status, 200, "the other environment's key still answers");
});

t.test('CORS: the preflight allows what unleash-proxy-client sends; every answer allows any origin', async (t) => {
  for (const path of ['/api/frontend', '/api/frontend/all', '/api/proxy/client/metrics']) {
    const preflight = await call(server.baseUrl, 'OPTIONS', path, {
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization,if-none-match,unleash-appname,unleash-connection-id,unleash-sdk',
      },
    });
    t.equal(preflight.status, 204, path);
    t.equal(preflight.headers.get('access-control-allow-origin'), '*');
    const allowed = preflight.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/);
    for (const header of ['authorization', 'content-type', 'if-none-match', 'unleash-appname', 'unleash-connection-id', 'unleash-sdk'])
      t.ok(allowed.includes(header), `${path} allows ${header}`);
    t.match(preflight.headers.get('access-control-allow-methods'), /POST/);
  }
  const answer = await frontend('GET', '/api/frontend', web, { headers: { origin: 'https://shop.example' } });
  t.equal(answer.headers.get('access-control-allow-origin'), '*');
  const refused = await frontend('GET', '/api/frontend', null, { headers: { origin: 'https://shop.example' } });
  t.equal(refused.headers.get('access-control-allow-origin'), '*', 'a refusal too, so the page can read why');
});

t.test('generated requests: never a 5xx, every 200 a toggle or a list of them', async (t) => {
  const seed = Number(process.env.FLAGWIRE_FUZZ_SEED ?? Date.now() % 2 ** 31);
  const word = fc.oneof(fc.constantFrom(...kProtoWords, ...kBadEscapes, 'cohort', 'plan', ''), unicode);
  const paramName = fc.oneof(
    fc.constantFrom('userId', 'sessionId', 'environment', 'properties', 'properties[]', 'properties[cohort]', 'properties[plan]'),
    word.map((w) => `properties[${w}]`),
    word,
  );
  const param = fc.tuple(paramName, fc.oneof(word, fc.constantFrom('beta', 'alice', 'vip'))).map(([k, v]) => `${k}=${v}`);
  const context = fc.dictionary(
    fc.oneof(fc.constantFrom('userId', 'sessionId', 'properties', 'context'), word),
    fc.oneof(fc.jsonValue(), fc.dictionary(word, fc.jsonValue(), { maxKeys: 5 })),
    { maxKeys: 6 },
  );
  const body = fc.oneof(
    context.map((c) => JSON.stringify({ context: c })),
    context.map((c) => JSON.stringify(c)),
    fc.json(),
    fc.constantFrom('', '{', 'null', '[]', '{"context": null}', '{"context": {"properties": [1]}}', '"x"', ...kBadEscapes),
  );
  const request = fc.record({
    base: fc.constantFrom('/api/frontend', '/api/proxy'),
    path: fc.oneof(
      fc.constantFrom('', '/all', '/client/metrics', '/client/register'),
      fc.oneof(fc.constantFrom(...kNames, 'b-only'), word).map((name) => `/features/${name === '' ? 'x' : name}`),
    ),
    method: fc.constantFrom('GET', 'POST'),
    query: fc.array(param, { maxLength: 6 }).map((ps) => ps.join('&')),
    body,
    key: fc.oneof(
      { weight: 6, arbitrary: fc.constant(web) },
      { weight: 1, arbitrary: fc.constantFrom(eventsOnly, '', 'Bearer ', secrets.read, 'fwc_short') },
    ),
  });
  let answered = 0;
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const reply = await call(server.baseUrl, r.method, `${r.base}${r.path}?${r.query}`, {
        headers: r.key === '' ? {} : { authorization: r.key },
        ...(r.method === 'POST' ? { raw: r.body } : {}),
      });
      const describe = `${r.method} ${r.base}${r.path}?${r.query} ${r.method === 'POST' ? r.body : ''}: ${reply.status} ${reply.text.slice(0, 300)}`;
      if (reply.status >= 500 || reply.status < 200) throw new Error(describe);
      if (reply.status !== 200) return;
      answered++;
      const toggles = r.path.startsWith('/features/') ? [reply.json] : reply.json?.toggles;
      if (!Array.isArray(toggles)) throw new Error(`not toggles: ${describe}`);
      for (const toggle of toggles) {
        const ok =
          typeof toggle.name === 'string' &&
          typeof toggle.enabled === 'boolean' &&
          typeof toggle.variant?.name === 'string' &&
          toggle.impressionData === false;
        if (!ok) throw new Error(`a broken toggle: ${describe}`);
      }
    }),
    { numRuns: 400, seed },
  );
  t.ok(answered > 40, `answered ${answered} of 400 (seed ${seed}): the generated requests reach the answers`);
});

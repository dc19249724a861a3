// Black-box: flags in Unleash's model through the Management API (issue 60, item 3): made and changed by
// POST and PATCH /api/v1/flags (the model shown as stored), every refusal in the spec's envelope naming
// where the model is wrong and changing nothing; parts the SDKs never meet (an unknown operator, a
// missing segment, an expression RE2 does not compile, inverted or not) stored, named on the flag, and
// answered by the front-end API and OFREP as by the stock SDK on the client API; GET /api/client/features serving models verbatim with
// their segments under ids unique in the answer; flagd's flag sets leaving them out with why; a
// dependency on another flag in Unleash's model answered on OFREP; the state's percentage and audience
// not read.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startUnleashSdk } from '../helpers/unleash-sdk.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t);
const { ids, secrets } = world;
const post = (body: unknown) => call(server.baseUrl, 'POST', '/api/v1/flags', { token: secrets.write, body });
const patch = (id: string, body: unknown) => call(server.baseUrl, 'PATCH', `/api/v1/flags/${id}`, { token: secrets.write, body });
const ofrep = (key: string, context: Record<string, unknown>) =>
  call(server.baseUrl, 'POST', `/ofrep/v1/evaluate/flags/${encodeURIComponent(key)}`, {
    body: { context },
    headers: { 'x-flagwire-project': ids.single },
  });

const kBeta = { contextName: 'plan', operator: 'IN', values: ['beta'] };
const kPro = { contextName: 'plan', operator: 'IN', values: ['pro'] };
const betaModel = {
  strategies: [
    {
      name: 'flexibleRollout',
      parameters: { rollout: '100', stickiness: 'default', groupId: 'beta-gate' },
      segments: [1],
      variants: [{ name: 'blue', weight: 1000, stickiness: 'default', payload: { type: 'json', value: '{"c": "blue"}' } }],
    },
  ],
  segments: [{ id: 1, name: 'beta users', constraints: [kBeta] }],
};

t.test('made, shown as stored, evaluated on OFREP; its percentage and audience not read', async (t) => {
  const made = await post({ name: 'beta-gate', enabled: true, trafficPercentage: 0, audienceId: ids.audience, unleash: betaModel });
  t.equal(made.status, 201, JSON.stringify(made.json));
  t.same(made.json.unleash, betaModel, 'the model as sent');
  const shown = await call(server.baseUrl, 'GET', `/api/v1/flags/${made.json.id}`, { token: secrets.read });
  t.same(shown.json.unleash, betaModel);
  const beta = await ofrep('beta-gate', { targetingKey: 'u1', plan: 'beta' });
  t.equal(beta.status, 200);
  t.match(beta.json, {
    value: true,
    variant: 'blue',
    reason: 'TARGETING_MATCH',
    metadata: { unleashPayloadType: 'json', unleashPayload: '{"c": "blue"}' },
  });
  t.match((await ofrep('beta-gate', { targetingKey: 'u1', plan: 'free' })).json, { value: false, variant: 'disabled', reason: 'DEFAULT' });
  const evaluation = await call(server.baseUrl, 'GET', `/v1/flags/${made.json.id}?targetingKey=u1&plan=beta`);
  t.match(evaluation.json, { enabled: true, variant: 'blue', value: true, unleashPayloadType: 'json', unleashPayload: '{"c": "blue"}' });
});

t.test("a dependency on another flag in Unleash's model: enabled, with a variant, or disabled", async (t) => {
  const child = (name: string, dependency: Record<string, unknown>) =>
    post({ name, enabled: true, unleash: { strategies: [{ name: 'default' }], dependencies: [dependency] } });
  t.equal((await child('needs-beta', { feature: 'beta-gate' })).status, 201);
  t.equal((await child('needs-blue', { feature: 'beta-gate', variants: ['blue'] })).status, 201);
  t.equal((await child('needs-red', { feature: 'beta-gate', variants: ['red'] })).status, 201);
  t.equal((await child('without-beta', { feature: 'beta-gate', enabled: false })).status, 201);
  t.equal((await child('needs-checkout', { feature: 'checkout' })).status, 201, "a parent not in Unleash's model may be named");
  const answers = async (plan: string) => {
    const out: Record<string, unknown> = {};
    for (const name of ['needs-beta', 'needs-blue', 'needs-red', 'without-beta', 'needs-checkout'])
      out[name] = (await ofrep(name, { targetingKey: 'u1', plan })).json.value;
    return out;
  };
  t.same(await answers('beta'), {
    'needs-beta': true,
    'needs-blue': true,
    'needs-red': false,
    'without-beta': false,
    'needs-checkout': false,
  });
  t.same(await answers('free'), {
    'needs-beta': false,
    'needs-blue': false,
    'needs-red': false,
    'without-beta': true,
    'needs-checkout': false,
  });
  // The client API leaves out the flag whose parent the SDK would read otherwise than the server does.
  const features = await call(server.baseUrl, 'GET', '/api/client/features', { headers: { authorization: secrets.read } });
  t.match(
    features.json.flagwire.omitted.find((o: { name: string }) => o.name === 'needs-checkout'),
    { reason: /depends on "checkout", whose state here is not in Unleash's model/ },
  );
  t.ok(
    features.json.features.some((f: { name: string }) => f.name === 'needs-blue'),
    'the others are served',
  );
});

t.test("the client API serves models verbatim, segments renumbered so that two flags' id 1 do not meet", async (t) => {
  const pro = {
    strategies: [{ name: 'default', segments: [1] }],
    segments: [{ id: 1, constraints: [kPro] }],
    variants: [{ name: 'a', weight: 1, payload: { type: 'csv', value: 'x,y' }, overrides: [{ contextName: 'userId', values: ['u9'] }] }],
    impressionData: true,
  };
  t.equal((await post({ name: 'pro-only', enabled: true, unleash: pro })).status, 201);
  const r = await call(server.baseUrl, 'GET', '/api/client/features', { headers: { authorization: secrets.read } });
  t.equal(r.status, 200);
  const feature = (name: string) => r.json.features.find((f: { name: string }) => f.name === name);
  const beta = feature('beta-gate');
  const proFeature = feature('pro-only');
  t.same(beta.strategies[0].variants, betaModel.strategies[0]!.variants);
  t.same(proFeature.variants, pro.variants);
  t.equal(proFeature.impressionData, true);
  const segment = (id: number) => r.json.segments.find((s: { id: number }) => s.id === id);
  t.not(beta.strategies[0].segments[0], proFeature.strategies[0].segments[0], "each flag's segment has its own id");
  t.same(segment(beta.strategies[0].segments[0]).constraints, [kBeta]);
  t.same(segment(proFeature.strategies[0].segments[0]).constraints, [kPro]);
  // The front-end API serves the variant as stored: a csv payload, and impressionData.
  const key = world.run('clientKeyCreate', {
    principal: (await import('../../src/actor/audit-actor.js')).kOperator,
    projectId: ids.single,
    received: (await import('../../src/model/request-body.js')).jsonBody(JSON.stringify({ name: 'web', uses: ['frontend'] })),
  }).secret;
  const toggle = await call(server.baseUrl, 'GET', '/api/frontend/features/pro-only?userId=u9&plan=pro', {
    headers: { authorization: key },
  });
  t.same(toggle.json, {
    name: 'pro-only',
    enabled: true,
    variant: { name: 'a', enabled: true, payload: { type: 'csv', value: 'x,y' } },
    impressionData: true,
  });
});

t.test("flagd's flag sets leave a flag in Unleash's model out, and say why", async (t) => {
  const made = await post({ name: 'for-flagd', enabled: true, unleash: { strategies: [] } });
  const r = await call(server.baseUrl, 'GET', `/api/v1/flags/${made.json.id}/flagd`, { token: secrets.read });
  t.same({ served: r.json.flagd[0].served }, { served: false });
  t.match(r.json.flagd[0].reason, /Unleash's model/);
});

t.test("refusals: in the spec's envelope, naming where the model is wrong, and nothing changes", async (t) => {
  const bad = await post({
    name: 'bad-model',
    enabled: true,
    unleash: {
      strategies: [
        { name: 'applicationHostname' },
        { name: 'flexibleRollout', parameters: { rollout: '150' } },
        { name: 'default', constraints: [{ contextName: 'v', operator: 'SEMVER_GT', value: 'one' }] },
      ],
    },
  });
  t.equal(bad.status, 400);
  t.equal(bad.json.error, 'Invalid request', "the spec's envelope");
  t.match(bad.json.docs, /#invalid-request$/);
  t.match(bad.json.detail, /unleash\.strategies\[0\]: "applicationHostname" is not a strategy Flagwire evaluates/);
  t.match(bad.json.detail, /unleash\.strategies\[1\]\.parameters\.rollout: a percentage from 0 to 100 is required/);
  t.match(bad.json.detail, /unleash\.strategies\[2\]\.constraints\[0\]: "one" is not a semantic version/);
  const shape = await post({ name: 'bad-shape', unleash: { strategies: [{ name: 'default', extra: 1 }] } });
  t.equal(shape.status, 400);
  t.match(shape.json.detail, /unleash\.strategies\[0\]\.extra|unknown field/);
  const both = await post({ name: 'both', enabled: true, variants: { a: 'a' }, unleash: { strategies: [] } });
  t.equal(both.status, 400);
  t.match(both.json.detail, /no typed variants/);
  const list = await call(server.baseUrl, 'GET', '/api/v1/flags', { token: secrets.read });
  t.notOk(
    list.json.flags.some((f: { name: string }) => ['bad-model', 'bad-shape', 'both'].includes(f.name)),
    'no refused flag was made',
  );
});

t.test('patch: a model replaced whole, refused with its path, and removed with null', async (t) => {
  const id = (await post({ name: 'patched', enabled: true, trafficPercentage: 100, unleash: { strategies: [] } })).json.id as string;
  const bad = await patch(id, { unleash: { strategies: [{ name: 'default', constraints: [{ contextName: 'n', operator: 'NUM_GT' }] }] } });
  t.equal(bad.status, 400);
  t.match(bad.json.detail, /"unleash\.strategies\[0\]\.constraints\[0\]": NUM_GT takes one operand, "value"/);
  t.equal((await ofrep('patched', { targetingKey: 'u' })).json.value, true, 'the refused patch changed nothing');
  const userOnly = { strategies: [{ name: 'userWithId', parameters: { userIds: 'u1, u2' } }] };
  const replaced = await patch(id, { unleash: userOnly });
  t.equal(replaced.status, 200);
  t.same(replaced.json.flag.unleash, userOnly);
  t.same(
    [(await ofrep('patched', { targetingKey: 'u2' })).json.value, (await ofrep('patched', { targetingKey: 'u3' })).json.value],
    [true, false],
  );
  t.equal((await patch(id, { unleash: userOnly })).json.changed, false, 'the same model again changes nothing');
  const removed = await patch(id, { unleash: null });
  t.equal(removed.status, 200);
  t.equal(removed.json.flag.unleash, undefined);
  t.equal((await ofrep('patched', { targetingKey: 'u3' })).json.value, true, 'a boolean flag at 100% again');
  const audit = world.store.listAudit(ids.single, { limit: 10, before: null });
  t.ok(
    audit.some((e) => e.flagId === id && e.changes.unleash !== undefined),
    "the audit log records the model's change",
  );
});

t.test('patch: a percentage, audience or cohorts the model does not read is refused, naming what to change instead', async (t) => {
  const made = await post({ name: 'unread-fields', enabled: true, trafficPercentage: 0, unleash: betaModel });
  t.equal(made.status, 201);
  const id = made.json.id as string;
  const before = await call(server.baseUrl, 'GET', `/api/v1/flags/${id}`, { token: secrets.read });
  for (const [field, value, instead] of [
    ['trafficPercentage', 50, /flexibleRollout's "rollout" parameter/],
    ['audienceId', ids.audience, /a strategy's constraints or segments/],
    ['cohorts', ['vip'], /userWithId's "userIds"/],
  ] as const) {
    const r = await patch(id, { [field]: value });
    t.equal(r.status, 400, `${field}: ${JSON.stringify(r.json)}`);
    t.equal(r.json.error, 'Invalid request');
    t.match(r.json.detail, new RegExp(`^"${field}": this state answers by Unleash's model, which does not read it`));
    t.match(r.json.detail, instead);
    t.match(r.json.detail, /or send "unleash": null/);
  }
  const after = await call(server.baseUrl, 'GET', `/api/v1/flags/${id}`, { token: secrets.read });
  t.same(after.json, before.json, 'nothing changed');
  t.equal((await patch(id, { trafficPercentage: 0, enabled: true })).json.changed, false, 'the stored value again changes nothing');
  const left = await patch(id, { unleash: null, trafficPercentage: 50 });
  t.equal(left.status, 200, 'leaving the model, the percentage is read again');
  t.equal(left.json.flag.trafficPercentage, 50);
});

t.test("patch of a group flag's environment in Unleash's model: the unread fields refused there too", async (t) => {
  const multiPost = (body: unknown) => call(server.baseUrl, 'POST', '/api/v1/flags', { token: secrets.multiWrite, body });
  const made = await multiPost({ name: 'unread-group', environments: { production: { enabled: true, unleash: betaModel } } });
  t.equal(made.status, 201, JSON.stringify(made.json));
  const patchEnv = (body: unknown) =>
    call(server.baseUrl, 'PATCH', `/api/v1/flags/${made.json.id}?env=production`, { token: secrets.multiWrite, body });
  const refused = await patchEnv({ trafficPercentage: 30, cohorts: ['vip'] });
  t.equal(refused.status, 400);
  t.match(refused.json.detail, /"trafficPercentage": this state answers by Unleash's model/);
  t.match(refused.json.detail, /"cohorts": this state answers by Unleash's model/);
  t.equal((await patchEnv({ cohorts: [] })).json.changed, false, 'inheriting as it did changes nothing, and is no refusal');
  const staging = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${made.json.id}?env=staging`, {
    token: secrets.multiWrite,
    body: { trafficPercentage: 30 },
  });
  t.equal(staging.status, 200, 'an environment not in the model takes its percentage');
});

t.test('parts the SDKs never meet are stored, named on the flag, and answered as the stock SDK answers them', async (t) => {
  const constrained = (constraint: Record<string, unknown>) => ({ strategies: [{ name: 'default', constraints: [constraint] }] });
  const models: Record<string, unknown> = {
    'odd-operator': constrained({ contextName: 'plan', operator: 'STR_FUZZY', values: ['pro'] }),
    'odd-operator-inverted': constrained({ contextName: 'plan', operator: 'STR_FUZZY', values: ['pro'], inverted: true }),
    lookahead: constrained({ contextName: 'plan', operator: 'REGEX', value: '^(?=p)pro$' }),
    // Unleash's SDKs catch the failed compile as a constraint not met, and invert that: always met.
    'backreference-inverted': constrained({ contextName: 'plan', operator: 'REGEX', value: '^(p)\\1$', inverted: true }),
    'missing-segment': {
      strategies: [
        { name: 'default', segments: [4] },
        { name: 'userWithId', parameters: { userIds: 'u7' } },
      ],
    },
  };
  const flagIds = new Map<string, string>();
  for (const [name, unleash] of Object.entries(models)) {
    const made = await post({ name, enabled: true, unleash });
    t.equal(made.status, 201, `${name}: stored (${JSON.stringify(made.json)})`);
    t.same(made.json.unleash, unleash, `${name}: as sent`);
    t.equal(made.json.unleashWarnings.length, 1, `${name}: one part named`);
    flagIds.set(name, made.json.id);
  }
  const shown = async (name: string) =>
    (await call(server.baseUrl, 'GET', `/api/v1/flags/${flagIds.get(name)}`, { token: secrets.read })).json.unleashWarnings as string[];
  t.match(
    (await shown('odd-operator'))[0],
    /^unleash\.strategies\[0\]\.constraints\[0\]: "STR_FUZZY" is not one of Unleash's operators .*never met, inverted or not$/,
  );
  t.match(
    (await shown('lookahead'))[0],
    /^unleash\.strategies\[0\]\.constraints\[0\]: "\^\(\?=p\)pro\$" is not a regular expression RE2 accepts, so the constraint is never met$/,
  );
  t.match((await shown('backreference-inverted'))[0], /RE2 accepts, so the inverted constraint is always met$/);
  t.match((await shown('missing-segment'))[0], /^unleash\.strategies\[0\]\.segments: no segment of the model has the id 4/);
  const beta = await call(
    server.baseUrl,
    'GET',
    `/api/v1/flags/${(await post({ name: 'no-warnings', enabled: true, unleash: betaModel })).json.id}`,
    {
      token: secrets.read,
    },
  );
  t.equal(beta.json.unleashWarnings, undefined, 'a model without such parts shows none');

  const key = world.run('clientKeyCreate', {
    principal: (await import('../../src/actor/audit-actor.js')).kOperator,
    projectId: ids.single,
    received: (await import('../../src/model/request-body.js')).jsonBody(JSON.stringify({ name: 'web', uses: ['frontend'] })),
  }).secret;
  const sdk = await startUnleashSdk(t, server.baseUrl, secrets.read, 'never-met-test');
  const expected: Record<string, boolean[]> = {
    'odd-operator': [false, false],
    'odd-operator-inverted': [false, false],
    lookahead: [false, false],
    'backreference-inverted': [true, true],
    'missing-segment': [false, true],
  };
  const contexts = [
    { userId: 'u1', properties: { plan: 'pro' } },
    { userId: 'u7', properties: { plan: 'pp' } },
  ];
  for (const [name, answers] of Object.entries(expected)) {
    contexts.forEach((context, i) => {
      t.equal(sdk.isEnabled(name, context), answers[i], `the stock SDK: ${name} for ${context.userId}`);
    });
    for (const [i, context] of contexts.entries()) {
      const toggle = await call(server.baseUrl, 'POST', `/api/frontend/features/${name}`, {
        headers: { authorization: key },
        body: { context },
      });
      t.equal(toggle.status === 200 && toggle.json.enabled === true, answers[i], `the front-end API: ${name} for ${context.userId}`);
      const answer = await ofrep(name, { targetingKey: context.userId, ...context.properties });
      t.equal(answer.json.value, answers[i], `OFREP: ${name} for ${context.userId}`);
    }
  }
});

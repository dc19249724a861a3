// The OFREP evaluation route set over the real engine and store, in-process: bodies, reasons, errors, the bulk
// route and its ETag (src/ofrep/evaluate.ts).
import { rmSync } from 'node:fs';
import t from 'tap';
import { Clock } from '../../src/clock.js';
import { bucket } from '../../src/evaluation/engine/bucket.js';
import { EvalEngine } from '../../src/evaluation/engine/engine.js';
import { ResultReader, ResultWriter } from '../../src/evaluation/engine/protocol.js';
import { OfrepEvaluator } from '../../src/ofrep/evaluate.js';
import type { FlagCreate } from '../../src/model/schemas.js';
import { kOperator } from '../../src/actor/audit-actor.js';
import { startBatchBudget } from '../../src/targeting/work-budget.js';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';

const world = buildEvalWorld();
const clock = Clock.create();
const engine = new EvalEngine(world.store, () => clock.now());
const ofrep = new OfrepEvaluator(engine);
t.teardown(async () => {
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});
const { ids } = world;

function one(key: string, context: object | string | null, project = '') {
  engine.beginBatch();
  const out = new ResultWriter(new ArrayBuffer(16), 1);
  const body = context === null ? '' : typeof context === 'string' ? context : JSON.stringify({ context });
  ofrep.evaluateFlag(key, body, project, out);
  const r = new ResultReader(out.finish());
  const text = r.bodyText(0);
  return { status: r.status(0), json: JSON.parse(text), text };
}

/** A writer that counts the bytes pushed into its answers: a 304 that built no body pushed only its tag. */
class PushCounter extends ResultWriter {
  pushed = 0;
  pushes = 0;
  override push(body: Uint8Array): void {
    this.pushed += body.length;
    this.pushes++;
    super.push(body);
  }
}

/** `built`: whether a body was written before the answer (more pushed than its tag); `pushes`: the body's pieces. */
function bulk(project: string, context: object | null, ifNoneMatch = '') {
  engine.beginBatch();
  const out = new PushCounter(new ArrayBuffer(64), 1);
  ofrep.evaluateBulk(project, context === null ? '' : JSON.stringify({ context }), ifNoneMatch, out);
  const r = new ResultReader(out.finish());
  const text = r.bodyText(0);
  const etag = r.tagText(0);
  return {
    status: r.status(0),
    etag,
    text,
    json: text === '' ? null : JSON.parse(text),
    built: out.pushed > etag.length,
    pushes: out.pushes,
  };
}

t.test('success: {key, value, reason, variant, metadata}, reasons from the deciding rule', async (t) => {
  t.same((({ status, json }) => ({ status, json }))(one(ids.on, { targetingKey: 'u1' })), {
    status: 200,
    json: { key: ids.on, value: true, reason: 'STATIC', variant: 'on', metadata: { id: ids.on, name: 'on' } },
  });
  t.same(one(ids.off, { cohort: 'alice' }).json, {
    key: ids.off,
    value: false,
    reason: 'DISABLED',
    variant: 'off',
    metadata: { id: ids.off, name: 'off' },
  });
  t.same(one(ids.zero, { cohort: 'vip' }).json.reason, 'TARGETING_MATCH', 'listed cohort');
  t.same(one(ids.zero, { targetingKey: 'x' }).json, {
    key: ids.zero,
    value: false,
    reason: 'STATIC',
    variant: 'off',
    metadata: { id: ids.zero, name: 'zero' },
  });
  for (let i = 0; i < 50; i++) {
    const r = one(ids.half, { targetingKey: `u${i}` }).json;
    t.same([r.value, r.reason, r.variant], [bucket(ids.half, `u${i}`) < 50, 'SPLIT', bucket(ids.half, `u${i}`) < 50 ? 'on' : 'off']);
  }
  t.same(one(ids.half, { cohort: 'c9' }).json.value, bucket(ids.half, 'c9') < 50, 'cohort is the key without targetingKey');
  t.same(
    [one(ids.aud, { plan: 'beta', country: 'NL' }).json.value, one(ids.aud, { plan: 'beta', country: 'NL' }).json.reason],
    [true, 'TARGETING_MATCH'],
  );
  t.same(
    [one(ids.aud, { plan: 'beta' }).json.value, one(ids.aud, { plan: 'beta' }).json.reason],
    [false, 'TARGETING_MATCH'],
    'audience not matched',
  );
  t.equal(one(ids.on, null).status, 200, 'an empty body is {}');
  t.equal(one(encodeURIComponent(ids.on), {}).json.key, ids.on, 'a percent-encoded key is decoded');
});

t.test('the same answers as GET /v1/flags/{id} for the same caller', async (t) => {
  for (let i = 0; i < 30; i++) {
    engine.beginBatch();
    const out = new ResultWriter(new ArrayBuffer(16), 1);
    engine.evaluateFlag(ids.audHalf, `targetingKey=k${i}&plan=beta&country=NL`, out);
    const classic = JSON.parse(new ResultReader(out.finish()).bodyText(0)).enabled;
    t.equal(one(ids.audHalf, { targetingKey: `k${i}`, plan: 'beta', country: 'NL' }).json.value, classic);
  }
});

t.test('400s: PARSE_ERROR, INVALID_CONTEXT (context; env), TARGETING_KEY_MISSING, GENERAL (audience without plan)', async (t) => {
  const parse = one(ids.on, '{oops');
  t.same([parse.status, parse.json.key, parse.json.errorCode], [400, ids.on, 'PARSE_ERROR']);
  t.equal(one('flg_nope', '{oops').status, 400, 'a body that cannot be read is a 400 before the lookup');
  t.same([one(ids.on, { targetingKey: 1 }).json.errorCode], ['INVALID_CONTEXT']);
  const noEnv = one(ids.group, { targetingKey: 'u' });
  t.same([noEnv.status, noEnv.json.errorCode], [400, 'INVALID_CONTEXT']);
  t.match(noEnv.json.errorDetails, /add "env" to the context \(valid environments: staging, production, dev\)/);
  t.match(one(ids.group, { env: 'prod' }).json.errorDetails, /Unknown environment "prod"/);
  t.same(one(ids.group, { env: 'production', cohort: 'qa' }).json.value, true, 'env from the context');
  const noKey = one(ids.half, {});
  t.same([noKey.status, noKey.json], [400, { key: ids.half, errorCode: 'TARGETING_KEY_MISSING', errorDetails: noKey.json.errorDetails }]);
  t.equal(one(ids.on, {}).status, 200, '100% needs no key');
  const plan = one(ids.freeAud, { plan: 'beta' });
  t.same([plan.status, plan.json.errorCode], [400, 'GENERAL']);
  t.match(plan.json.errorDetails, /Teams or Enterprise/);
});

t.test('404 FLAG_NOT_FOUND: unknown key, or a flag of another project than X-Flagwire-Project', async (t) => {
  const nope = one('flg_nope', {});
  t.same(
    [nope.status, nope.json],
    [
      404,
      {
        key: 'flg_nope',
        errorCode: 'FLAG_NOT_FOUND',
        errorDetails:
          'No flag with id "flg_nope" exists. A flag name works as the key only with the X-Flagwire-Project header naming its project.',
      },
    ],
  );
  t.equal(one(ids.on, {}, ids.single).status, 200);
  // Another project's flag, by id or by name, gets exactly the bytes of a key nothing has.
  const notFound = (key: string, project: string) =>
    JSON.stringify({ key, errorCode: 'FLAG_NOT_FOUND', errorDetails: `No flag with id or name "${key}" exists in project "${project}".` });
  for (const [key, project] of [
    [ids.on, ids.multi],
    ['on', ids.multi],
    ['flg_nope', ids.multi],
    ['nope', ids.single],
    ['group', ids.single],
  ] as const) {
    const r = one(key, {}, project);
    t.same([r.status, r.text], [404, notFound(key, project)], `${key} in ${project}`);
  }
  t.equal(one('on', {}).status, 404, 'a name without the header is not found');
});

t.test('names as keys with X-Flagwire-Project: the same answers as the id, under the name', async (t) => {
  const byName = one('half', { targetingKey: 'u3' }, ids.single);
  const byId = one(ids.half, { targetingKey: 'u3' }, ids.single);
  t.same(byName, { ...byId, json: { ...byId.json, key: 'half' }, text: byName.text });
  t.same(byName.json.metadata, { id: ids.half, name: 'half' });
  t.equal(one(ids.half, { targetingKey: 'u3' }).json.key, ids.half, 'an id works without the header');
  t.same(
    one('aud', { plan: 'beta' }, ids.freeProject).json,
    { ...one(ids.freeAud, { plan: 'beta' }).json, key: 'aud' },
    'each project its own "aud"',
  );
  t.same(one('half', {}, ids.single).json.key, 'half', 'failures carry the key as asked');
  t.equal(one('group', { env: 'production', cohort: 'qa' }, ids.multi).json.value, true, 'group flags by name');
  t.equal(
    one(encodeURIComponent('aud-half'), { plan: 'beta', country: 'NL', targetingKey: 'k' }, ids.single).json.key,
    'aud-half',
    'a percent-encoded name is decoded',
  );
  world.run('flagRename', { principal: kOperator, flagId: ids.zero, name: 'zero-renamed' });
  t.equal(one('zero', {}, ids.single).status, 404, 'after a rename the old name is not found');
  t.same(one('zero-renamed', { targetingKey: 'x' }, ids.single).json.metadata, { id: ids.zero, name: 'zero-renamed' });
  t.equal(one(ids.zero, { targetingKey: 'x' }, ids.single).status, 200, 'the id still works');
  world.run('flagRename', { principal: kOperator, flagId: ids.zero, name: 'zero' });
});

t.test('bulk: every flag in creation order, per-flag failures inline, an ETag', async (t) => {
  const r = bulk(ids.single, { targetingKey: 'u1', plan: 'beta', country: 'NL' });
  t.equal(r.status, 200);
  // Each flag twice: under its id, then under its name.
  t.same(
    r.json.flags.map((f: { key: string }) => f.key),
    [ids.on, 'on', ids.off, 'off', ids.half, 'half', ids.zero, 'zero', ids.aud, 'aud', ids.audHalf, 'aud-half'],
  );
  const half = {
    value: bucket(ids.half, 'u1') < 50,
    reason: 'SPLIT',
    variant: bucket(ids.half, 'u1') < 50 ? 'on' : 'off',
    metadata: { id: ids.half, name: 'half' },
  };
  t.same(r.json.flags.slice(4, 6), [
    { key: ids.half, ...half },
    { key: 'half', ...half },
  ]);
  t.match(r.etag, /^"[0-9a-f]{8}-[0-9a-f]{16}"$/);
  const noKey = bulk(ids.single, {});
  t.same(noKey.json.flags[4], { key: ids.half, errorCode: 'TARGETING_KEY_MISSING', errorDetails: noKey.json.flags[4].errorDetails });
  t.same(noKey.json.flags[5], { ...noKey.json.flags[4], key: 'half' });
  t.same(
    bulk(ids.freeProject, { plan: 'beta' }).json.flags.map((f: { errorCode?: string; value?: boolean }) => f.errorCode ?? f.value),
    ['GENERAL', 'GENERAL', true, true],
  );
  const stream = (project: string, query = '') => [
    { type: 'sse', endpoint: { requestUri: `/ofrep/v1/stream/project/${project}${query}` }, inactivityDelaySec: 120 },
  ];
  t.same(bulk(ids.empty, {}).json, { flags: [], eventStreams: stream(ids.empty) });
  const multi = bulk(ids.multi, { env: 'production', cohort: 'qa', plan: 'beta' }).json;
  t.same(
    multi.flags.map((f: { value: boolean }) => f.value),
    [true, true, true, true],
  );
  t.same(multi.eventStreams, stream(ids.multi, '?env=production'), 'the stream of the environment asked');
});

t.test("bulk: each entry is byte for byte the flag's own answer, the entries no context changes copied as one", async (t) => {
  // A project of every kind of state: booleans static (on, off, disabled), split, listed cohorts, an audience;
  // typed ones without a rule, with a rule, disabled, at 0%; experiments on static, split and typed states.
  const mixed = world.run('projectCreate', { principal: kOperator, name: 'Mixed', orgId: ids.orgTeams }).id;
  const beta = world.run('audienceCreate', {
    principal: kOperator,
    projectId: mixed,
    name: 'Beta',
    rules: [{ attribute: 'plan', values: ['beta'] }],
  }).id;
  const colours = { variants: { red: '#f00', green: '#0f0' }, defaultVariant: 'red' };
  const rule = { if: [{ '==': [{ var: 'plan' }, 'beta'] }, 'green', 'red'] };
  const bodies: FlagCreate[] = [
    { name: 'm-on', enabled: true, trafficPercentage: 100 },
    { name: 'm-zero', enabled: true, trafficPercentage: 0 },
    { name: 'm-disabled', enabled: false, trafficPercentage: 50, cohorts: ['alice'] },
    { name: 'm-half', enabled: true, trafficPercentage: 50 },
    { name: 'm-on-listed', enabled: true, trafficPercentage: 100, cohorts: ['alice'] },
    { name: 'm-zero-listed', enabled: true, trafficPercentage: 0, cohorts: ['alice'] },
    { name: 'm-aud', enabled: true, trafficPercentage: 100, audienceId: beta },
    { name: 'm-typed', enabled: true, trafficPercentage: 100, ...colours },
    { name: 'm-typed-rule', enabled: true, trafficPercentage: 100, ...colours, targeting: rule },
    { name: 'm-typed-off', enabled: false, trafficPercentage: 100, ...colours, targeting: rule },
    { name: 'm-typed-zero', enabled: true, trafficPercentage: 0, ...colours, targeting: rule },
    { name: 'm-typed-no-default', enabled: true, trafficPercentage: 0, variants: colours.variants },
    { name: 'm-exp-on', enabled: true, trafficPercentage: 100, experiment: 'exp-on' },
    { name: 'm-exp-half', enabled: true, trafficPercentage: 50, experiment: 'exp-half' },
    { name: 'm-exp-typed', enabled: true, trafficPercentage: 100, ...colours, experiment: 'exp-typed' },
    { name: 'm-on-2', enabled: true, trafficPercentage: 100 },
  ];
  for (const body of bodies) world.run('flagCreate', { projectId: mixed, body, principal: kOperator });
  const contexts = [
    { targetingKey: 'u1', plan: 'beta', country: 'NL' },
    { targetingKey: 'u2', plan: 'alpha' },
    { cohort: 'alice' },
    { cohort: 'vip', targetingKey: 'u3' },
    {},
    { env: 'production', cohort: 'qa', plan: 'beta' },
    { env: 'staging', targetingKey: 'u4' },
  ];
  const asked = [
    { project: mixed, flags: bodies.length },
    { project: ids.single, flags: 6 },
    { project: ids.multi, flags: 2 },
    { project: ids.freeProject, flags: 2 },
    { project: ids.personal, flags: 1 },
  ];
  for (const { project, flags } of asked) {
    for (const context of contexts) {
      const answer = bulk(project, context);
      if (answer.status !== 200) continue;
      const keys = answer.json.flags.map((f: { key: string }) => f.key);
      t.equal(keys.length, 2 * flags, `${project}: every flag, twice`);
      const entries = keys.map((key: string) => one(key, context, project).text);
      t.equal(
        answer.text.slice(0, answer.text.indexOf('],"eventStreams"')),
        `{"flags":[${entries.join(',')}`,
        `${project} ${JSON.stringify(context)}`,
      );
    }
  }
  // The mixed project's answer: each run of entries that no context changes is one copy, so it is written in
  // fewer pieces than it has flags; a project of kill switches in one.
  const pieces = bulk(mixed, contexts[0]!).pushes;
  t.ok(pieces < bodies.length, `${pieces} pieces for ${bodies.length} flags`);
  const allStatic = world.run('projectCreate', { principal: kOperator, name: 'Switches', orgId: ids.orgTeams }).id;
  for (let i = 0; i < 20; i++)
    world.run('flagCreate', {
      projectId: allStatic,
      body: { name: `s${i}`, enabled: i % 3 !== 0, trafficPercentage: 100 },
      principal: kOperator,
    });
  const switches = bulk(allStatic, { targetingKey: 'u1' });
  t.equal(switches.json.flags.length, 40);
  // `{"flags":[`, the one run of entries, the tail and the ETag.
  t.equal(switches.pushes, 4, 'twenty kill switches: one copy');
});

t.test('bulk 400s: no project header, unknown project, env missing or unknown, bad body', async (t) => {
  t.same(bulk('', {}).status, 400);
  t.match(bulk('', {}).json.errorDetails, /X-Flagwire-Project/);
  t.same([bulk('prj_nope', {}).status, bulk('prj_nope', {}).json.errorCode], [400, 'GENERAL']);
  t.same(bulk(ids.multi, {}).json.errorCode, 'INVALID_CONTEXT');
  t.same(bulk(ids.multi, { env: 'nope' }).json.errorCode, 'INVALID_CONTEXT');
  engine.beginBatch();
  const out = new ResultWriter(new ArrayBuffer(16), 1);
  ofrep.evaluateBulk(ids.single, '[]', '', out);
  t.same(JSON.parse(new ResultReader(out.finish()).bodyText(0)), {
    errorCode: 'PARSE_ERROR',
    errorDetails:
      'The request body must be a JSON object, not an array. Send a JSON object such as {"context": {"targetingKey": "user-1", "plan": "beta"}}.',
  });
});

t.test('ETag: same answer same tag; If-None-Match gives 304 (empty body, the tag); any change gives a new tag', async (t) => {
  const ctx = { targetingKey: 'u1', plan: 'beta', country: 'NL' };
  const first = bulk(ids.single, ctx);
  t.equal(bulk(ids.single, ctx).etag, first.etag, 'stable');
  const cached = bulk(ids.single, ctx, first.etag);
  t.same([cached.status, cached.text, cached.etag], [304, '', first.etag]);
  t.equal(bulk(ids.single, ctx, `"x", W/${first.etag}`).status, 304, 'weak comparison, lists');
  t.equal(bulk(ids.single, ctx, '*').status, 304);
  // A changed context whose results differ must never get a stale 304.
  const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
  const differs = keys.find((k) => bucket(ids.half, k) < 50 !== bucket(ids.half, 'u1') < 50)!;
  const other = bulk(ids.single, { ...ctx, targetingKey: differs }, first.etag);
  t.same([other.status, other.etag === first.etag], [200, false]);
  // A configuration change that does not change this caller's results still changes the tag.
  world.run('flagDescribe', { principal: kOperator, flagId: ids.zero, text: 'changed' });
  const afterConfig = bulk(ids.single, ctx, first.etag);
  t.equal(afterConfig.status, 200);
  t.not(afterConfig.etag, first.etag);
  t.equal(afterConfig.text, first.text, 'same results, new configuration: new tag all the same');
  world.run('flagPatch', { flagId: ids.on, env: null, patch: { enabled: false }, principal: kOperator });
  const afterPatch = bulk(ids.single, ctx, afterConfig.etag);
  t.same([afterPatch.status, afterPatch.json.flags[0].reason], [200, 'DISABLED']);
  world.run('audienceUpdate', { principal: kOperator, audienceId: ids.audience, rules: [{ attribute: 'plan', values: ['gamma'] }] });
  t.equal(bulk(ids.single, ctx, afterPatch.etag).status, 200, 'an audience edit changes the tag');
});

t.test('ETag from what decides the answer: a 304 builds no body; any change of the context changes the tag', async (t) => {
  const ctx = { targetingKey: 'u2', plan: 'beta', country: 'NL' };
  const first = bulk(ids.single, ctx);
  t.equal(first.status, 200);
  const cached = bulk(ids.single, ctx, first.etag);
  t.same([cached.status, cached.etag, cached.built], [304, first.etag, false], 'answered from the tag alone: no body was written');
  // A context whose answers are the same still gets its own tag (the tag names the context, not the bytes).
  const unread = bulk(ids.single, { ...ctx, unread: 'x' }, first.etag);
  t.same([unread.status, unread.text === first.text, unread.etag === first.etag], [200, true, false]);
  t.equal(bulk(ids.single, { ...ctx, unread: 'x' }, unread.etag).status, 304);
  t.not(bulk(ids.single, { ...ctx, country: 'DE' }).etag, first.etag);
  t.not(bulk(ids.single, {}).etag, first.etag);
});

t.test('ETag: a trial that ends changes the answers, and the tag, with nothing stored changing', async (t) => {
  const now = clock.now();
  const org = world.run('orgCreate', { principal: kOperator, name: 'Trial org', plan: 'teams-trial', trialEndsAt: now + 60_000 }).id;
  const project = world.run('projectCreate', { principal: kOperator, name: 'Trial shop', orgId: org }).id;
  const audience = world.run('audienceCreate', {
    principal: kOperator,
    projectId: project,
    name: 'NL',
    rules: [{ attribute: 'country', values: ['NL'] }],
  }).id;
  world.run('flagCreate', {
    projectId: project,
    principal: kOperator,
    body: { name: 'nl', enabled: true, trafficPercentage: 100, audienceId: audience },
  });
  const ctx = { targetingKey: 'u1', country: 'NL' };
  const during = bulk(project, ctx);
  t.same([during.status, during.json.flags[0].value], [200, true]);
  t.equal(bulk(project, ctx, during.etag).status, 304);
  clock.advance(120);
  const after = bulk(project, ctx, during.etag);
  t.same([after.status, after.json.flags[0].errorCode], [200, 'GENERAL'], 'the plan no longer allows audiences: a new answer');
  t.not(after.etag, during.etag);
  t.equal(bulk(project, ctx, after.etag).status, 304);
});

t.test('ETag: a rule that reads $flagd.timestamp has its answer bytes hashed, so the tag follows the time', async (t) => {
  const project = world.run('projectCreate', { principal: kOperator, name: 'Clock shop', orgId: ids.orgTeams }).id;
  const at = Math.floor(clock.now() / 1000) + 60;
  world.run('flagCreate', {
    projectId: project,
    principal: kOperator,
    body: {
      name: 'launch',
      enabled: true,
      trafficPercentage: 100,
      variants: { before: 'B', after: 'A' },
      defaultVariant: 'before',
      targeting: { if: [{ '>': [{ var: '$flagd.timestamp' }, at] }, 'after', 'before'] },
    },
  });
  const ctx = { targetingKey: 'u1' };
  const early = bulk(project, ctx);
  t.same([early.status, early.json.flags[0].value], [200, 'B']);
  t.same([bulk(project, ctx, early.etag).status, bulk(project, ctx, early.etag).built], [304, true], 'a 304, from the evaluated bytes');
  clock.advance(120);
  const late = bulk(project, ctx, early.etag);
  t.same([late.status, late.json.flags[0].value], [200, 'A'], 'the launch time passed: never a stale 304');
  t.not(late.etag, early.etag);
  t.equal(bulk(project, ctx, late.etag).status, 304);
});

t.test("ETag: an answer with a rule's error (a batch's spent work budget) is tagged by its bytes, never as the context's", async (t) => {
  const project = world.run('projectCreate', { principal: kOperator, name: 'Budget shop', orgId: ids.orgTeams }).id;
  world.run('flagCreate', {
    projectId: project,
    principal: kOperator,
    body: {
      name: 'heavy',
      enabled: true,
      trafficPercentage: 100,
      variants: { a: 'A', b: 'B' },
      defaultVariant: 'b',
      targeting: { if: [{ in: ['zz', { cat: [{ var: 's' }, { var: 's' }, { var: 's' }] }] }, 'a', 'b'] },
    },
  });
  const ctx = { targetingKey: 'u1', s: 'x'.repeat(10_000) };
  const whole = bulk(project, ctx);
  t.same([whole.status, whole.json.flags[0].value], [200, 'B'], "within one evaluation's budget");
  // An eval worker's batch: its evaluations share a budget; once spent, the same rule overruns.
  startBatchBudget();
  let spent = bulk(project, ctx);
  for (let i = 0; i < 200 && spent.json.flags[0].errorCode === undefined; i++) spent = bulk(project, ctx);
  t.equal(spent.json.flags[0].errorCode, 'GENERAL', 'the batch budget is spent');
  t.not(spent.etag, whole.etag, 'the error answer does not get the tag of the context');
  t.equal(bulk(project, ctx, whole.etag).status, 304, 'the context tag still stands for the answer a full budget gives');
  startBatchBudget();
  t.equal(bulk(project, ctx, spent.etag).status, 200, 'a client holding the error answer gets the real one');
  startBatchBudget();
});

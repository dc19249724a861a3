// The worker-side engine against a real store, in-process: routes, env handling, the 403 decision,
// the project route, and the freshness rule (configSeq invalidation after resetReadTxn).
import { kOperator } from '../../../src/actor/audit-actor.js';
import t from 'tap';
import { bucket } from '../../../src/evaluation/engine/bucket.js';
import { engineOverWorld } from './eval-world.js';

const { world, ids, clock, answer: call } = engineOverWorld(t);

const flag = (id: string, query = '') => call('flag', id, query);
const project = (id: string, query = '') => call('project', id, query);

t.test('single flag: {id, name, enabled}, exactly that body', async (t) => {
  t.same(flag(ids.on), {
    status: 200,
    json: { id: ids.on, name: 'on', enabled: true },
    text: `{"id":"${ids.on}","name":"on","enabled":true}`,
  });
  t.same(flag(ids.off, 'cohort=alice').json, { id: ids.off, name: 'off', enabled: false });
  t.equal(flag(ids.on, 'env=whatever').status, 200, 'env is ignored for a single-environment flag');
});

t.test('unknown flag id: 404 with the eval error body', async (t) => {
  const r = flag('flg_nope');
  t.equal(r.status, 404);
  t.same(r.json, { error: 'Not found', detail: 'No flag with id "flg_nope" exists.' });
  t.equal(flag('flg_nope').status, 404, 'twice (cached)');
  t.equal(flag('flg%zz').status, 404, 'an undecodable id is just an unknown id');
  t.equal(flag(encodeURIComponent(ids.on)).status, 200, 'a percent-encoded id is decoded');
});

t.test('group flag: env required (404), unknown env (404), env without state: defaults (false)', async (t) => {
  const missing = flag(ids.group);
  t.equal(missing.status, 404);
  t.match(missing.json.detail, /add the "env" query parameter \(valid environments: staging, production, dev\)/);
  t.equal(flag(ids.group, 'env=').status, 404, 'empty env is missing');
  const unknown = flag(ids.group, 'env=Production');
  t.equal(unknown.status, 404);
  t.match(unknown.json.detail, /Unknown environment "Production" for this flag; valid environments: staging, production, dev/);
  t.same(flag(ids.group, 'env=dev&cohort=wide-1').json.enabled, false, 'dev has no state: disabled');
});

t.test('group flag cohorts: env without override inherits the flag-wide list; an override replaces it', async (t) => {
  t.equal(flag(ids.group, 'env=staging&cohort=wide-1').json.enabled, true, 'staging inherits wide-1');
  t.equal(flag(ids.group, 'env=staging&cohort=wide-2').json.enabled, true);
  t.equal(flag(ids.group, 'env=staging&cohort=qa').json.enabled, false, "qa is production's override only");
  t.equal(flag(ids.group, 'env=production&cohort=qa').json.enabled, true);
  t.equal(flag(ids.group, 'env=production&cohort=wide-1').json.enabled, false, 'the override replaces the flag-wide list');
});

t.test('percentages: sticky per targetingKey, else per cohort', async (t) => {
  for (let i = 0; i < 100; i++) {
    t.equal(flag(ids.half, `targetingKey=u${i}`).json.enabled, bucket(ids.half, `u${i}`) < 50);
    t.equal(flag(ids.half, `cohort=c${i}`).json.enabled, bucket(ids.half, `c${i}`) < 50);
  }
  t.equal(flag(ids.zero, 'cohort=vip').json.enabled, true, 'a listed cohort wins over 0%');
  t.equal(flag(ids.zero, 'targetingKey=vip').json.enabled, false, 'targetingKey is not a cohort');
});

t.test('audiences: attributes from the query, exact and all rules', async (t) => {
  t.equal(flag(ids.aud, 'plan=beta&country=NL').json.enabled, true);
  t.equal(flag(ids.aud, 'plan=beta&country=nl').json.enabled, false);
  t.equal(flag(ids.aud, 'plan=beta').json.enabled, false, 'missing attribute');
  t.equal(flag(ids.aud, 'plan=gamma&country=NL').json.enabled, false);
  t.equal(flag(ids.audHalf, 'cohort=insider').json.enabled, true, 'cohort bypasses the audience');
  t.equal(flag(ids.groupAud, 'env=production&plan=beta').json.enabled, true);
  t.equal(flag(ids.groupAud, 'env=production&plan=alpha').json.enabled, false);
  t.equal(flag(ids.groupAud, 'env=staging').json.enabled, true, 'audiences are per environment');
});

t.test('403: a flag applying an audience on a plan without audiences', async (t) => {
  const r = flag(ids.freeAud, 'plan=beta');
  t.equal(r.status, 403);
  t.equal(r.json.error, 'Forbidden');
  t.match(r.json.detail, /audiences need the Teams or Enterprise plan/);
  t.equal(flag(ids.freePlain).status, 200, 'flags without an audience still evaluate');
  t.same(flag(ids.personalFlag).json, { id: ids.personalFlag, name: 'mine', enabled: true }, 'personal project flags evaluate');
});

t.test('403 follows the plan: a lapsed Teams trial loses audiences when its end passes', async (t) => {
  const trialEndsAt = clock.now() + 3_600_000;
  world.run('orgUpdate', { orgId: ids.orgFree, plan: 'teams-trial', trialEndsAt });
  t.equal(flag(ids.freeAud, 'plan=beta').status, 200);
  t.equal(flag(ids.freeAud, 'plan=beta').json.enabled, true);
  clock.advance(7200);
  t.equal(flag(ids.freeAud, 'plan=beta').status, 403, 'no write happened: the clock decides');
  clock.advance(-7200);
  world.run('orgUpdate', { orgId: ids.orgFree, plan: 'free' });
  t.equal(flag(ids.freeAud, 'plan=beta').status, 403);
});

t.test('project route: every flag in creation order, same rules', async (t) => {
  const r = project(ids.single, 'targetingKey=u1&plan=beta&country=NL');
  t.equal(r.status, 200);
  t.same(
    r.json.map((f: { name: string }) => f.name),
    ['on', 'off', 'half', 'zero', 'aud', 'aud-half'],
  );
  t.same(r.json[0], { id: ids.on, name: 'on', enabled: true });
  t.equal(r.json[2].enabled, bucket(ids.half, 'u1') < 50);
  t.equal(r.json[4].enabled, true, 'audience matched');
  t.equal(project(ids.single, 'cohort=vip').json[3].enabled, true);
  t.equal(project(ids.single, 'env=anything').status, 200, 'env is ignored on a single-environment project');
  t.same(project(ids.empty), { status: 200, json: [], text: '[]' });
});

t.test('project route: multi-environment projects need a valid env (404 like the flag route)', async (t) => {
  const missing = project(ids.multi);
  t.equal(missing.status, 404);
  t.match(missing.json.detail, /multi-environment project: add the "env" query parameter \(valid environments: staging, production, dev\)/);
  t.equal(project(ids.multi, 'env=nope').status, 404);
  const prod = project(ids.multi, 'env=production&cohort=qa&plan=beta');
  t.same(prod.json, [
    { id: ids.group, name: 'group', enabled: true },
    { id: ids.groupAud, name: 'group-aud', enabled: true },
  ]);
  t.same(project(ids.emptyMulti, 'env=prod').json, []);
  t.equal(project(ids.emptyMulti, 'env=staging').status, 404);
});

t.test('project route: unknown project 404; undecodable cohort 400; audience without plan is false', async (t) => {
  const r = project('prj_nope');
  t.same(r, { status: 404, json: { error: 'Not found', detail: 'No project with id "prj_nope" exists.' }, text: r.text });
  const bad = project(ids.single, 'cohort=%E0%A4%A');
  t.equal(bad.status, 400);
  t.equal(bad.json.error, 'Invalid request');
  t.match(bad.json.detail, /URL-encode/);
  t.same(
    project(ids.freeProject, 'plan=beta').json.map((f: { enabled: boolean }) => f.enabled),
    [false, true],
  );
});

t.test("project route: every entry is byte for byte the flag route's body, settled flags written once", async (t) => {
  // Beside the world's flags: typed ones without a rule, with one, disabled, at 0%; experiments.
  const mixed = world.run('projectCreate', { principal: kOperator, name: 'Mixed', orgId: ids.orgTeams }).id;
  const colours = { variants: { red: '#f00', green: '#0f0' }, defaultVariant: 'red' };
  const rule = { if: [{ '==': [{ var: 'plan' }, 'beta'] }, 'green', 'red'] };
  const bodies = [
    { name: 'm-on', enabled: true, trafficPercentage: 100 },
    { name: 'm-half', enabled: true, trafficPercentage: 50, cohorts: ['alice'] },
    { name: 'm-typed', enabled: true, trafficPercentage: 100, ...colours },
    { name: 'm-typed-rule', enabled: true, trafficPercentage: 100, ...colours, targeting: rule },
    { name: 'm-typed-off', enabled: false, trafficPercentage: 100, ...colours, targeting: rule },
    { name: 'm-typed-zero', enabled: true, trafficPercentage: 0, ...colours, targeting: rule },
    { name: 'm-exp-on', enabled: true, trafficPercentage: 100, experiment: 'exp-on' },
    { name: 'm-exp-half', enabled: true, trafficPercentage: 50, experiment: 'exp-half' },
    { name: 'm-exp-typed', enabled: true, trafficPercentage: 100, ...colours, experiment: 'exp-typed' },
  ];
  const mixedFlags = bodies.map((body) => world.run('flagCreate', { projectId: mixed, body, principal: kOperator }).id);
  // Each with a key: without one a split is a fresh roll on each route (design §2).
  const queries = [
    'targetingKey=u1&plan=beta&country=NL',
    'targetingKey=u2&plan=alpha',
    'cohort=alice',
    'cohort=vip&targetingKey=u3',
    'cohort=qa',
  ];
  const projects: [string, string[], string][] = [
    [mixed, mixedFlags, ''],
    [ids.single, [ids.on, ids.off, ids.half, ids.zero, ids.aud, ids.audHalf], ''],
    [ids.multi, [ids.group, ids.groupAud], 'env=production&'],
    [ids.multi, [ids.group, ids.groupAud], 'env=staging&'],
    [ids.multi, [ids.group, ids.groupAud], 'env=dev&'],
    [ids.personal, [ids.personalFlag], ''],
  ];
  for (const [id, flags, env] of projects)
    for (const query of queries) {
      const own = flags.map((f) => flag(f, `${env}${query}`).text);
      t.equal(project(id, `${env}${query}`).text, `[${own.join(',')}]`, `${id} ${env}${query}`);
    }
});

t.test('400 comes before 404 on the flag route', async (t) => {
  t.equal(flag('flg_nope', 'cohort=%').status, 400);
  t.equal(flag(ids.on, 'cohort=%FF').status, 400);
});

t.test('freshness: a committed write is read by the next batch (configSeq drops the compiled flag)', async (t) => {
  t.equal(flag(ids.on).json.enabled, true);
  for (let i = 0; i < 50; i++) {
    const enabled = i % 2 === 1;
    world.run('flagPatch', {
      flagId: ids.on,
      env: null,
      patch: { enabled },
      principal: { kind: 'operator' },
    });
    t.equal(flag(ids.on).json.enabled, enabled);
  }
  world.run('flagRename', { principal: kOperator, flagId: ids.on, name: 'on-renamed' });
  t.equal(flag(ids.on).json.name, 'on-renamed', 'the precomputed bodies are rebuilt');
  world.run('audienceUpdate', { principal: kOperator, audienceId: ids.audience, rules: [{ attribute: 'plan', values: ['gamma'] }] });
  t.equal(flag(ids.aud, 'plan=gamma').json.enabled, true, 'audience edits apply at once');
  t.equal(flag(ids.aud, 'plan=beta&country=NL').json.enabled, false);
  world.run('flagDelete', { principal: kOperator, flagId: ids.off });
  t.equal(flag(ids.off).status, 404, 'a deleted flag is gone at once');
  t.notOk(project(ids.single).json.some((f: { id: string }) => f.id === ids.off));
});

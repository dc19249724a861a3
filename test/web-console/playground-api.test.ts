// The console's playground endpoint over HTTP against the real server: POST
// /console/api/projects/{id}/playground answers what GET /v1/flags/{id} answers for the same context
// (its `query`), to any member (a viewer too), only in a session, only for a project of the user's, and
// 400 in the error envelope for a context it cannot carry; a rule being edited (issue 47) is tried in place
// of the saved one, saving nothing, and refused in PATCH's words.
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { demoWithViewer } from '../helpers/demo-viewer.js';
import { consoleCall } from '../helpers/web-console.js';

const kShop = 'prj_DemoWebShop';
const kPlatform = 'prj_DemoPlatform';

t.test('the playground endpoint: same answers as the Evaluation API, members only, bounded input', async (t) => {
  const { base, dir, owner, viewer } = await demoWithViewer(t);
  // A project of an organisation neither user belongs to.
  const otherOrg = (await cli(dir, ['org', 'create', '--name', 'Elsewhere', '--plan', 'teams'])).json.id as string;
  const other = (await cli(dir, ['project', 'create', '--org', otherOrg, '--name', 'Theirs'])).json.id as string;
  await cli(dir, ['flag', 'create', other, '--name', 'secret-flag', '--enabled', '--percentage', '100']);

  const play = (session: typeof owner | null, project: string, body: unknown, opts: { csrf?: boolean } = {}) =>
    consoleCall(base, session, 'POST', `projects/${project}/playground`, { body, ...opts });

  await t.test('every flag, answered as GET /v1/flags/{id}?<query>, for many keys', async (t) => {
    for (let i = 0; i < 40; i++) {
      const context = { targetingKey: `user ${i}+x`, attributes: i % 2 === 0 ? [{ name: 'plan', value: 'beta' }] : [] };
      const r = await play(viewer, kShop, context);
      t.equal(r.status, 200, JSON.stringify(r.json));
      t.equal(r.json.query, `targetingKey=user%20${i}%2Bx${i % 2 === 0 ? '&plan=beta' : ''}`);
      t.same(r.json.results.map((f: { name: string }) => f.name).sort(), ['dark-mode', 'holiday-banner', 'new-checkout']);
      for (const flag of r.json.results) {
        const evaluated = await call(base, 'GET', `/v1/flags/${flag.id}?${r.json.query}`);
        t.equal(flag.enabled, evaluated.json.enabled, `${flag.name} for ${context.targetingKey}`);
      }
    }
    const named = (r: { json: { results: { name: string }[] } }, name: string) => r.json.results.find((f) => f.name === name);
    const r = await play(owner, kShop, { targetingKey: 'u', cohort: 'alice', attributes: [{ name: 'plan', value: 'gold' }] });
    const byName = Object.fromEntries(r.json.results.map((f: { name: string }) => [f.name, f]));
    t.match(byName['new-checkout'], {
      enabled: true,
      value: true,
      variant: 'on',
      reason: 'TARGETING_MATCH',
      because: 'cohort "alice" is listed',
    });
    t.match(byName['dark-mode'], {
      enabled: false,
      reason: 'TARGETING_MATCH',
      because: 'audience "Beta testers" not matched (plan is not one of [beta])',
    });
    t.match(byName['holiday-banner'], { enabled: false, reason: 'DISABLED', because: 'flag off' });
    const split = await play(owner, kShop, { targetingKey: 'someone' });
    t.match(named(split, 'new-checkout'), {
      reason: 'SPLIT',
      because: /^(in|not in) the 50% rollout \(bucket \d+ of 100, from the targetingKey\)$/,
    });
    const roll = await play(owner, kShop, {});
    t.match(named(roll, 'new-checkout'), { reason: 'ERROR', errorCode: 'TARGETING_KEY_MISSING', because: /rolls afresh/ });
  });

  await t.test('a multi-environment project: env required and checked, then evaluated in it', async (t) => {
    const missing = await play(owner, kPlatform, { targetingKey: 'u' });
    t.equal(missing.status, 400);
    t.match(missing.json, {
      error: 'Invalid request',
      detail: /choose "env" \(valid environments: staging, production\)/,
      docs: /#invalid-request$/,
    });
    t.match((await play(owner, kPlatform, { env: 'prod' })).json.detail, 'Unknown environment "prod"');
    const r = await play(owner, kPlatform, { env: 'production', cohort: 'qa-team' });
    t.equal(r.status, 200);
    t.match(r.json, {
      env: 'production',
      query: 'cohort=qa-team&env=production',
      results: [{ name: 'search-v2', enabled: true, because: 'cohort "qa-team" is listed' }],
    });
  });

  await t.test('only in a session, with its CSRF token, and only for a project of the user', async (t) => {
    t.match(await play(null, kShop, {}), { status: 401, json: { error: 'Not signed in' } });
    t.equal((await play(owner, kShop, {}, { csrf: false })).status, 403, 'a POST without the CSRF token is refused');
    const theirs = await play(owner, other, { targetingKey: 'u' });
    t.equal(theirs.status, 404);
    t.same(theirs.json.detail, `No project with id "${other}" exists.`, "another organisation's project reads as none");
    t.notMatch(JSON.stringify(theirs.json), 'secret-flag');
    t.equal((await play(owner, 'prj_nope', {})).status, 404);
  });

  await t.test('bad input: 400 in the envelope, naming the problem', async (t) => {
    const bad = async (body: unknown, detail: string | RegExp) => {
      const r = await play(owner, kShop, body);
      t.equal(r.status, 400, JSON.stringify(body));
      t.match(r.json, { error: 'Invalid request', detail, docs: /#invalid-request$/ });
    };
    await bad([], 'The request body must be a JSON object.');
    await bad({ targetingKey: 5 }, '"targetingKey"');
    await bad({ colour: 'red' }, 'unknown field "colour"');
    await bad({ attributes: [{ name: '', value: 'x' }] }, '"attributes');
    await bad({ attributes: [{ name: 'cohort', value: 'x' }] }, '"cohort" is not an attribute');
    await bad(
      {
        attributes: [
          { name: 'plan', value: 'a' },
          { name: 'plan', value: 'b' },
        ],
      },
      'given twice',
    );
    await bad({ targetingKey: 'k'.repeat(5000) }, /the Evaluation API takes at most 4096/);
    await bad({ attributes: Array.from({ length: 101 }, (_, i) => ({ name: `a${i}`, value: '' })) }, '"attributes"');
  });

  await t.test('a rule being edited is tried in place of the saved one; nothing is saved', async (t) => {
    const created = await cli(dir, ['flag', 'create', kShop, '--name', 'tried', '--enabled', '--percentage', '100']);
    const id = created.json.id as string;
    const saved = { if: [{ '==': [{ var: 'plan' }, 'gold'] }, 'green', null] };
    const typed = await consoleCall(base, owner, 'PATCH', `flags/${id}`, {
      body: { variants: { red: '#f00', green: '#0f0' }, defaultVariant: 'red', targeting: saved },
    });
    t.equal(typed.status, 200, JSON.stringify(typed.json));
    const answer = async (plan: string, rule?: unknown) => {
      const r = await play(owner, kShop, {
        targetingKey: 'u1',
        attributes: [{ name: 'plan', value: plan }],
        ...(rule === undefined ? {} : { rule }),
      });
      t.equal(r.status, 200, JSON.stringify(r.json));
      return r.json.results.find((f: { id: string }) => f.id === id);
    };
    t.match(await answer('gold'), { variant: 'green', reason: 'TARGETING_MATCH', because: /its condition 1 of 1 held/ }, 'the saved rule');
    const edited = { if: [{ starts_with: [{ var: 'plan' }, 'sil'] }, 'green', { '==': [{ var: 'plan' }, 'gold'] }, null, 'green'] };
    t.match(await answer('gold', { flagId: id, targeting: edited }), {
      variant: 'red',
      reason: 'DEFAULT',
      because: /its condition 2 of 2 held/,
    });
    t.match(await answer('silver', { flagId: id, targeting: edited }), { variant: 'green', because: /its condition 1 of 2 held/ });
    t.match(await answer('gold', { flagId: id, targeting: {} }), { variant: 'red', reason: 'STATIC' }, 'no rule: the default variant');
    t.same((await consoleCall(base, owner, 'GET', `flags/${id}`)).json.flag.targeting, saved, 'nothing saved');
    t.equal((await call(base, 'GET', `/v1/flags/${id}?plan=gold`)).json.enabled, true);

    // Refused as PATCH refuses it, in the same words; a flag of no variants, or of another project, is named.
    const wrong = { if: [{ foo: [{ var: 'plan' }, 'gold'] }, 'green'] };
    const tried = await play(owner, kShop, { rule: { flagId: id, targeting: wrong } });
    const patched = await consoleCall(base, owner, 'PATCH', `flags/${id}`, { body: { targeting: wrong } });
    t.equal(tried.status, 400);
    t.equal(patched.status, 400);
    t.same(tried.json, patched.json, 'the same error and detail as the save would give');
    const plain = (await cli(dir, ['flag', 'create', kShop, '--name', 'plain'])).json.id as string;
    t.match((await play(owner, kShop, { rule: { flagId: plain, targeting: {} } })).json, {
      error: 'Invalid request',
      detail: '"rule": plain has no variants here, so no rule to try.',
    });
    const theirs = (await cli(dir, ['flag', 'list', other])).json.flags[0].id as string;
    t.match((await play(owner, kShop, { rule: { flagId: theirs, targeting: {} } })).json, {
      detail: `"rule.flagId": no flag ${theirs} in this project.`,
    });
    t.match((await play(owner, kShop, { rule: { flagId: id } })).json, { error: 'Invalid request', detail: /"rule\.targeting"|rule/ });
  });
});

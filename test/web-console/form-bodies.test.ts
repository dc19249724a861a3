// The console's own form bodies over HTTP against the real server: every body that is not the form
// it should be is a 400 in the console's envelope naming the first wrong field, in the order the form
// lists its fields, with the texts the console has always given; a body that is not a JSON object at all
// is refused as such; access is checked before the body is read. Sign-in and the invitation link's join
// page say what they take.
import t from 'tap';
import type { Test } from 'tap';
import { cli } from '../helpers/cli.js';
import { startTestServer } from '../helpers/server.js';
import { consoleCall, demoPassword, demoSecret, kDemoOwner, type WebSession, signIn } from '../helpers/web-console.js';

const kShop = 'prj_DemoWebShop';
const kNotAnObject = 'The request body must be a JSON object.';
const kSignIn = 'Send {"email": "...", "password": "..."} as JSON.';
const kJoin = 'Send {"invitationId", "token", "name", "password"} as JSON strings.';

const server = await startTestServer({ demo: true, env: { FLAGWIRE_CONSOLE_CREATE_ORGS: 'on' } });
t.teardown(() => server.stop());
const base = server.baseUrl;
const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
const orgId = (await cli(server.dataDir, ['org', 'list'])).json.orgs[0].id as string;
const shop = (await consoleCall(base, owner, 'GET', `projects/${kShop}`)).json;
const flagId = shop.flags[0].id as string;
const audienceId = shop.audiences[0].id as string;
const tokenId = (await consoleCall(base, owner, 'GET', `projects/${kShop}/tokens`)).json.tokens[0].id as string;

/** POST `text` as the body (undefined: none), from this origin, with the session's cookie and CSRF token when given. */
async function post(session: WebSession | null, path: string, text: string | undefined) {
  const headers: Record<string, string> = { origin: base, 'content-type': 'application/json' };
  if (session !== null) Object.assign(headers, { cookie: session.cookie, 'x-flagwire-csrf': session.csrf });
  const res = await fetch(`${base}/console/api/${path}`, { method: 'POST', headers, body: text });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** Each body refused at `path` with a 400 and exactly `detail`. */
async function refused(t: Test, path: string, bodies: readonly (string | undefined)[], detail: string, session: WebSession | null = owner) {
  for (const body of bodies) {
    const r = await post(session, path, body);
    t.equal(r.status, 400, `${path} ${body}`);
    t.strictSame(r.json, { error: 'Invalid request', detail, docs: `${base}/docs#invalid-request` }, `${path} ${body}`);
  }
}
const json = (...values: unknown[]) => values.map((v) => JSON.stringify(v));

t.test('a body that is not a JSON object: refused as such, on every form', async (t) => {
  const notObjects = [undefined, '', '{', '{"name": "x"} x', 'null', '[]', '5', '"name"', 'true'];
  await refused(t, `flags/${flagId}/rename`, notObjects, kNotAnObject);
  for (const path of [
    `flags/${flagId}/describe`,
    `flags/${flagId}/tags`,
    `flags/${flagId}/cohorts`,
    `flags/${flagId}/schedules`,
    `flags/${flagId}/rollouts`,
    `orgs/${orgId}/members`,
    `orgs/${orgId}/invitations`,
    `orgs/${orgId}/projects`,
    'orgs',
    `projects/${kShop}/environments`,
    `projects/${kShop}/environments/rename`,
    `projects/${kShop}/environments/protect`,
    `projects/${kShop}/audiences`,
    `audiences/${audienceId}`,
    `projects/${kShop}/tokens`,
    `projects/${kShop}/webhooks`,
    `projects/${kShop}/playground`,
  ]) {
    await refused(t, path, ['[]', 'null', '{'], kNotAnObject);
  }
  // Rotating takes no body at all; one that is sent must be an object.
  await refused(t, `tokens/${tokenId}/rotate`, ['[]', 'null', '7', '{'], kNotAnObject);
});

t.test("a flag's forms: name, description, tags, cohorts; a rollout refused as the API refuses it", async (t) => {
  await refused(t, `flags/${flagId}/rename`, json({}, { name: 5 }, { name: null }, { title: 'x' }), '"name" must be a string');
  await refused(t, `flags/${flagId}/describe`, json({}, { description: ['x'] }), '"description" must be a string');
  await refused(
    t,
    `flags/${flagId}/tags`,
    json({}, { tags: 'a' }, { tags: ['a', 1] }, { tags: null }),
    '"tags" must be an array of strings',
  );
  await refused(t, `flags/${flagId}/cohorts`, json({}, { cohorts: [[]] }, { cohorts: {} }), '"cohorts" must be an array of strings');
  // A rollout's body is the Management API's, checked by the same rules: the same 400, the same words.
  const demoWrite = demoSecret(server.output(), 'demo-write');
  for (const body of json(
    {},
    { steps: 10 },
    { steps: ['10'] },
    { steps: [{ trafficPercentage: 50, holdMs: 1000 }, { trafficPercentage: 10 }] },
    { steps: [{ trafficPercentage: 100 }], guard: { max: 1 } },
  )) {
    const api = await fetch(`${base}/api/v1/flags/${flagId}/rollouts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demoWrite}`, 'content-type': 'application/json' },
      body,
    });
    const answer = (await api.json()) as { detail: string };
    t.equal(api.status, 400, `the API refuses ${body}`);
    await refused(t, `flags/${flagId}/rollouts`, [body], answer.detail);
  }
});

t.test("an organisation's forms: a member, an invitation, a project, an organisation", async (t) => {
  const members = `orgs/${orgId}/members`;
  await refused(t, members, json({}, { role: 'viewer' }, { userId: 1, role: 2 }), '"userId" must be a string');
  await refused(t, members, json({ userId: 'usr_x' }, { userId: 'usr_x', role: 3 }), '"role" must be a string');
  const invitations = `orgs/${orgId}/invitations`;
  await refused(t, invitations, json({}, { role: 'viewer' }, { email: 5, role: 5 }), '"email" must be a string');
  await refused(t, invitations, json({ email: 'a@b.test' }), '"role" must be a string');
  const projects = `orgs/${orgId}/projects`;
  await refused(t, projects, json({}, { name: 'P' }, { kind: 1, name: 2 }), '"kind" must be a string');
  // The kind is checked before the fields after it.
  await refused(
    t,
    projects,
    json({ kind: 'x' }, { kind: 'Single', name: 5 }, { kind: '', environments: 1 }),
    'kind must be single or multi',
  );
  await refused(t, projects, json({ kind: 'single' }, { kind: 'multi', name: null, environments: 1 }), '"name" must be a string');
  await refused(
    t,
    projects,
    json(
      { kind: 'multi', name: 'P', environments: 'prod' },
      { kind: 'multi', name: 'P', environments: ['a', 1] },
      { kind: 'single', name: 'P', environments: null },
    ),
    '"environments" must be an array of strings',
  );
  await refused(t, 'orgs', json({}, { name: 5 }), '"name" must be a string');
});

t.test("a project's settings: environments, protection, audiences", async (t) => {
  await refused(t, `projects/${kShop}/environments`, json({}, { name: 1 }), '"name" must be a string');
  const rename = `projects/${kShop}/environments/rename`;
  await refused(t, rename, json({}, { to: 'b' }, { from: 1, to: 2 }), '"from" must be a string');
  await refused(t, rename, json({ from: 'a' }, { from: 'a', to: [] }), '"to" must be a string');
  const protect = `projects/${kShop}/environments/protect`;
  await refused(
    t,
    protect,
    json({}, { environment: 'staging' }, { protected: 'yes', environment: 5 }, { protected: 1 }, { protected: null }),
    '"protected" must be true or false',
  );
  await refused(t, protect, json({ protected: true }, { protected: false, environment: 1 }), '"environment" must be a string');
  for (const path of [`projects/${kShop}/audiences`, `audiences/${audienceId}`]) {
    await refused(t, path, json({}, { rules: [] }, { name: 1, rules: 1 }), '"name" must be a string');
    await refused(
      t,
      path,
      json({ name: 'A' }, { name: 'A', rules: {} }, { name: 'A', rules: 'x' }),
      '"rules" must be an array of {attribute, values}',
    );
  }
});

t.test("a token's form", async (t) => {
  const tokens = `projects/${kShop}/tokens`;
  await refused(t, tokens, json({}, { permission: 'read' }, { name: 1, permission: 1 }), '"name" must be a string');
  await refused(t, tokens, json({ name: 'T' }, { name: 'T', permission: true, environments: 1 }), '"permission" must be a string');
  await refused(
    t,
    tokens,
    json(
      { name: 'T', permission: 'read', environments: 'x' },
      { name: 'T', permission: 'read', environments: [1], expires: 1 },
      { name: 'T', permission: 'read', environments: null },
    ),
    '"environments" must be an array of strings',
  );
  await refused(
    t,
    tokens,
    json({ name: 'T', permission: 'read', expires: 5 }, { name: 'T', permission: 'read', expires: null }),
    '"expires" must be a string',
  );
});

t.test('access is checked before the body is read', async (t) => {
  const r = await post(owner, 'flags/flg_doesNotExist/rename', '[]');
  t.equal(r.status, 404);
  const other = await post(owner, 'projects/prj_doesNotExist/tokens', '{}');
  t.equal(other.status, 404);
});

t.test('sign-in and join say what they take', async (t) => {
  await refused(
    t,
    'sign-in',
    [
      '',
      '{',
      '[]',
      'null',
      '5',
      '"x"',
      ...json({}, { email: 'a@b.test' }, { password: 'p' }, { email: 1, password: 'p' }, { email: 'a@b.test', password: null }),
    ],
    kSignIn,
    null,
  );
  await refused(
    t,
    'join',
    [
      '',
      '{',
      '[]',
      'null',
      ...json(
        {},
        { invitationId: 'inv_x', token: 't', name: 'N' },
        { invitationId: 'inv_x', token: 't', name: 'N', password: 5 },
        { invitationId: 1, token: 't', name: 'N', password: 'a long password' },
      ),
    ],
    kJoin,
    null,
  );
});

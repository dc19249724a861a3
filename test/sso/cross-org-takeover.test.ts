// The account takeover across organisations of issue 96 item 1, run as the attacker would, against a
// real server and a real identity provider (oidc-provider) that the attacker's organisation controls.
// Vera owns organisation A (the demo's) and signs in with a password; Mallory owns organisation C. The
// chain: C's SCIM links Vera's account by her address, C's identity provider asserts her address, and the
// session it makes reaches A. Each step is refused: SCIM links only a person who joined C; an SSO
// sign-in signs in only C's members; and once Vera has joined C of her own will, a session C's identity
// provider makes reaches C alone (not A, its projects, its tokens, her personal projects, A's
// invitations), while C's deprovisioning ends that session and no other, and refuses her next sign-in.
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { ssoSignIn, startIdp } from '../helpers/oidc-idp.js';
import { startTestServer } from '../helpers/server.js';
import { consoleCall, demoPassword, kDemoOwner, setPassword, signIn } from '../helpers/web-console.js';

const kUser = 'urn:ietf:params:scim:schemas:core:2.0:User';
const kPatch = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const kProjectA = 'prj_DemoWebShop';

t.test("organisation C cannot take over organisation A's Owner through SCIM and its identity provider", async (t) => {
  const server = await startTestServer({ demo: true });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const idp = await startIdp(`${base}/console/sso/callback`);
  t.teardown(() => idp.stop());

  // Vera: A's Owner, signed in with her password.
  const vera = await signIn(base, kDemoOwner, demoPassword(server.output()));
  const veraHome = (await consoleCall(base, vera, 'GET', 'home')).json;
  const orgA = veraHome.orgs[0].id as string;
  const veraId = veraHome.user.id as string;

  // Mallory: C's Owner, with SCIM and single sign-on of her own.
  const mallory = (await cli(server.dataDir, ['user', 'create', '--email', 'mallory@c.test', '--name', 'Mallory'])).json.id as string;
  const orgC = (await cli(server.dataDir, ['org', 'create', '--name', 'C', '--plan', 'teams'])).json.id as string;
  t.equal((await cli(server.dataDir, ['org', 'add-member', orgC, mallory, '--role', 'owner'])).code, 0);
  t.equal((await setPassword(server.dataDir, mallory, 'mallory has a long password\n')).code, 0);
  const owner = await signIn(base, 'mallory@c.test', 'mallory has a long password');
  const sso = await consoleCall(base, owner, 'PATCH', `orgs/${orgC}/sso`, {
    body: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, scopes: ['email', 'profile'] },
  });
  t.equal(sso.status, 200, JSON.stringify(sso.json));
  const enabled = await consoleCall(base, owner, 'POST', `orgs/${orgC}/scim/secret`);
  t.equal(enabled.status, 200, JSON.stringify(enabled.json));
  const scim = (method: string, path: string, body?: unknown) =>
    call(base, method, `/scim/v2${path}`, { token: enabled.json.secret, body, headers: { 'content-type': 'application/scim+json' } });
  // C's identity provider asserts Vera's address for a subject of its choosing.
  idp.people.set('fake-vera', { email: kDemoOwner, name: 'Vera', groups: [] });
  const start = `${base}/console/sso/${orgC}/start`;
  const membersOfC = async () =>
    ((await consoleCall(base, owner, 'GET', `orgs/${orgC}/members`)).json.members as { userId: string }[]).map((m) => m.userId);

  await t.test("C's SCIM cannot link A's Owner by her address", async (t) => {
    const linked = await scim('POST', '/Users', { schemas: [kUser], userName: kDemoOwner, active: true });
    t.equal(linked.status, 409, linked.text);
    t.match(linked.json, { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '409', scimType: 'uniqueness' });
    t.match(linked.json.detail, /not a member of this organisation: SCIM links a person only once they have joined it/);
    t.notOk((await membersOfC()).includes(veraId), 'Vera is no member of C');
    t.equal((await scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "${kDemoOwner}"`)}`)).json.totalResults, 0);
    t.equal((await consoleCall(base, vera, 'GET', 'session')).status, 200, "Vera's session lives");
  });

  await t.test("C's identity provider asserting Vera's address signs no one in", async (t) => {
    const attempt = await ssoSignIn(base, start, 'fake-vera');
    t.equal(attempt.res.status, 403, JSON.stringify(attempt.body));
    t.match(attempt.body, { error: 'Forbidden', detail: /not a member of organisation/ });
    t.equal(attempt.session, null, 'no session');
  });

  await t.test('C going SSO-only does not lock Vera out of her password', async (t) => {
    const only = await consoleCall(base, owner, 'PATCH', `orgs/${orgC}/sso`, { body: { ssoOnly: true, breakGlassUserId: mallory } });
    t.equal(only.status, 200, JSON.stringify(only.json));
    t.ok(await signIn(base, kDemoOwner, demoPassword(server.output())), 'Vera signs in with her password');
    t.equal((await consoleCall(base, owner, 'PATCH', `orgs/${orgC}/sso`, { body: { ssoOnly: false } })).status, 200);
  });

  await t.test("once Vera joins C herself, a session of C's identity provider reaches C alone", async (t) => {
    // Mallory also owns D, and invites Vera there: an invitation C's session must neither see nor answer.
    const orgD = (await cli(server.dataDir, ['org', 'create', '--name', 'D', '--plan', 'teams'])).json.id as string;
    t.equal((await cli(server.dataDir, ['org', 'add-member', orgD, mallory, '--role', 'owner'])).code, 0);
    for (const orgId of [orgC, orgD]) {
      const invited = await consoleCall(base, owner, 'POST', `orgs/${orgId}/invitations`, { body: { email: kDemoOwner, role: 'viewer' } });
      t.ok(invited.status < 300, JSON.stringify(invited.json));
    }
    const pending = (await consoleCall(base, vera, 'GET', 'home')).json.invitations as { id: string; orgName: string }[];
    const toC = pending.find((i) => i.orgName === 'C')!;
    const toD = pending.find((i) => i.orgName === 'D')!;
    t.ok((await consoleCall(base, vera, 'POST', `invitations/${toC.id}/accept`)).status < 300);
    t.ok((await membersOfC()).includes(veraId), 'Vera joined C by accepting');

    const signedIn = await ssoSignIn(base, start, 'fake-vera');
    t.equal(signedIn.res.status, 302, JSON.stringify(signedIn.body));
    const session = signedIn.session!;
    const home = (await consoleCall(base, session, 'GET', 'home')).json;
    t.equal(home.user.id, veraId, "C's member Vera");
    t.same(
      home.orgs.map((o: { id: string }) => o.id),
      [orgC],
      'the home page lists C alone',
    );
    t.same(home.personal, [], 'no personal project');
    t.same(home.invitations, [], "no other organisation's invitation");
    const accept = await consoleCall(base, session, 'POST', `invitations/${toD.id}/accept`);
    t.equal(accept.status, 404, `no joining D through C's identity provider: ${JSON.stringify(accept.json)}`);

    for (const path of [`orgs/${orgA}/members`, `projects/${kProjectA}/flags`, `projects/${kProjectA}/tokens`, `orgs/${orgA}/sso`]) {
      const read = await consoleCall(base, session, 'GET', path);
      t.equal(read.status, 404, `${path}: ${JSON.stringify(read.json)}`);
    }
    const token = await consoleCall(base, session, 'POST', `projects/${kProjectA}/tokens`, {
      body: { name: 'pwned', permission: 'write' },
    });
    t.equal(token.status, 404, `no token of A's project: ${JSON.stringify(token.json)}`);
    const invite = await consoleCall(base, session, 'POST', `orgs/${orgA}/invitations`, {
      body: { email: 'mallory@c.test', role: 'owner' },
    });
    t.equal(invite.status, 404, "no invitation into A: Mallory cannot make herself A's Owner");
    const tokens = (await consoleCall(base, vera, 'GET', `projects/${kProjectA}/tokens`)).json.tokens as { name: string }[];
    t.notOk(
      tokens.some((tk) => tk.name === 'pwned'),
      "A's project has no token the session made",
    );
    const veraNow = (await consoleCall(base, vera, 'GET', 'home')).json;
    t.ok(
      veraNow.invitations.some((i: { id: string }) => i.id === toD.id),
      "D's invitation still waits for Vera's own answer",
    );

    // C deprovisions her: C's session ends, her password session (A's) lives, her next sign-in is refused.
    const linked = await scim('POST', '/Users', { schemas: [kUser], userName: kDemoOwner, active: true });
    t.equal(linked.status, 201, `a member of C is linked: ${linked.text}`);
    t.equal(linked.json.id, veraId);
    const off = await scim('PATCH', `/Users/${veraId}`, { schemas: [kPatch], Operations: [{ op: 'replace', value: { active: false } }] });
    t.equal(off.status, 200, off.text);
    t.equal((await consoleCall(base, session, 'GET', 'home')).status, 401, "the session C's identity provider made ended");
    const stillA = await consoleCall(base, vera, 'GET', 'home');
    t.equal(stillA.status, 200, "Vera's password session was not C's to end");
    t.same(
      stillA.json.orgs.map((o: { id: string }) => o.id),
      [orgA],
      'it reaches A, and C no more',
    );
    const again = await ssoSignIn(base, start, 'fake-vera');
    t.equal(again.res.status, 403, JSON.stringify(again.body));
    t.match(again.body, { detail: /deprovisioned/ });
  });
});

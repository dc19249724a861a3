// Single sign-on over HTTP against a real identity provider (the npm `oidc-provider` on loopback,
// test/helpers/oidc-idp.ts), through a real server: a full sign-in (discovery, PKCE, code exchange, ID
// token checked, a console session; a member made at the first sign-in with the role of their groups), a
// changed group applied at the next sign-in, and the refusals: a replayed state, a replayed code, a state
// carried to another browser, a token for another audience, an expired one, a wrong nonce, and a key
// the provider does not publish; a rotated key is fetched and taken, and a stream of unknown keys
// fetches the keys at most once per cooldown. Password sign-in keeps working beside it, and SSO only
// refuses it to every member but the break-glass Owner.
import t from 'tap';
import { startTestServer } from '../helpers/server.js';
import { CookieJar, configureSso, signInAtIdp, signingKey, ssoSignIn, startIdp } from '../helpers/oidc-idp.js';
import { consoleCall, demoPassword, kDemoOwner, setPassword, signIn } from '../helpers/web-console.js';

const kCooldownMs = 5000;

t.test('OpenID Connect sign-in against oidc-provider', async (t) => {
  const server = await startTestServer({ demo: true, env: { FLAGWIRE_OIDC_JWKS_COOLDOWN_MS: String(kCooldownMs) } });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const idp = await startIdp(`${base}/console/sso/callback`);
  t.teardown(() => idp.stop());
  idp.people.set('alice', { email: 'alice@idp.test', name: 'Alice', groups: ['Flagwire Admins'] });

  const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
  const orgId = (await consoleCall(base, owner, 'GET', 'home')).json.orgs[0].id as string;
  const start = `${base}/console/sso/${orgId}/start`;

  // Before it is configured: no sign-in to start.
  const none = await new CookieJar().get(start);
  t.equal(none.status, 404, 'an organisation without single sign-on has no sign-in to start');

  const configured = await configureSso(base, owner, orgId, idp, { 'Flagwire Admins': 'admin' });
  t.equal(configured.status, 200, JSON.stringify(configured.json));
  t.equal(configured.json.clientSecretSet, true);

  /** A whole sign-in as `login`: the callback's answer, and the session it made (null when refused). */
  const signInAs = (login: string) => ssoSignIn(base, start, login);
  const roleOf = async (email: string) => {
    const members = await consoleCall(base, owner, 'GET', `orgs/${orgId}/members`);
    return (members.json.members as { user: { email: string }; role: string }[]).find((m) => m.user.email === email)?.role;
  };

  await t.test('a full sign-in: PKCE, state, nonce, a member made with the role of their groups', async (t) => {
    const jar = new CookieJar();
    const { callback, authorize } = await signInAtIdp(jar, start, 'alice');
    const params = new URL(authorize).searchParams;
    t.equal(params.get('code_challenge_method'), 'S256');
    t.match(params.get('code_challenge'), /^[A-Za-z0-9_-]{43}$/);
    t.match(params.get('state'), /^[A-Za-z0-9]{43}$/);
    t.match(params.get('nonce'), /^[A-Za-z0-9]{43}$/);
    t.equal(params.get('scope'), 'openid email profile groups');
    t.equal(params.get('redirect_uri'), `${base}/console/sso/callback`);
    // The sign-in under way is the browser's sealed cookie: kept here to replay it.
    const flowCookie = jar.header();
    t.match(flowCookie, /flagwire_sso=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/);
    const res = await jar.get(callback);
    t.equal(res.status, 302, await res.clone().text());
    t.equal(res.headers.get('location'), '/console/');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('flagwire_session='))!;
    t.match(cookie, /^flagwire_session=[0-9A-Za-z]{43}; Path=\/console; Max-Age=\d+; HttpOnly; SameSite=Strict$/);
    const session = await consoleCall(base, { cookie: cookie.split(';')[0]!, csrf: '', setCookie: cookie }, 'GET', 'session');
    t.equal(session.status, 200);
    t.equal(session.json.user.email, 'alice@idp.test');
    t.equal(await roleOf('alice@idp.test'), 'admin', "the role of alice's group");

    // The same callback again (a replayed state), with the flow's cookie: the state was used up.
    const replay = await fetch(callback, { redirect: 'manual', headers: { cookie: flowCookie } });
    t.equal(replay.status, 401);
    t.match(await replay.json(), { error: 'Sign-in failed', detail: /not one under way: it was used already/ });
    // Without it (the sign-in cleared it): none under way in this browser.
    const cleared = await jar.get(callback);
    t.equal(cleared.status, 401);
    t.match(await cleared.json(), { error: 'Sign-in failed', detail: /not one under way in this browser/ });

    // The used code with a new sign-in's state: the identity provider refuses it.
    const other = new CookieJar();
    const again = await other.get(start);
    const state = new URL(again.headers.get('location')!).searchParams.get('state')!;
    const code = new URL(callback).searchParams.get('code')!;
    const reused = await other.get(`${base}/console/sso/callback?code=${encodeURIComponent(code)}&state=${state}`);
    t.equal(reused.status, 401);
    t.match(await reused.json(), { detail: /refused the sign-in's code \(invalid_grant\)/ });
  });

  await t.test("a state carried to another browser is refused, and stays its own browser's", async (t) => {
    const jar = new CookieJar();
    const { callback } = await signInAtIdp(jar, start, 'alice');
    const stranger = await new CookieJar().get(callback);
    t.equal(stranger.status, 401);
    t.match(await stranger.json(), { detail: /started in another browser/ });
    t.equal((await jar.get(callback)).status, 302, 'the browser that started it still signs in');
  });

  await t.test('a changed group applies at the next sign-in', async (t) => {
    idp.people.set('alice', { email: 'alice@idp.test', name: 'Alice', groups: ['Somewhere Else'] });
    const { res } = await signInAs('alice');
    t.equal(res.status, 302);
    t.equal(await roleOf('alice@idp.test'), 'viewer', 'no mapped group: Viewer');
    idp.people.set('alice', { email: 'alice@idp.test', name: 'Alice', groups: ['Flagwire Admins'] });
    await signInAs('alice');
    t.equal(await roleOf('alice@idp.test'), 'admin');
  });

  await t.test('ID tokens for another audience, expired, or with another nonce are refused', async (t) => {
    idp.rewrite = (p) => ({ ...p, aud: 'another-client' });
    t.match((await signInAs('alice')).body, { error: 'Sign-in failed', detail: /aud claim is not right/ });
    const now = Math.floor(Date.now() / 1000);
    idp.rewrite = (p) => ({ ...p, iat: now - 7200, exp: now - 3600 });
    t.match((await signInAs('alice')).body, { detail: /has expired/ });
    // Within the clock skew (60 s), an expired token still passes.
    idp.rewrite = (p) => ({ ...p, iat: now - 30, exp: now - 20 });
    t.equal((await signInAs('alice')).res.status, 302, 'expired 20 s ago: within the skew');
    idp.rewrite = (p) => ({ ...p, iat: now + 3600, exp: now + 7200 });
    t.match((await signInAs('alice')).body, { detail: /iat claim/ });
    idp.rewrite = (p) => ({ ...p, nonce: 'another-nonce' });
    t.match((await signInAs('alice')).body, { detail: /nonce is not this sign-in's/ });
    idp.rewrite = null;
  });

  await t.test('a rotated key is fetched and taken; unknown keys fetch at most once per cooldown', async (t) => {
    // The first sign-ins fetched the keys; wait out the cooldown, as a rotation comes long after.
    await new Promise((resolve) => setTimeout(resolve, kCooldownMs + 100));
    const rotated = await signingKey('key-2');
    idp.published = [rotated.publicJwk];
    idp.signWith = rotated;
    idp.rewrite = (p) => p;
    const before = idp.jwksRequests();
    const signedIn = await signInAs('alice');
    t.equal(signedIn.res.status, 302, JSON.stringify(signedIn.body));
    t.equal(idp.jwksRequests(), before + 1, 'the keys fetched again for the new kid');

    const forged = await signingKey('key-forged');
    idp.signWith = forged;
    const from = Date.now();
    const fetched = idp.jwksRequests();
    for (let i = 0; i < 3; i++) t.match((await signInAs('alice')).body, { detail: /a key the identity provider does not publish/ });
    const bound = 1 + Math.floor((Date.now() - from) / kCooldownMs);
    t.ok(idp.jwksRequests() - fetched <= bound, `${idp.jwksRequests() - fetched} fetches for 3 unknown keys (at most ${bound})`);
    // Signed with the provider's own key but claiming the rotated kid: the signature is refused.
    idp.signWith = { ...idp.key, kid: 'key-2' };
    t.match((await signInAs('alice')).body, { detail: /signature is not valid/ });
    idp.signWith = null;
    idp.rewrite = null;
  });

  await t.test('password sign-in beside it, and SSO only with its break-glass Owner', async (t) => {
    t.ok(await signIn(base, kDemoOwner, demoPassword(server.output())), 'password sign-in works where SSO is not only');
    const alice = (await consoleCall(base, owner, 'GET', `orgs/${orgId}/members`)).json.members.find(
      (m: { user: { email: string } }) => m.user.email === 'alice@idp.test',
    );
    t.equal((await setPassword(server.dataDir, alice.userId, 'alice has a long password')).code, 0);
    t.ok(await signIn(base, 'alice@idp.test', 'alice has a long password'), 'alice, with a password, signs in with it too');

    const refused = await consoleCall(base, owner, 'PATCH', `orgs/${orgId}/sso`, { body: { ssoOnly: true } });
    t.equal(refused.status, 400);
    t.match(refused.json.detail, /locked out: Single sign-on only needs a break-glass Owner/);
    const session = await consoleCall(base, owner, 'GET', 'session');
    const on = await consoleCall(base, owner, 'PATCH', `orgs/${orgId}/sso`, {
      body: { ssoOnly: true, breakGlassUserId: session.json.user.id },
    });
    t.equal(on.status, 200, JSON.stringify(on.json));
    await t.rejects(signIn(base, 'alice@idp.test', 'alice has a long password'), /sign-in 403: .*single sign-on only/);
    t.ok(await signIn(base, kDemoOwner, demoPassword(server.output())), 'the break-glass Owner signs in with the password');
    t.equal((await signInAs('alice')).res.status, 302, 'alice signs in by single sign-on');
  });
});

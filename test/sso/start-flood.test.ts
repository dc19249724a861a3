// Anonymous single sign-on starts cost their starter, never the organisation (issue 96 item 6): a start
// stores nothing (the sign-in under way is the browser's sealed cookie), so a flood of starts from many
// addresses leaves no record behind and members sign in throughout; one address is bounded to its
// starts per minute (429 in the spec's envelope), which leaves every other address alone.
import t from 'tap';
import { kSsoStartsPerMinute } from '../../src/http/sign-in-limits.js';
import { kSsoFlowRecords } from '../../src/sso/records.js';
import { CookieJar, configureSso, signInAtIdp, ssoSignIn, startIdp } from '../helpers/oidc-idp.js';
import { startTestServer } from '../helpers/server.js';
import { Store } from '../helpers/store.js';
import { consoleCall, demoPassword, kDemoOwner, signIn } from '../helpers/web-console.js';

t.test('a flood of sign-in starts stores nothing, and members keep signing in', async (t) => {
  // The test's requests name their client address in X-Forwarded-For, as a proxy in front would.
  const server = await startTestServer({ demo: true, env: { FLAGWIRE_TRUSTED_PROXIES: '127.0.0.1' } });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const idp = await startIdp(`${base}/console/sso/callback`);
  t.teardown(() => idp.stop());
  idp.people.set('alice', { email: 'alice@idp.test', name: 'Alice', groups: [] });
  const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
  const orgId = (await consoleCall(base, owner, 'GET', 'home')).json.orgs[0].id as string;
  t.equal((await configureSso(base, owner, orgId, idp, {})).status, 200);
  const start = `${base}/console/sso/${orgId}/start`;
  // The answer itself (a redirect to the identity provider), not followed.
  const startFrom = (address: string) => fetch(start, { redirect: 'manual', headers: { 'x-forwarded-for': address } });

  await t.test('1,010 starts from as many addresses: each sent on, none stored, members sign in', async (t) => {
    let sentOn = 0;
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(Array.from({ length: 101 }, (_, i) => startFrom(`198.18.${batch}.${i + 1}`)));
      sentOn += answers.filter((a) => a.status === 302 && a.headers.get('set-cookie')?.startsWith('flagwire_sso=')).length;
    }
    t.equal(sentOn, 1010, 'every start sent on to the identity provider, with its cookie');
    const store = Store.open(server.dataDir, { readOnly: true });
    t.teardown(() => store.close());
    t.equal(store.listKeyed(kSsoFlowRecords).length, 0, 'no sign-in under way stored');
    const member = await ssoSignIn(base, start, 'alice');
    t.equal(member.res.status, 302, `a member signs in: ${JSON.stringify(member.body)}`);
    t.equal(store.listKeyed(kSsoFlowRecords).length, 1, 'only a sign-in that came back marks its state used');
  });

  await t.test('one address is bounded to its starts per minute; others are not', async (t) => {
    const answers = [];
    for (let i = 0; i < kSsoStartsPerMinute + 10; i++) answers.push(await startFrom('203.0.113.7'));
    t.equal(answers.filter((a) => a.status === 302).length, kSsoStartsPerMinute, `the first ${kSsoStartsPerMinute} sent on`);
    const refused = answers.at(-1)!;
    t.equal(refused.status, 429);
    t.match(await refused.json(), {
      error: 'Too many failed authentication attempts',
      detail: /single sign-on starts came from this address/,
    });
    t.equal((await startFrom('203.0.113.8')).status, 302, 'another address starts');
    const member = await ssoSignIn(base, start, 'alice');
    t.equal(member.res.status, 302, 'a member signs in');
  });

  await t.test("a forged or another browser's cookie signs no one in, and burns no one's state", async (t) => {
    const jar = new CookieJar();
    const { callback } = await signInAtIdp(jar, start, 'alice');
    const forged = await fetch(callback, {
      redirect: 'manual',
      headers: { cookie: `flagwire_sso=${Buffer.from(orgId).toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA` },
    });
    t.equal(forged.status, 401);
    t.match(await forged.json(), { error: 'Sign-in failed', detail: /not one under way in this browser/ });
    const other = new CookieJar();
    await signInAtIdp(other, start, 'alice');
    const stolen = await fetch(callback, { redirect: 'manual', headers: { cookie: other.header() } });
    t.equal(stolen.status, 401, "another sign-in's cookie does not carry this state");
    t.equal((await jar.get(callback)).status, 302, 'the browser that started it still signs in');
  });
});

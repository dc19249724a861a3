// Single sign-on in Chromium: a person of the identity provider (oidc-provider on loopback) gives their
// organisation on the console's sign-in form (one without single sign-on is told so there, in the
// server's words), signs in on the identity provider's own form, and lands in the web console signed
// in, a member with the role of their group, without ever having had a password. axe finds no WCAG 2.2
// AA violation on the form at 1,280 and 390 px, light and dark.
import t from 'tap';
import { configureSso, startIdp } from '../helpers/oidc-idp.js';
import { startTestServer } from '../helpers/server.js';
import { consoleCall, demoPassword, kDemoOwner, launchChromium, signIn, wcagViolationsEverywhere } from '../helpers/web-console.js';

t.test('a full sign-in through the identity provider in Chromium', async (t) => {
  const server = await startTestServer({ demo: true });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const idp = await startIdp(`${base}/console/sso/callback`);
  t.teardown(() => idp.stop());
  idp.people.set('bob', { email: 'bob@idp.test', name: 'Bob Builder', groups: ['Flagwire Editors'] });

  const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
  const orgId = (await consoleCall(base, owner, 'GET', 'home')).json.orgs[0].id as string;
  const configured = await configureSso(base, owner, orgId, idp, { 'flagwire editors': 'editor' });
  t.equal(configured.status, 200, JSON.stringify(configured.json));

  const browser = await launchChromium(t);
  const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(`${base}/console/`);
  const form = page.getByRole('region', { name: 'Single sign-on' });
  await form.getByRole('textbox', { name: 'Organisation' }).waitFor();
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA at 1,280 and 390 px, light and dark: the sign-in form');
  await page.setViewportSize({ width: 1200, height: 900 });

  // An organisation without single sign-on (or none at all): told on the form; the browser stays.
  await form.getByRole('textbox', { name: 'Organisation' }).fill('org_nosuchthing');
  await form.getByRole('button', { name: 'Continue with single sign-on' }).click();
  await page.getByText('Not found: Organisation org_nosuchthing does not sign in with single sign-on.').waitFor();
  t.equal(new URL(page.url()).pathname, '/console/', 'still on the sign-in form');
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA at 1,280 and 390 px, light and dark: the refusal said');
  await page.setViewportSize({ width: 1200, height: 900 });

  // What the form asks: the organisation's start route, and a 404 in the spec's envelope for a malformed id.
  const lookup = await fetch(`${base}/console/sso/${orgId}`);
  t.same(await lookup.json(), { orgId, signInPath: configured.json.signInPath });
  const malformed = await fetch(`${base}/console/sso/%E0%A4`);
  t.equal(malformed.status, 404);
  t.match(await malformed.json(), { error: 'Not found', detail: /does not sign in with single sign-on/ });

  await form.getByRole('textbox', { name: 'Organisation' }).fill(` ${orgId} `);
  await form.getByRole('button', { name: 'Continue with single sign-on' }).click();
  await page.waitForURL((url) => url.href.startsWith(`${idp.issuer}/interaction/`));
  t.ok(page.url().startsWith(`${idp.issuer}/interaction/`), `at the identity provider's login: ${page.url()}`);
  await page.locator('input[name="login"]').fill('bob');
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('heading', { name: 'Organisations and projects' }).waitFor();
  t.equal(new URL(page.url()).pathname, '/console/', 'back in the console');

  // The page's own session: what the console's script reads, with the browser's cookie.
  const session = await page.evaluate(async () => (await fetch('/console/api/session')).json());
  t.equal(session.user.email, 'bob@idp.test');
  t.equal(session.user.name, 'Bob Builder');
  const members = await consoleCall(base, owner, 'GET', `orgs/${orgId}/members`);
  const bob = members.json.members.find((m: { user: { email: string } }) => m.user.email === 'bob@idp.test');
  t.equal(bob.role, 'editor', 'a member with the role of their group');
  const cookies = await page.context().cookies(`${base}/console/sso/callback`);
  t.match(
    cookies.find((c) => c.name === 'flagwire_session'),
    { httpOnly: true, sameSite: 'Strict', path: '/console' },
  );
  t.notOk(
    cookies.some((c) => c.name === 'flagwire_sso'),
    'the binding cookie is cleared',
  );
});

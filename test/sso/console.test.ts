// The single sign-on page of the web console (docs/sso.md: The settings), in Chromium against a real
// server: an Owner follows the home page's link, turns single sign-on on against a real identity provider
// (oidc-provider on loopback), the client secret never shown back, and the sign-in link it shows, pasted
// into the sign-in form, starts a sign-in. An Editor gets no link and the API refuses them (checked
// before SSO only is on: then they could not sign in with a password). Turning SSO only on without a
// break-glass Owner is refused in the API's own words and changes nothing; with one it is saved; and
// single sign-on is removed after a dialog. axe finds no WCAG 2.2 AA violation at 1,280 and 390 px,
// light and dark.
import t from 'tap';
import { startIdp } from '../helpers/oidc-idp.js';
import {
  consoleCall,
  demoConsole,
  demoEditorPage,
  demoPassword,
  kDemoEditor,
  kDemoEditorPassword,
  ensureChromium,
  kDemoOwner,
  signIn,
  wcagViolationsEverywhere,
} from '../helpers/web-console.js';

t.test("an Owner turns single sign-on on, is refused a lock-out, sets SSO only and removes it from the console's page", async (t) => {
  ensureChromium();
  const { browser, server, base, ownerPage } = await demoConsole(t);
  const idp = await startIdp(`${base}/console/sso/callback`);
  t.teardown(() => idp.stop());
  const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
  const orgId = (await consoleCall(base, owner, 'GET', 'home')).json.orgs[0].id as string;
  const settings = async () => (await consoleCall(base, owner, 'GET', `orgs/${orgId}/sso`)).json;
  const heading = 'Single sign-on of Demo Org';

  const page = await ownerPage();
  await page.getByRole('link', { name: 'Single sign-on' }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.getByText(`${base}/console/sso/callback`).waitFor();
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA at 1,280 and 390 px, light and dark: off');
  await page.setViewportSize({ width: 1280, height: 800 });

  // ---- on: the identity provider, the client, a group's role; the secret is written, never shown ----
  await page.getByLabel('Issuer URL').fill(idp.issuer);
  await page.getByLabel('Client ID').fill(idp.clientId);
  await page.getByLabel('Client secret').fill(idp.clientSecret);
  await page.getByLabel(/^Scopes/).fill('email profile groups');
  await page.getByLabel(/^Group roles/).fill('Flagwire Editors=editor');
  await page.getByLabel('Make a member at their first sign-in').check();
  await page.getByRole('button', { name: 'Turn on single sign-on' }).click();
  await page.getByText(/^Single sign-on saved: /).waitFor();
  t.match(await settings(), {
    enabled: true,
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecretSet: true,
    scopes: ['email', 'profile', 'groups'],
    groupRoles: { 'Flagwire Editors': 'editor' },
    createMembers: true,
    ssoOnly: false,
  });
  await page.getByRole('button', { name: 'Save single sign-on' }).waitFor();
  t.equal(await page.getByLabel(/^Client secret/).inputValue(), '', 'the secret is not shown back');

  // The sign-in link the page shows, pasted whole into another browser's sign-in form, starts the sign-in.
  const link = (await page.getByText(/\/console\/sso\/.*\/start$/).textContent())!;
  t.equal(link, `${base}/console/sso/${orgId}/start`);
  const visitor = await (await browser.newContext()).newPage();
  await visitor.goto(`${base}/console/`);
  await visitor.getByRole('textbox', { name: 'Organisation' }).fill(link);
  await visitor.getByRole('button', { name: 'Continue with single sign-on' }).click();
  await visitor.waitForURL((url) => url.href.startsWith(`${idp.issuer}/interaction/`));
  t.equal(await page.getByText(idp.clientSecret).count(), 0);

  // ---- an Editor: no link, and the page's API refuses them, changing nothing ----
  const editorPage = await demoEditorPage(browser, server, orgId);
  t.equal(await editorPage.getByRole('link', { name: 'Single sign-on' }).count(), 0, 'an Editor gets no link');
  const asEditor = await signIn(base, kDemoEditor, kDemoEditorPassword);
  for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
    const refused = await consoleCall(
      base,
      asEditor,
      method,
      `orgs/${orgId}/sso`,
      method === 'PATCH' ? { body: { createMembers: false } } : {},
    );
    t.equal(refused.status, 403, `${method} as an Editor: ${JSON.stringify(refused.json)}`);
  }
  t.match(await settings(), { enabled: true, createMembers: true }, "the Editor's tries changed nothing");

  // ---- SSO only without a break-glass Owner: refused in the API's words, nothing written ----
  await page.getByLabel(/^Password sign-in refused/).check();
  await page.getByRole('button', { name: 'Save single sign-on' }).click();
  await page.getByText(/Refused, so that no one is locked out/).waitFor();
  t.match(await settings(), { ssoOnly: false, breakGlassUserId: null }, 'the refusal changed nothing');
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA at 1,280 and 390 px, light and dark: on, a refusal said');
  await page.setViewportSize({ width: 1280, height: 800 });

  // ---- with the demo Owner as break-glass: saved ----
  await page.getByLabel(/^Break-glass Owner/).selectOption({ label: `Demo Owner (${kDemoOwner})` });
  await page.getByRole('button', { name: 'Save single sign-on' }).click();
  await page.getByText('Single sign-on saved: ssoOnly, breakGlassUserId.').waitFor();
  const ownerId = (await consoleCall(base, owner, 'GET', 'session')).json.user.id as string;
  t.match(await settings(), { ssoOnly: true, breakGlassUserId: ownerId });

  // ---- removed, after a dialog; Cancel keeps it ----
  const dialog = page.getByRole('alertdialog', { name: 'Remove single sign-on?' });
  await page.getByRole('button', { name: 'Remove single sign-on' }).click();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
  t.equal((await settings()).enabled, true, 'cancelled: still on');
  await page.getByRole('button', { name: 'Remove single sign-on' }).click();
  await dialog.getByRole('button', { name: 'Remove' }).click();
  await page.getByText('Single sign-on removed.').waitFor();
  await page.getByRole('button', { name: 'Turn on single sign-on' }).waitFor();
  t.equal((await settings()).enabled, false, 'removed');
});

// The web console's polish (issue 29, item 5), in Chromium against the real server: an unknown id shows
// a "not found" page in place of the one before; a status message does not outlive its page; empty
// lists say what to do next (with the control to do it, only for those who may); a dark scheme that
// follows prefers-color-scheme; no page wider than a 390-pixel phone; axe-core's WCAG 2.2 AA rules pass
// on every page at desktop and phone widths in both schemes; "/" focuses the flag search, whose text
// is kept in the address. One server, one browser, the pages visited by their hash (no reload).
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import {
  consoleCall,
  demoPassword,
  demoSecret,
  kDemoOwner,
  launchChromium,
  setPassword,
  signedInPage,
  signIn,
  visit,
  wcagViolations,
} from '../helpers/web-console.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const kViewer = 'viewer@demo.flagwire.test';
const kViewerPassword = 'viewer password 123';
const kShop = 'prj_DemoWebShop';
const kPlatform = 'prj_DemoPlatform';
const kDesktop = { width: 1280, height: 800 };
const kPhone = { width: 390, height: 844 };
t.test('the web console: not found, status per page, empty states, dark scheme, phone width, WCAG 2.2 AA, "/" and q=', async (t) => {
  const browser = await launchChromium(t);
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  // The receiver listens on loopback: the allow-list lets it through, so the webhook's log has a delivery.
  const server = await startTestServer({ demo: true, env: { FLAGWIRE_WEBHOOK_ALLOW: '127.0.0.1' } });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const dir = server.dataDir;
  const ownerPassword = demoPassword(server.output());
  const shopWrite = demoSecret(server.output(), 'demo-write');
  const platformWrite = demoSecret(server.output(), 'demo-platform-write');

  // ---- what the pages show: an empty project, a viewer, and something in every list of the others ----
  const orgId = (await cli(dir, ['org', 'list'])).json.orgs[0].id as string;
  const empty = (await cli(dir, ['project', 'create', '--org', orgId, '--name', 'Empty'])).json.id as string;
  const viewer = (await cli(dir, ['user', 'create', '--email', kViewer, '--name', 'Demo Viewer'])).json.id as string;
  await cli(dir, ['org', 'add-member', orgId, viewer, '--role', 'viewer']);
  t.equal((await setPassword(dir, viewer, `${kViewerPassword}\n`)).code, 0);
  const flagId = async (name: string, token: string) =>
    ((await call(base, 'GET', `/api/v1/flags?name=${name}`, { token })).json.flags[0] as { id: string }).id;
  const checkout = await flagId('new-checkout', shopWrite);
  const search = await flagId('search-v2', platformWrite);
  const hook = await call(base, 'POST', '/api/v1/webhooks', { token: shopWrite, body: { url: `${receiver.url}/a/long/path/for/phones` } });
  t.equal(hook.status, 201, hook.text);
  const scheduled = await call(base, 'POST', `/api/v1/flags/${checkout}/schedules`, {
    token: shopWrite,
    body: { at: Date.now() + 3_600_000, patch: { enabled: true } },
  });
  t.equal(scheduled.status, 201, scheduled.text);
  const rollout = await call(base, 'POST', `/api/v1/flags/${checkout}/rollouts`, {
    token: shopWrite,
    body: { steps: [{ trafficPercentage: 10, holdMs: 3_600_000 }, { trafficPercentage: 100 }] },
  });
  t.equal(rollout.status, 201, rollout.text);
  const session = await signIn(base, kDemoOwner, ownerPassword);
  const tokens = (await consoleCall(base, session, 'GET', `projects/${kShop}/tokens`)).json.tokens as { id: string; name: string }[];
  const tokenId = tokens.find((tk) => tk.name === 'demo-read')!.id;
  // The changes made above are delivered to the webhook, so its page has a delivery log to show.
  for (let tries = 0; tries < 1200 && receiver.received.length === 0; tries++) await new Promise((r) => setTimeout(r, 50));
  t.ok(receiver.received.length > 0, 'the webhook has a delivery to list');

  const page = await signedInPage(browser, base, kDemoOwner, ownerPassword);
  const status = page.locator('#status');
  const main = page.locator('#page');

  // ---- a: an unknown id is a "not found" page, in place of the page before it ----
  for (const [hash, detail] of [
    ['#/flags/flg_doesnotexist', 'No flag with id "flg_doesnotexist" exists.'],
    ['#/tokens/tok_doesnotexist', 'No token with id "tok_doesnotexist" exists.'],
    ['#/projects/prj_doesnotexist/webhooks', 'No project with id "prj_doesnotexist" exists.'],
    [`#/orgs/org_doesnotexist/members`, 'No organisation with id "org_doesnotexist" exists.'],
    ['#/no/such/page', 'No page of the console has this address.'],
  ] as const) {
    await visit(page, `#/projects/${kShop}`, 'Web shop');
    await visit(page, hash, 'Not found');
    t.match(await main.textContent(), detail, `${hash}: the page says what was not found`);
    t.equal(await main.getByRole('table').count(), 0, `${hash}: the flag list before it is gone`);
    t.equal(await main.getByText('Web shop').count(), 0, `${hash}: nothing of the page before is left`);
    t.equal(await page.title(), 'Not found · Flagwire console');
  }
  await main.getByRole('link', { name: 'Back to your projects' }).click();
  await page.getByRole('heading', { level: 1, name: 'Organisations and projects' }).waitFor();

  // ---- b: a status message, a success or an error, stays on its page only ----
  await visit(page, `#/flags/${checkout}`, 'new-checkout');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('Nothing changed: new-checkout already had these values.').waitFor();
  await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: 'Web shop' }).click();
  await page.getByRole('heading', { level: 1, name: 'Web shop' }).waitFor();
  t.equal(await status.textContent(), '', 'a success message is cleared by the next page');
  await visit(page, `#/flags/${checkout}`, 'new-checkout');
  await page.getByLabel('Traffic percentage').fill('150');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('Invalid request: "trafficPercentage" must be a whole number between 0 and 100').waitFor();
  t.equal(await status.getAttribute('class'), 'status error');
  await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: 'Home' }).click();
  // The refused 150 is still in the form, unsaved: leaving asks first.
  await page.getByRole('alertdialog', { name: 'Leave this page?' }).getByRole('button', { name: 'Leave page' }).click();
  await page.getByRole('heading', { level: 1, name: 'Organisations and projects' }).waitFor();
  t.same([await status.textContent(), await status.getAttribute('class')], ['', 'status'], 'and so is an error');
  // A message about the navigation itself is the new page's: a flag created, then its page.
  await visit(page, `#/projects/${kShop}`, 'Web shop');
  await page.getByLabel('Name', { exact: true }).fill('polished');
  await page.getByRole('button', { name: 'Create flag' }).click();
  await page.getByRole('heading', { level: 1, name: 'polished' }).waitFor();
  t.equal(await status.textContent(), 'Flag polished created (off).', "the creation's message is shown on the flag's page");

  // ---- c: empty lists say what to do, with the control to do it ----
  const emptyPages = [
    [`#/projects/${empty}`, 'Empty', 'This project has no flags yet.', 'Create a flag', 'Name'],
    [`#/projects/${empty}/tokens`, 'Tokens of Empty', 'No tokens yet.', 'Create a token', 'Token name'],
    [`#/projects/${empty}/webhooks`, 'Webhooks of Empty', 'No webhooks yet.', 'Create a webhook', 'URL'],
  ] as const;
  for (const [hash, heading, sentence, action, field] of emptyPages) {
    await visit(page, hash, heading);
    t.match(await main.locator('.empty').textContent(), sentence, `${heading}: the empty list says so`);
    await main.getByRole('button', { name: action, exact: true }).click();
    t.ok(
      await page.getByLabel(field, { exact: true }).evaluate((el) => el === document.activeElement),
      `${heading}: "${action}" takes the user to the form's ${field} field`,
    );
  }
  await visit(page, `#/projects/${empty}/audit`, 'Audit log of Empty');
  t.match(await main.locator('.empty').textContent(), /^Nothing has been changed in this project yet: every change/);
  t.ok(await main.getByRole('link', { name: 'Go to the flags' }).isVisible(), 'an editor is pointed to the flags');
  await visit(page, `#/projects/${kShop}/audit?actor=user%3Anobody`, 'Audit log of Web shop');
  t.match(await main.locator('.empty').textContent(), 'No entries match these filters.');
  await main.getByRole('link', { name: 'Show every entry' }).click();
  await page.getByRole('table').waitFor();
  t.notOk(page.url().includes('actor='), '"Show every entry" drops the filters');
  await visit(page, '#/mail', 'Your mail');
  t.match(await main.locator('.empty').textContent(), /^No messages\. When an API token of one of your organisations is refused/);
  await visit(page, `#/projects/${kShop}`, 'Web shop');
  await page.getByLabel('Search flags').fill('nothing-like-this');
  t.match(await main.locator('.empty').textContent(), 'No flag matches the search, the tag and the choice shown.');
  await main.getByRole('button', { name: 'Show every flag' }).click();
  t.equal(await main.locator('tbody tr').count(), 4, '"Show every flag" clears the search');

  const seen = await signedInPage(browser, base, kViewer, kViewerPassword);
  const viewerEmpty = [
    [`#/projects/${empty}`, 'Empty', 'This project has no flags yet. An Editor, Admin or Owner of its organisation can create them.'],
    [`#/projects/${empty}/tokens`, 'Tokens of Empty', 'No tokens yet. An Editor, Admin or Owner of the organisation can create one.'],
    [`#/projects/${empty}/webhooks`, 'Webhooks of Empty', 'No webhooks yet. An Editor, Admin or Owner can create one.'],
    [`#/projects/${empty}/audit`, 'Audit log of Empty', /^Nothing has been changed in this project yet/],
  ] as const;
  for (const [hash, heading, sentence] of viewerEmpty) {
    await visit(seen, hash, heading);
    const empties = seen.locator('#page .empty');
    t.match(await empties.textContent(), sentence, `a viewer reads why ${heading} is empty`);
    t.equal(await empties.locator('button, a').count(), 0, `and is offered no action on ${heading}`);
  }

  await visit(page, `#/orgs/${orgId}/members`, 'Members of Demo Org');
  t.match(await main.locator('.empty').textContent(), 'No pending invitations.');
  await main.getByRole('button', { name: 'Invite someone' }).click();
  t.ok(
    await page.getByLabel('E-mail address to invite').evaluate((el) => el === document.activeElement),
    '"Invite someone" focuses the address',
  );
  // An invitation is audited in each of the organisation's projects: made only now the empty project's log was seen empty.
  const invited = await consoleCall(base, session, 'POST', `orgs/${orgId}/invitations`, {
    body: { email: 'new@demo.flagwire.test', role: 'editor' },
  });
  t.equal(invited.status, 200, JSON.stringify(invited.json));

  // ---- g: "/" focuses the search; its text is kept in the address, through a reload and back ----
  await visit(page, '#/', 'Organisations and projects');
  await visit(page, `#/projects/${kShop}`, 'Web shop');
  const searchBox = page.getByLabel('Search flags');
  await page.getByLabel('Name', { exact: true }).focus();
  await page.keyboard.press('/');
  t.equal(await page.getByLabel('Name', { exact: true }).inputValue(), '/', 'typed in a field, "/" is a character');
  await page.getByLabel('Name', { exact: true }).fill('');
  await page.getByRole('heading', { level: 1 }).click();
  await page.keyboard.press('/');
  t.ok(await searchBox.evaluate((el) => el === document.activeElement), '"/" focuses the search field');
  t.equal(await searchBox.inputValue(), '', 'without typing itself into it');
  await page.keyboard.type('dark');
  await page.waitForURL(/\?q=dark$/);
  t.same(await main.locator('tbody tr td:first-child a').allTextContents(), ['dark-mode']);
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Web shop' }).waitFor();
  t.equal(await searchBox.inputValue(), 'dark', 'a reload keeps the search');
  t.same(await main.locator('tbody tr td:first-child a').allTextContents(), ['dark-mode'], 'and its rows');
  await main.getByRole('link', { name: 'dark-mode' }).click();
  await page.getByRole('heading', { level: 1, name: 'dark-mode' }).waitFor();
  await page.goBack();
  await page.getByRole('heading', { level: 1, name: 'Web shop' }).waitFor();
  t.equal(await searchBox.inputValue(), 'dark', 'so does going back to the list');
  t.match(page.url(), /#\/projects\/prj_DemoWebShop\?q=dark$/);
  await searchBox.fill('');
  await page.waitForURL(/#\/projects\/prj_DemoWebShop$/);

  // ---- d: the dark scheme follows the browser's preference ----
  const colours = () =>
    page.evaluate(() => {
      const style = getComputedStyle(document.body);
      return [style.backgroundColor, style.color];
    });
  const light = await colours();
  await page.emulateMedia({ colorScheme: 'dark' });
  const dark = await colours();
  t.not(dark[0], light[0], 'the background changes with prefers-color-scheme');
  t.not(dark[1], light[1], 'and the text colour');
  await page.emulateMedia({ colorScheme: 'light' });
  t.same(await colours(), light, 'and changes back');

  // ---- e, f: every page, at desktop and phone widths, light and dark: WCAG 2.2 AA, no sideways scroll ----
  const routes: [string, string][] = [
    ['#/', 'Organisations and projects'],
    [`#/projects/${kShop}`, 'Web shop'],
    [`#/flags/${checkout}`, 'new-checkout'],
    [`#/flags/${search}`, 'search-v2'],
    [`#/projects/${kShop}/tokens`, 'Tokens of Web shop'],
    [`#/tokens/${tokenId}`, 'Activity of token demo-read'],
    [`#/projects/${kShop}/webhooks`, 'Webhooks of Web shop'],
    [`#/projects/${kShop}/audit`, 'Audit log of Web shop'],
    [`#/projects/${kPlatform}/settings`, 'Environments and audiences of Platform'],
    [`#/orgs/${orgId}/members`, 'Members of Demo Org'],
    ['#/mail', 'Your mail'],
    [`#/projects/${empty}`, 'Empty'],
    [`#/projects/${empty}/tokens`, 'Tokens of Empty'],
    ['#/flags/flg_doesnotexist', 'Not found'],
  ];
  for (const viewport of [kDesktop, kPhone]) {
    await page.setViewportSize(viewport);
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      for (const [hash, heading] of routes) {
        await visit(page, hash, heading);
        const where = `${hash} at ${viewport.width} px, ${colorScheme}`;
        t.same(await wcagViolations(page), [], `axe WCAG 2.2 AA: no violation on ${where}`);
        const [scrollWidth, clientWidth] = await page.evaluate(() => [
          document.documentElement.scrollWidth,
          document.documentElement.clientWidth,
        ]);
        t.ok(scrollWidth <= clientWidth, `no sideways scrolling on ${where} (${scrollWidth} <= ${clientWidth})`);
      }
    }
  }
});

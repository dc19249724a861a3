// The project page's flag list (issue 29, item 1), in Chromium against the real server: a column per
// environment with a one-click toggle for those who may change flags (checked from outside through the
// Evaluation API) that asks first in a protected environment, the state's percentage at a glance,
// evaluations and the last one, the stale badge and the Show filter (the CLI's `flag stale` rule,
// src/model/flags.ts isStale, kept in the address), read-only pills for a viewer.
import type { Page } from 'playwright-core';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { advanceClock, flushActivity } from '../helpers/test-hooks.js';
import { demoConsole, setPassword, signedInPage, visit } from '../helpers/web-console.js';

const kViewer = 'viewer@demo.flagwire.test';
const kViewerPassword = 'viewer password 123';
const kShop = 'prj_DemoWebShop';
const kPlatform = 'prj_DemoPlatform';
const kDayS = 86_400;

/** The flag names in the list's rows, in order. */
async function rowNames(page: Page): Promise<string[]> {
  return page.locator('main table tbody tr td:first-child a').allTextContents();
}

t.test('the flag list: toggles per environment, evaluations, stale flags', async (t) => {
  const { browser, server, base, secret, ownerPage } = await demoConsole(t, { FLAGWIRE_TEST_HOOKS: '1' });
  const dir = server.dataDir;
  const flags = (await cli(dir, ['flag', 'list', kShop])).json.flags.concat((await cli(dir, ['flag', 'list', kPlatform])).json.flags) as {
    id: string;
    name: string;
  }[];
  const id = (name: string) => flags.find((f) => f.name === name)!.id;
  const evaluated = async (name: string, query: string) =>
    (await call(base, 'GET', `/v1/flags/${id(name)}?targetingKey=u-1&${query}`)).json.enabled;

  let page = await ownerPage();
  let main = page.locator('main');

  // ---- a multi-environment project: a column per environment, one click each ----
  await visit(page, `#/projects/${kPlatform}`, 'Platform');
  t.same(await main.locator('table thead th').allTextContents(), ['Flag', 'staging', 'production', 'Evaluations', 'Tags']);
  const production = main.getByRole('button', { name: 'On: search-v2 in production' });
  t.equal(await production.getAttribute('aria-pressed'), 'true');
  t.match(await production.locator('xpath=..').textContent(), /10% · cohorts qa-team/, 'the percentage and cohorts at a glance');
  await production.click();
  const off = main.getByRole('button', { name: 'Off: search-v2 in production' });
  await off.waitFor();
  t.equal(await off.getAttribute('aria-pressed'), 'false');
  t.equal(await page.locator('#status').textContent(), 'search-v2 turned off in production. Undo');
  t.equal(await evaluated('search-v2', 'env=production&cohort=qa-team'), false, 'off in production, as the Evaluation API answers');
  t.equal(await evaluated('search-v2', 'env=staging'), true, 'staging untouched');
  await page.locator('#status').getByRole('button', { name: 'Undo' }).click();
  await page.locator('#status').filter({ hasText: 'Undone: search-v2 in production has its previous enabled again.' }).waitFor();
  await main.getByRole('button', { name: 'On: search-v2 in production' }).waitFor();
  t.equal(await evaluated('search-v2', 'env=production&cohort=qa-team'), true, 'undone from the status line: on again');
  await main.getByRole('button', { name: 'On: search-v2 in production' }).click();
  await main.getByRole('button', { name: 'Off: search-v2 in production' }).click();
  await main.getByRole('button', { name: 'On: search-v2 in production' }).waitFor();
  t.equal(await evaluated('search-v2', 'env=production&cohort=qa-team'), true, 'off and on again by the toggle itself');

  // ---- a protected environment asks first; cancelled, nothing changes ----
  await visit(page, `#/projects/${kPlatform}/settings`, 'Environments and audiences of Platform');
  await main.getByLabel('production', { exact: true }).check();
  await main.getByRole('button', { name: 'Save protection' }).click();
  await page.locator('#status').filter({ hasText: 'Protected environments: production.' }).waitFor();
  t.match(await main.getByText('staging, production (protected)').count(), 1);
  await visit(page, `#/projects/${kPlatform}`, 'Platform');
  const protectedDialog = page.getByRole('alertdialog', { name: 'Turn search-v2 off in production?' });
  await main.getByRole('button', { name: 'On: search-v2 in production' }).click();
  t.equal(await protectedDialog.getByText('production is a protected environment.').count(), 1, 'the dialog says why it asks');
  await protectedDialog.getByRole('button', { name: 'Cancel' }).click();
  await main.getByRole('button', { name: 'On: search-v2 in production', disabled: false }).waitFor();
  t.equal(await protectedDialog.count(), 0, 'cancelled: the dialog is gone');
  t.equal(await evaluated('search-v2', 'env=production&cohort=qa-team'), true, 'cancelled: still on');
  await main.getByRole('button', { name: 'On: search-v2 in production' }).click();
  await protectedDialog.getByRole('button', { name: 'Go ahead' }).click();
  await main.getByRole('button', { name: 'Off: search-v2 in production' }).waitFor();
  t.equal(await evaluated('search-v2', 'env=production&cohort=qa-team'), false, 'confirmed: off');
  await main.getByRole('button', { name: 'Off: search-v2 in production' }).click();
  await page.getByRole('alertdialog', { name: 'Turn search-v2 on in production?' }).getByRole('button', { name: 'Go ahead' }).click();
  await main.getByRole('button', { name: 'On: search-v2 in production' }).waitFor();
  await main.getByRole('button', { name: 'On: search-v2 in staging' }).click();
  await main.getByRole('button', { name: 'Off: search-v2 in staging' }).click();
  await main.getByRole('button', { name: 'On: search-v2 in staging' }).waitFor();
  const staging = await page.getByRole('alertdialog').count();
  t.equal(staging, 0, 'an environment not protected asks nothing');

  // ---- a single-environment project: one State column ----
  await visit(page, `#/projects/${kShop}`, 'Web shop');
  t.same(await main.locator('table thead th').allTextContents(), ['Flag', 'State', 'Evaluations', 'Tags']);
  // Its percentage is 0: on, it still answers false to everyone, so its state is read as stored.
  const stored = async (name: string) => (await cli(dir, ['flag', 'show', id(name)])).json.enabled;
  t.equal(await stored('holiday-banner'), false);
  await main.getByRole('button', { name: 'Off: holiday-banner' }).click();
  await main.getByRole('button', { name: 'On: holiday-banner' }).waitFor();
  t.equal(await stored('holiday-banner'), true, 'turned on with one click');
  const audit = (await cli(dir, ['audit', kShop, '--limit', '5'])).json.entries[0];
  t.match(audit, { action: 'flag.patch', flagId: id('holiday-banner'), changes: { enabled: { before: false, after: true } } }, 'audited');

  // ---- a split at a glance: a typed flag whose rule is a bare fractional ----
  const split = await call(base, 'POST', '/api/v1/flags', {
    token: secret('demo-write'),
    body: {
      name: 'split-flag',
      enabled: true,
      trafficPercentage: 100,
      variants: { on: 'ON', off: 'OFF' },
      defaultVariant: 'off',
      targeting: {
        fractional: [
          ['on', 10],
          ['off', 90],
        ],
      },
    },
  });
  t.equal(split.status, 201, split.text);
  await visit(page, '#/', 'Organisations and projects');
  await visit(page, `#/projects/${kShop}`, 'Web shop');
  t.match(
    await main.getByRole('button', { name: 'On: split-flag' }).locator('xpath=..').textContent(),
    /100% · 2 variants · split on=10\/off=90$/,
  );
  t.equal((await cli(dir, ['flag', 'delete', split.json.id])).code, 0, 'gone again: the list below is the demo list');

  // ---- evaluations: the count and the last one, or never ----
  for (let i = 0; i < 3; i++) t.equal(await evaluated('dark-mode', 'plan=beta'), true);
  await flushActivity(server);
  await visit(page, '#/', 'Organisations and projects');
  await visit(page, `#/projects/${kShop}`, 'Web shop');
  const row = (name: string) => main.locator('table tbody tr', { has: page.getByRole('link', { name, exact: true }) });
  t.match(await row('dark-mode').locator('td').nth(2).textContent(), /^3last \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
  t.equal(await row('new-checkout').locator('td').nth(2).textContent(), 'never evaluated');
  t.equal(
    await row('dark-mode').getByRole('img').getAttribute('aria-label'),
    'Evaluations per hour over the last 24 hours: 3 in all, at most 3 in an hour',
    'the last day per hour, in words',
  );
  t.equal(await row('dark-mode').locator('svg.hourly rect[height="20"]').count(), 1, 'one full bar: this hour');
  t.equal(await row('new-checkout').locator('svg').count(), 0, 'no chart without evaluations');
  await visit(page, `#/projects/${kPlatform}`, 'Platform');
  t.match(
    await row('search-v2').locator('td').nth(2).getByRole('img').getAttribute('aria-label'),
    /^Evaluations in production per hour over the last 24 hours: [1-9]\d* in all/,
    "a group flag's environment: its own last day per hour",
  );

  // ---- stale: 31 days on, only dark-mode evaluated since ----
  await advanceClock(server, 31 * kDayS);
  t.equal(await evaluated('dark-mode', 'plan=beta'), true);
  await flushActivity(server);
  // By the server's clock (the CLI's `flag stale` would judge by this machine's, a month behind).
  const stale = ['holiday-banner', 'new-checkout'];
  // A month on, the session has ended: signed in again.
  page = await ownerPage();
  main = page.locator('main');
  await visit(page, `#/projects/${kShop}`, 'Web shop');
  await main.getByLabel('Show').selectOption('stale');
  t.same((await rowNames(page)).sort(), stale, 'never evaluated and created more than 30 days ago');
  t.equal(await main.locator('table tbody .pill.stale').count(), 2, 'each with its badge');
  t.match(page.url(), /#\/projects\/prj_DemoWebShop\?show=stale$/, 'the choice in the address');
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Web shop' }).waitFor();
  t.same((await rowNames(page)).sort(), stale, 'kept across a reload');
  t.equal(await main.getByLabel('Show').inputValue(), 'stale');
  await main.getByLabel('Show').selectOption('never');
  t.same((await rowNames(page)).sort(), ['holiday-banner', 'new-checkout'], 'never evaluated');
  await main.getByLabel('Show').selectOption('all');
  t.equal((await rowNames(page)).length, 3);

  // ---- a viewer: the states as pills, nothing to press ----
  const viewer = (await cli(dir, ['user', 'create', '--email', kViewer, '--name', 'Demo Viewer'])).json.id as string;
  const orgId = (await cli(dir, ['org', 'list'])).json.orgs[0].id as string;
  await cli(dir, ['org', 'add-member', orgId, viewer, '--role', 'viewer']);
  t.equal((await setPassword(dir, viewer, `${kViewerPassword}\n`)).code, 0);
  const viewerPage = await signedInPage(browser, base, kViewer, kViewerPassword);
  await visit(viewerPage, `#/projects/${kPlatform}`, 'Platform');
  t.equal(await viewerPage.locator('main table button').count(), 0, 'no toggle for a viewer');
  t.equal(await viewerPage.locator('main table .pill.on').count(), 2, 'search-v2 on in both environments');
});

// The web console in Chromium (issue 41, item 7): a page whose data comes late is dropped once the user
// has gone on (the newer page stays); the audit log fits a 1,280-pixel screen with long values and shows
// times as dates in <time> elements; typing in the sign-in form is no unsaved edit; the tab's icon is a
// real image. One demo server, one browser.
import type { Page } from 'playwright-core';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { demoConsole, wcagViolations } from '../helpers/web-console.js';

const kShop = 'prj_DemoWebShop';

/** Goes to `hash` the way a link does (a hash change, no reload). */
function go(page: Page, hash: string): Promise<void> {
  return page.evaluate((h) => {
    location.hash = h;
  }, hash);
}

const { base, server, secret, ownerPage } = await demoConsole(t);
const dir = server.dataDir;
const page = await ownerPage();
await page.setViewportSize({ width: 1280, height: 800 });

t.test('a page whose data comes late is not drawn over the page the user went on to', async (t) => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let asked!: () => void;
  const requested = new Promise<void>((resolve) => (asked = resolve));
  await page.route('**/console/api/projects/*/audit*', async (route) => {
    asked();
    await held;
    // Abandoned by the page meanwhile: nothing left to answer.
    await route.continue().catch(() => {});
  });
  const isAudit = (url: string) => new URL(url).pathname.endsWith('/audit');
  const auditRead = new Promise<string>((resolve) => {
    page.on('requestfinished', (r) => isAudit(r.url()) && resolve('answered'));
    page.on('requestfailed', (r) => isAudit(r.url()) && resolve('abandoned'));
  });
  await go(page, `#/projects/${kShop}/audit`);
  await requested;
  await go(page, `#/projects/${kShop}/tokens`);
  await page.getByRole('heading', { level: 1, name: 'Tokens of Web shop' }).waitFor();
  release();
  t.equal(await auditRead, 'abandoned', "the left page's read is abandoned");
  t.equal(await page.locator('h1').textContent(), 'Tokens of Web shop', 'the newer page stays');
  t.equal(await page.title(), 'Tokens of Web shop · Flagwire console');
  await page.unroute('**/console/api/projects/*/audit*');
});

t.test('the audit log at 1,280 px: long values wrap, times are dates', async (t) => {
  const flagId = (await call(base, 'GET', '/api/v1/flags?name=holiday-banner', { token: secret('demo-write') })).json.flags[0].id as string;
  const cohorts = Array.from({ length: 12 }, (_, i) => `cohort-with-a-rather-long-name-${i}`);
  const schedule = await cli(dir, ['flag', 'schedule', flagId, '--at', '+30m', '--patch', JSON.stringify({ cohorts })]);
  t.equal(schedule.code, 0, schedule.stderr);
  const at = schedule.json.at as number;
  const expression = `sum(rate(http_requests_total{code=~"5..",service="checkout-frontend-production-eu-west-1"}[5m]))/sum(rate(http_requests_total{service="checkout-frontend-production-eu-west-1"}[5m]))`;
  const rollout = await cli(dir, [
    'flag',
    'rollout',
    flagId,
    '--steps',
    '10:1h,50:2h,100',
    '--guard-prometheus',
    expression,
    '--guard-max',
    '0.05',
  ]);
  t.equal(rollout.code, 0, rollout.stderr);
  await go(page, `#/projects/${kShop}/audit`);
  await page.getByRole('heading', { level: 1, name: 'Audit log of Web shop' }).waitFor();
  await page.getByRole('row').filter({ hasText: 'rollout.start' }).waitFor();
  const widths = await page.evaluate(() => {
    const box = document.querySelector('.table-box')!;
    return {
      page: document.documentElement.scrollWidth,
      viewport: document.documentElement.clientWidth,
      table: box.scrollWidth,
      box: box.clientWidth,
    };
  });
  t.ok(widths.page <= widths.viewport, `the page does not scroll sideways (${widths.page} <= ${widths.viewport})`);
  t.ok(widths.table <= widths.box, `nor does the table in its box (${widths.table} <= ${widths.box})`);
  const scheduled = page.getByRole('row').filter({ hasText: 'schedule.create' }).first();
  t.equal(await scheduled.locator('.change time').count(), 1, "the schedule's time is a <time>");
  t.equal(await scheduled.locator('.change time').getAttribute('datetime'), new Date(at).toISOString(), 'of that instant');
  t.match(await scheduled.locator('.change time').textContent(), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/, 'read as a date');
  t.match(
    await scheduled.getByRole('cell').first().locator('time').textContent(),
    /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/,
    'so is when it was done',
  );
  t.notMatch(await page.locator('tbody').textContent(), /\d{13}/, 'no time as Unix milliseconds');
  t.match(
    await scheduled.locator('.change').textContent(),
    /patch: \{cohorts: cohort-with-a-rather-long-name-0, /,
    'a record read field by field',
  );
  t.same(await wcagViolations(page), [], 'axe WCAG 2.2 AA: the audit log');
});

t.test("the tab's icon", async (t) => {
  const icon = await page.evaluate(async () => {
    const img = new Image();
    img.src = '/favicon.ico';
    await img.decode();
    return [img.naturalWidth, img.naturalHeight];
  });
  t.same(icon, [16, 16], '/favicon.ico is an image the browser decodes');
});

t.test('typing in the sign-in form is no unsaved edit', async (t) => {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
  await page.getByLabel('Email').fill('someone@example.com');
  await page.getByLabel('Password').fill('half a password');
  const beforeUnload = await page.evaluate(() => {
    const event = new Event('beforeunload', { cancelable: true });
    window.dispatchEvent(event);
    return event.defaultPrevented;
  });
  t.equal(beforeUnload, false, 'closing the tab does not ask');
  await page.getByRole('link', { name: 'Flagwire console' }).click();
  // Not signed in, the link shows the sign-in form again: drawn anew, its fields empty.
  await page.waitForFunction(() => document.querySelector<HTMLInputElement>('input[name="email"]')?.value === '');
  t.equal(await page.getByRole('alertdialog').count(), 0, 'no "Leave this page?"');
  t.match(page.url(), /#\/$/, 'the link was followed');
});

// Safe changes in the web console (issue 29, item 4), in Chromium as the demo owner, each checked from
// outside the browser too: rotate and revoke ask in a dialog naming the token (focus in it, Escape and
// Cancel change nothing; axe on the dialog), a rotation's grace period chosen there keeps the old secret
// working; leaving a page with unsaved edits asks (Cancel keeps the page and the edits) and arms
// beforeunload; the status line's Undo puts a flag's previous values back with one audited PATCH (a
// setting's, such as its name or tags, through that setting's own route); the
// audit log reads by names, one line per changed field.
import type { Page } from 'playwright-core';
import t from 'tap';
import { call } from '../helpers/http.js';
import { demoConsole, seriousViolations } from '../helpers/web-console.js';

const kShop = 'prj_DemoWebShop';

/** Whether a beforeunload now would be cancelled (the browser's "Leave site?" prompt). */
function beforeUnloadPrevented(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const event = new Event('beforeunload', { cancelable: true });
    window.dispatchEvent(event);
    return event.defaultPrevented;
  });
}

t.test('confirm dialogs, grace period, unsaved edits, undo and a readable audit log', async (t) => {
  const { base, secret, ownerPage } = await demoConsole(t);
  const readSecret = secret('demo-read');
  const writeSecret = secret('demo-write');
  const whoAmI = (token: string) => call(base, 'GET', '/api/v1/token', { token });
  const page = await ownerPage();

  // ---- rotate and revoke ask first; Escape and Cancel change nothing ----
  await page.goto(`${base}/console#/projects/${kShop}/tokens`);
  await page.getByRole('heading', { name: 'Tokens of Web shop' }).waitFor();
  await page.getByRole('button', { name: 'Rotate demo-read' }).click();
  const rotateDialog = page.getByRole('alertdialog', { name: 'Rotate token demo-read?' });
  await rotateDialog.waitFor();
  t.ok(await rotateDialog.getByRole('button', { name: 'Cancel' }).evaluate((b) => b === document.activeElement), 'focus is in the dialog');
  t.same(await seriousViolations(page), [], 'axe: the rotate dialog');
  await page.keyboard.press('Escape');
  await rotateDialog.waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Revoke demo-read' }).click();
  const revokeDialog = page.getByRole('alertdialog', { name: 'Revoke token demo-read?' });
  await revokeDialog.getByRole('button', { name: 'Cancel' }).click();
  await revokeDialog.waitFor({ state: 'detached' });
  t.equal(await page.locator('#token-secret').count(), 0, 'no new secret');
  t.equal((await whoAmI(readSecret)).status, 200, 'Escape and Cancel left the secret working');

  // ---- rotated with an hour's grace: both secrets work until the old one is revoked ----
  await page.getByRole('button', { name: 'Rotate demo-read' }).click();
  await rotateDialog.getByLabel('Old secret keeps working for').selectOption({ label: '1 hour' });
  await rotateDialog.getByRole('button', { name: 'Rotate' }).click();
  await page.getByText(/^Token demo-read rotated: the old secret works until /).waitFor();
  const newSecret = (await page.locator('#token-secret').textContent())!;
  t.equal((await whoAmI(readSecret)).status, 200, 'the old secret works in its grace');
  t.equal((await whoAmI(newSecret)).status, 200, 'the new one works');
  await page.getByText(/^old secret works until /).waitFor();
  await page.getByRole('button', { name: 'Revoke old secret of demo-read' }).click();
  const endDialog = page.getByRole('alertdialog', { name: 'Revoke the old secret of token demo-read?' });
  t.same(await seriousViolations(page), [], 'axe: the revoke dialog');
  await endDialog.getByRole('button', { name: 'Revoke' }).click();
  await page.getByText('Token demo-read revoked.').waitFor();
  t.equal((await whoAmI(readSecret)).json.error, 'Token revoked', 'the old secret is refused once revoked');
  t.equal((await whoAmI(newSecret)).status, 200, 'the new one still works');

  // ---- leaving a page with unsaved edits asks; Cancel keeps the page and the edits ----
  const flagId = (await call(base, 'GET', '/api/v1/flags?name=holiday-banner', { token: writeSecret })).json.flags[0].id as string;
  const apiFlag = async () => (await call(base, 'GET', `/api/v1/flags/${flagId}`, { token: writeSecret })).json;
  await page.goto(`${base}/console#/flags/${flagId}`);
  await page.getByRole('heading', { name: 'holiday-banner', level: 1 }).waitFor();
  t.equal(await beforeUnloadPrevented(page), false, 'a page without edits leaves freely');
  const traffic = page.getByLabel('Traffic percentage');
  await traffic.fill('42');
  t.equal(await beforeUnloadPrevented(page), true, 'beforeunload asks while an edit is unsaved');
  await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: 'Web shop' }).click();
  const leaveDialog = page.getByRole('alertdialog', { name: 'Leave this page?' });
  await leaveDialog.getByText('Your changes to State are not saved.', { exact: false }).waitFor();
  t.same(await seriousViolations(page), [], 'axe: the leave dialog');
  await leaveDialog.getByRole('button', { name: 'Cancel' }).click();
  await leaveDialog.waitFor({ state: 'detached' });
  t.equal(await traffic.inputValue(), '42', 'the edit is still there');
  t.match(page.url(), `#/flags/${flagId}`, 'the address is the flag page again');
  await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link', { name: 'Web shop' }).click();
  await leaveDialog.getByRole('button', { name: 'Leave page' }).click();
  await page.getByRole('heading', { name: 'Web shop', level: 1 }).waitFor();
  t.equal(await beforeUnloadPrevented(page), false, 'the edits were left behind, beforeunload with them');
  t.equal((await apiFlag()).trafficPercentage, 0, 'nothing was saved');

  // ---- a saved change offers Undo: one PATCH puts the previous values back ----
  await page.goto(`${base}/console#/flags/${flagId}`);
  await page.getByRole('heading', { name: 'holiday-banner', level: 1 }).waitFor();
  await page.getByLabel('Enabled').check();
  await traffic.fill('25');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('Saved state of holiday-banner.').waitFor();
  t.match(await apiFlag(), { enabled: true, trafficPercentage: 25 }, 'saved');
  t.equal(await beforeUnloadPrevented(page), false, 'a saved form holds no unsaved edit');
  await page.getByRole('status').getByRole('button', { name: 'Undo' }).click();
  await page.getByText('Undone: holiday-banner has its previous enabled, trafficPercentage again.').waitFor();
  t.match(await apiFlag(), { enabled: false, trafficPercentage: 0 }, 'undone');
  t.equal(await page.getByLabel('Enabled').isChecked(), false, 'the page shows the previous values');

  // ---- the settings' forms offer Undo too: the same route, with the value the page showed before ----
  await page.getByLabel('New name').fill('winter-banner');
  await page.getByRole('button', { name: 'Save name' }).click();
  await page.getByRole('heading', { name: 'winter-banner', level: 1 }).waitFor();
  t.equal((await apiFlag()).name, 'winter-banner', 'renamed');
  await page.getByRole('status').getByRole('button', { name: 'Undo' }).click();
  await page.getByText('Undone: name of holiday-banner put back.').waitFor();
  await page.getByRole('heading', { name: 'holiday-banner', level: 1 }).waitFor();
  t.equal((await apiFlag()).name, 'holiday-banner', 'the rename undone');
  const tagsBefore = (await apiFlag()).tags;
  await page.getByRole('button', { name: 'Add tag' }).click();
  await page.getByLabel(`Tag ${tagsBefore.length + 1}`, { exact: true }).fill('winter');
  await page.getByRole('button', { name: 'Save tags' }).click();
  await page.getByText('Tags saved.').waitFor();
  t.same((await apiFlag()).tags, [...tagsBefore, 'winter'], 'tagged');
  await page.getByRole('status').getByRole('button', { name: 'Undo' }).click();
  await page.getByText('Undone: tags of holiday-banner put back.').waitFor();
  t.same((await apiFlag()).tags, tagsBefore, 'the tags as they were');

  // ---- the audit log: names, and one line per changed field ----
  await page.goto(`${base}/console#/projects/${kShop}/audit`);
  await page.getByRole('heading', { name: 'Audit log of Web shop' }).waitFor();
  t.equal(await page.getByRole('row').filter({ hasText: 'flag.rename' }).count(), 2, 'the rename and its undo are both audited');
  const rows = page.getByRole('row').filter({ hasText: 'flag.patch' });
  t.equal(await rows.count(), 2, 'the change and its undo are both audited');
  const undo = rows.first();
  const lines = await undo.locator('.change').allTextContents();
  t.equal(lines.length, 2, 'the undo, one line per field');
  t.match(lines[0], /^Changed the state of flag holiday-banner flg_\w+ from on to off\.$/, 'the flag by name, its id after');
  t.match(lines[1], /^Changed the traffic percentage of flag holiday-banner flg_\w+ from 25% to 0%\.$/);
  t.match(await undo.getByRole('cell').nth(1).textContent(), /^Demo Owner user:usr_/, 'the actor by name, its id after');
  const rotation = page.getByRole('row').filter({ hasText: 'token.rotate' });
  t.match(
    await rotation.locator('.change').first().textContent(),
    /^Changed token from demo-read \w+ to demo-read \w+\.$/,
    'tokens by name',
  );
  t.equal(
    await rotation.locator('.change').nth(1).textContent(),
    "Set the old secret's grace period (seconds) to 3600.",
    'with its grace period',
  );
  t.same(await seriousViolations(page), [], 'axe: the audit log');
});

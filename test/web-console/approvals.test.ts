// Approvals in the web console (issue 46, item 4), in Chromium against the real server, each outcome
// checked from outside through the Evaluation API: the owner requires an Admin's or Owner's approval in
// Platform's production on the settings page; an editor's one-click toggle there opens a change request
// and changes nothing (the status line links to it, the flag page lists it); an admin, signed in in a
// browser session of their own, finds it under "Mine to approve", reads its diff in words and approves
// it: applied, the flag changed, the history says so; a reject and a withdraw (from the flag page's form)
// change nothing; a token the form names applies without approval, and the request it overtook says it
// is stale and is refused; the author may not approve their own (the page says why) until the rule allows it.
// axe-core's WCAG 2.2 AA rules pass on the requests page, a request and the settings form at 1,280 and
// 390 px, light and dark.
import type { Page } from 'playwright-core';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { demoConsole, setPassword, signedInPage, visit, wcagViolationsEverywhere } from '../helpers/web-console.js';

const kPlatform = 'prj_DemoPlatform';
const kEditor = { email: 'ed@demo.flagwire.test', name: 'Ed Editor', password: 'editor password 123', role: 'editor' };
const kAdmin = { email: 'al@demo.flagwire.test', name: 'Al Admin', password: 'admin password 123', role: 'admin' };

/** Whether the page is no wider than the screen (wcagViolationsEverywhere leaves it at 390 px). */
function fitsWidth(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
}

/**
 * `page` toggles search-v2 in production on the project page (`button`: its label), which opens a
 * change request, and follows the status line's link to it: the request's URL.
 */
async function toggleToRequest(page: Page, button: string): Promise<string> {
  await visit(page, `#/projects/${kPlatform}`, 'Platform');
  await page.getByRole('button', { name: button }).click();
  await statusSays(page, 'Not applied');
  await page.locator('#status').getByRole('link', { name: 'Open the change request' }).click();
  await page.getByRole('heading', { level: 1, name: /^Change request: / }).waitFor();
  return page.url();
}

/** The status line's text once it starts with `start`. */
async function statusSays(page: Page, start: string): Promise<string> {
  const status = page.locator('#status').filter({ hasText: start });
  await status.waitFor();
  return (await status.textContent())!;
}

t.test('approvals: a guarded toggle opens a request; approve, reject, withdraw; no self-approval; axe', async (t) => {
  const { browser, server, base, secret, ownerPage } = await demoConsole(t);
  const dir = server.dataDir;
  const orgId = (await cli(dir, ['org', 'list'])).json.orgs[0].id as string;
  const userIds: Record<string, string> = {};
  for (const person of [kEditor, kAdmin]) {
    const id = (await cli(dir, ['user', 'create', '--email', person.email, '--name', person.name])).json.id as string;
    userIds[person.email] = id;
    await cli(dir, ['org', 'add-member', orgId, id, '--role', person.role]);
    t.equal((await setPassword(dir, id, `${person.password}\n`)).code, 0);
  }
  const flagId = ((await cli(dir, ['flag', 'list', kPlatform])).json.flags as { id: string; name: string }[]).find(
    (f) => f.name === 'search-v2',
  )!.id;
  const inProduction = async () =>
    (await call(base, 'GET', `/v1/flags/${flagId}?targetingKey=u-1&env=production&cohort=qa-team`)).json.enabled as boolean;
  t.equal(await inProduction(), true, 'search-v2 is on in production to begin with');

  // ---- the owner requires one approval in production, by an Admin or Owner ----
  const owner = await ownerPage();
  await visit(owner, `#/projects/${kPlatform}/settings`, 'Environments and audiences of Platform');
  const rule = owner.getByRole('group', { name: 'Approvals in production' });
  await rule.getByRole('group', { name: 'Who may approve in production' }).getByLabel('editor').uncheck();
  await rule.getByRole('button', { name: 'Require approval in production' }).click();
  await statusSays(owner, 'Approvals in production saved.');
  await rule.getByText('A change in production needs 1 approval by owner or admin; its author may not approve it.').waitFor();
  t.same(
    (await cli(dir, ['approvals', 'show', kPlatform])).json.approvals,
    [{ env: 'production', required: 1, roles: ['owner', 'admin'], allowSelf: false, bypassTokens: [] }],
    'the policy as the CLI reads it',
  );
  t.same(await wcagViolationsEverywhere(owner), [], 'axe WCAG 2.2 AA: the settings form');
  t.ok(await fitsWidth(owner), 'no sideways scrolling on the settings form at 390 px');
  await owner.setViewportSize({ width: 1200, height: 900 });

  // ---- the editor's toggle opens a request: nothing changes, the page says so and links to it ----
  const editor = await signedInPage(browser, base, kEditor.email, kEditor.password);
  // An editor reads the policy: a sentence per environment, nothing to change.
  await visit(editor, `#/projects/${kPlatform}/settings`, 'Environments and audiences of Platform');
  const readOnly = editor.getByRole('region', { name: 'Approvals' });
  await readOnly.getByText('A change in production needs 1 approval by owner or admin; its author may not approve it.').waitFor();
  await readOnly.getByText('Changes in staging apply at once, without approval.').waitFor();
  t.equal(await readOnly.locator('form, button, input').count(), 0, 'read-only: no form, button or field');
  await visit(editor, `#/projects/${kPlatform}`, 'Platform');
  await editor.getByRole('button', { name: 'On: search-v2 in production' }).click();
  t.match(
    await statusSays(editor, 'Not applied'),
    /^Not applied: this change needs approval\. Change request opened: .+ \(0 of 1 approvals\)\. Open the change request$/,
  );
  await editor.getByRole('button', { name: 'On: search-v2 in production', disabled: false }).waitFor();
  t.equal(await inProduction(), true, 'the flag is unchanged');
  await editor.locator('#status').getByRole('link', { name: 'Open the change request' }).click();
  const heading = editor.getByRole('heading', { level: 1, name: /^Change request: / });
  await heading.waitFor();
  const requestUrl = editor.url();
  t.match(await editor.locator('#page').textContent(), 'You cannot approve this request:', 'the author is told why not');
  t.equal(await editor.getByRole('button', { name: 'Approve' }).count(), 0, 'and offered no Approve button');
  t.equal(await editor.getByRole('button', { name: 'Withdraw' }).count(), 1, 'the author may withdraw');
  // The flag page lists it.
  await visit(editor, `#/flags/${flagId}`, 'search-v2');
  const pending = editor.getByRole('region', { name: 'Pending change requests' });
  t.match(await pending.textContent(), /by Ed Editor in production: 0 of 1 approval/);

  // ---- an admin, in a session of their own, approves it: applied ----
  const admin = await signedInPage(browser, base, kAdmin.email, kAdmin.password);
  await visit(admin, `#/projects/${kPlatform}/requests`, 'Change requests of Platform');
  const mine = admin.getByRole('region', { name: 'Mine to approve', exact: true });
  t.equal(await mine.getByRole('row').count(), 2, 'one request to approve (and the header)');
  t.same(await wcagViolationsEverywhere(admin), [], 'axe WCAG 2.2 AA: the requests page');
  t.ok(await fitsWidth(admin), 'no sideways scrolling on the requests page at 390 px');
  await admin.setViewportSize({ width: 1200, height: 900 });
  await mine.getByRole('link').click();
  await admin.getByRole('heading', { level: 1, name: /^Change request: / }).waitFor();
  const diff = admin.getByRole('region', { name: 'Changes', exact: true });
  t.same(
    await diff.getByRole('row').nth(1).getByRole('cell').allTextContents(),
    ['flag search-v2 in production', 'state', 'on', 'off'],
    'the diff in words',
  );
  t.same(await wcagViolationsEverywhere(admin), [], 'axe WCAG 2.2 AA: a request');
  t.ok(await fitsWidth(admin), 'no sideways scrolling on a request at 390 px');
  await admin.setViewportSize({ width: 1200, height: 900 });
  await admin.getByRole('button', { name: 'Approve' }).click();
  await statusSays(admin, 'Approved: the change is applied.');
  t.equal(await inProduction(), false, 'applied: off in production');
  await visit(admin, `#/projects/${kPlatform}/requests`, 'Change requests of Platform');
  const history = admin.getByRole('region', { name: 'History', exact: true });
  t.match(await history.getByRole('row').nth(1).textContent(), /Ed Editor.*production.*1 of 1 approval.*applied/);
  t.match(await admin.getByRole('region', { name: 'Pending', exact: true }).textContent(), 'Nothing waits for approval.');

  // ---- rejected: nothing changes ----
  await visit(editor, `#/projects/${kPlatform}`, 'Platform');
  await editor.getByRole('button', { name: 'Off: search-v2 in production' }).click();
  await statusSays(editor, 'Not applied');
  // The admin's page is the requests page already: it is read again by coming back to it.
  await visit(admin, `#/projects/${kPlatform}`, 'Platform');
  await visit(admin, `#/projects/${kPlatform}/requests`, 'Change requests of Platform');
  await mine.getByRole('link').click();
  await admin.getByLabel('Note with your decision (optional)').fill('not during the sale');
  await admin.getByRole('button', { name: 'Reject' }).click();
  await statusSays(admin, 'Rejected: the change will not be applied.');
  t.match(await admin.locator('#page').textContent(), /Rejected by Al Admin [-\d :]+: not during the sale/);
  t.equal(await inProduction(), false, 'rejected: still off');

  // ---- the flag page's form opens a request too; its author withdraws it ----
  await visit(editor, `#/flags/${flagId}`, 'search-v2');
  await editor.getByRole('group', { name: 'Environment production' }).getByLabel('Traffic percentage').fill('50');
  await editor.getByRole('button', { name: 'Save production' }).click();
  await statusSays(editor, 'Not applied: this change needs approval.');
  await pending.getByRole('link').click();
  await heading.waitFor();
  t.same(await editor.getByRole('region', { name: 'Changes', exact: true }).getByRole('row').nth(1).getByRole('cell').allTextContents(), [
    'flag search-v2 in production',
    'traffic percentage',
    '10%',
    '50%',
  ]);
  await editor.getByRole('button', { name: 'Withdraw' }).click();
  await statusSays(editor, 'Withdrawn: the change will not be applied.');
  await visit(editor, `#/projects/${kPlatform}/requests`, 'Change requests of Platform');
  t.same(
    await editor.getByRole('region', { name: 'History', exact: true }).locator('tbody tr td:nth-child(5)').allTextContents(),
    ['withdrawn', 'rejected', 'applied'],
    'the history, newest first',
  );
  t.match(
    (await call(base, 'GET', `/v1/flags/${flagId}?targetingKey=u-1&env=production`)).json,
    { enabled: false },
    'withdrawn: nothing changed',
  );

  // ---- a token named on the form applies without approval; a request it overtook is stale ----
  await visit(editor, `#/projects/${kPlatform}`, 'Platform');
  await editor.getByRole('button', { name: 'Off: search-v2 in production' }).click();
  await statusSays(editor, 'Not applied');
  await visit(owner, `#/projects/${kPlatform}/settings`, 'Environments and audiences of Platform');
  await rule.getByRole('group', { name: 'Tokens that apply without approval in production' }).getByLabel('demo-platform-write').check();
  await rule.getByRole('button', { name: 'Save approvals in production' }).click();
  await statusSays(owner, 'Approvals in production saved.');
  await rule.getByText('changes by demo-platform-write apply without approval.', { exact: false }).waitFor();
  const byToken = await call(base, 'PATCH', `/api/v1/flags/${flagId}?env=production`, {
    token: secret('demo-platform-write'),
    body: { enabled: true },
  });
  t.equal(byToken.status, 200, `the bypass token's change is applied: ${byToken.text}`);
  t.equal(await inProduction(), true);
  await visit(admin, `#/projects/${kPlatform}`, 'Platform');
  await visit(admin, `#/projects/${kPlatform}/requests`, 'Change requests of Platform');
  await mine.getByRole('link').click();
  await admin.getByText(/^Stale: /).waitFor();
  t.equal(await admin.locator('#page .pill.stale').count(), 1, 'marked stale');
  await admin.getByRole('button', { name: 'Approve' }).click();
  t.match(await statusSays(admin, 'Change request out of date'), /^Change request out of date: /, 'approving it is refused (409)');
  t.equal(await inProduction(), true, 'nothing applied');

  // ---- the author may not approve their own until the rule allows it ----
  const ownRequest = await toggleToRequest(owner, 'On: search-v2 in production');
  t.equal(await owner.getByRole('button', { name: 'Approve' }).count(), 0, 'no Approve for the author');
  await visit(owner, `#/projects/${kPlatform}/settings`, 'Environments and audiences of Platform');
  await rule.getByLabel('The author may approve their own change in production').check();
  await rule.getByRole('button', { name: 'Save approvals in production' }).click();
  await statusSays(owner, 'Approvals in production saved.');
  await owner.goto(ownRequest);
  await owner.getByRole('button', { name: 'Approve' }).click();
  await statusSays(owner, 'Approved: the change is applied.');
  t.equal(await inProduction(), false, 'allowed to approve their own: applied');
  t.not(ownRequest, requestUrl, 'a request of its own');

  // ---- the author edits their request while an approver reads it: approving what was read is refused ----
  const readUrl = await toggleToRequest(editor, 'Off: search-v2 in production');
  await admin.goto(readUrl);
  await admin.getByRole('button', { name: 'Approve' }).waitFor();
  const variants = ['--variants', '{"on":true,"off":false}', '--default-variant', 'on', '--env', 'production'];
  const edited = await cli(dir, ['flag', 'variants', flagId, ...variants, '--as', userIds[kEditor.email]!]);
  t.equal(edited.code, 3, `the editor's next change edits their request: ${edited.stdout}`);
  t.equal(edited.json.changeRequest.version, 2);
  await admin.getByRole('button', { name: 'Approve' }).click();
  t.match(
    await statusSays(admin, 'Change request changed'),
    /^Change request changed: .*not the version you approved \(1\)/,
    'the version the page showed is refused (409)',
  );
  t.equal(await inProduction(), false, 'nothing applied');
  t.match((await cli(dir, ['request', 'show', readUrl.split('/').pop()!])).json, { status: 'pending', approvals: [], version: 2 });
  t.equal((await cli(dir, ['request', 'withdraw', readUrl.split('/').pop()!, '--as', userIds[kEditor.email]!])).code, 0);

  // ---- a token the admin made: its request names both, and the admin withdraws it as its author ----
  const bot = (await cli(dir, ['token', 'create', kPlatform, '--as', userIds[kAdmin.email]!, '--name', 'al-bot', '--permission', 'write']))
    .json;
  const byBot = await call(base, 'PATCH', `/api/v1/flags/${flagId}?env=production`, { token: bot.secret, body: { enabled: true } });
  t.equal(byBot.status, 202, byBot.text);
  await admin.goto(readUrl.replace(/#.*$/, `#/requests/${byBot.json.changeRequest.id}`));
  // The hash changes on the page of the last request, whose heading reads the same: wait for this
  // request's own words (a minute only catches a hang), then read the page.
  await admin.locator('#page', { hasText: 'token al-bot' }).waitFor({ timeout: 60_000 });
  const botPage = (await admin.locator('#page').textContent())!;
  t.match(botPage, 'Opened by token al-bot, created by Al Admin', 'the request names the token and its creator');
  await admin.getByRole('button', { name: 'Withdraw' }).click();
  await statusSays(admin, 'Withdrawn');
  t.equal(await inProduction(), false, 'nothing applied');

  // ---- cleared: a toggle applies at once again ----
  await visit(owner, `#/projects/${kPlatform}/settings`, 'Environments and audiences of Platform');
  await rule.getByRole('button', { name: 'Stop requiring approval in production' }).click();
  await statusSays(owner, 'Changes in production now apply without approval.');
  await visit(editor, `#/projects/${kPlatform}`, 'Platform');
  await editor.getByRole('button', { name: 'Off: search-v2 in production' }).click();
  await statusSays(editor, 'search-v2 turned on in production.');
  t.equal(await inProduction(), true, 'applied at once');
});

// Approvals in the web console as a new user meets them (issue 54, items 6 and 7), in Chromium against
// the real server: a console toggle that lands on the user's earlier command-line request says the
// request was edited, not opened, and names it by its title in the audit log's words; the flag page
// lists a pending scheduled change of the flag; the header tells a person who may approve how many
// requests wait for them (and the author, who may not, nothing), linking to a page that lists them.
// axe-core's WCAG 2.2 AA rules pass on that page and on a flag page listing the requests, at 1,280 and
// 390 px, light and dark.
import type { Page } from 'playwright-core';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { demoConsole, setPassword, signedInPage, visit, wcagViolationsEverywhere } from '../helpers/web-console.js';

const kPlatform = 'prj_DemoPlatform';
const kEditor = { email: 'ed@demo.flagwire.test', name: 'Ed Editor', password: 'editor password 123', role: 'editor' };
const kAdmin = { email: 'al@demo.flagwire.test', name: 'Al Admin', password: 'admin password 123', role: 'admin' };

/** The status line's text once it starts with `start`. */
async function statusSays(page: Page, start: string): Promise<string> {
  const status = page.locator('#status').filter({ hasText: start });
  await status.waitFor();
  return (await status.textContent())!;
}

t.test('edited, not opened; a scheduled change on the flag page; what waits for you in the header', async (t) => {
  const { browser, server, base } = await demoConsole(t);
  const dir = server.dataDir;
  const orgId = (await cli(dir, ['org', 'list'])).json.orgs[0].id as string;
  const userIds: Record<string, string> = {};
  for (const person of [kEditor, kAdmin]) {
    const id = (await cli(dir, ['user', 'create', '--email', person.email, '--name', person.name])).json.id as string;
    await cli(dir, ['org', 'add-member', orgId, id, '--role', person.role]);
    t.equal((await setPassword(dir, id, `${person.password}\n`)).code, 0);
    userIds[person.role] = id;
  }
  const flagId = ((await cli(dir, ['flag', 'list', kPlatform])).json.flags as { id: string; name: string }[]).find(
    (f) => f.name === 'search-v2',
  )!.id;
  t.equal((await cli(dir, ['approvals', 'set', kPlatform, '--env', 'production', '--required', '1', '--roles', 'owner,admin'])).code, 0);

  // ---- the editor asks at the command line; the admin's header counts it ----
  const asked = await cli(dir, ['flag', 'variants', flagId, '--env', 'production', '--variants', '{"a":1,"b":2}', '--as', userIds.editor!]);
  t.equal(asked.code, 3, asked.stdout);
  const request = asked.json.changeRequest;
  const editor = await signedInPage(browser, base, kEditor.email, kEditor.password);

  // ---- a console toggle on the same flag edits that request, and says so ----
  await visit(editor, `#/projects/${kPlatform}`, 'Platform');
  await editor.getByRole('button', { name: 'On: search-v2 in production' }).click();
  t.match(
    await statusSays(editor, 'Not applied'),
    /^Not applied: this change needs approval\. Change request edited: Set the variants of flag search-v2 in production; .+ \(0 of 1 approvals\)\. Open the change request$/,
    'edited, by its title',
  );
  await editor.locator('#status').getByRole('link', { name: 'Open the change request' }).click();
  const heading = editor.getByRole('heading', { level: 1, name: /^Change request: / });
  await heading.waitFor();
  t.match(await heading.textContent(), /^Change request: Set the variants of flag search-v2 in production; /, 'titled');
  t.same(
    await editor.getByRole('region', { name: 'Changes', exact: true }).getByRole('row').nth(1).getByRole('cell').allTextContents(),
    ['flag search-v2 in production', 'state', 'on', 'off'],
    "the toggle's change is part of it",
  );
  t.equal(editor.url().endsWith(`#/requests/${request.id}`), true, 'the request the command line opened');

  // ---- a scheduled change of the flag is listed on its page ----
  const scheduled = await cli(dir, [
    'flag',
    'schedule',
    flagId,
    '--at',
    '+30d',
    '--patch',
    '{"trafficPercentage": 5}',
    '--env',
    'production',
    '--as',
    userIds.editor!,
  ]);
  t.equal(scheduled.code, 3, scheduled.stdout);
  t.equal(scheduled.json.edited, false, 'a request of its own');
  await visit(editor, `#/flags/${flagId}`, 'search-v2');
  const pending = editor.getByRole('region', { name: 'Pending change requests' });
  await pending.waitFor();
  t.equal(await pending.getByRole('listitem').count(), 2, 'both of its requests: the edit and the scheduled change');
  t.equal(
    await pending.getByRole('link', { name: /^Schedule a change of flag search-v2 in production for / }).count(),
    1,
    'the scheduled change, by its title',
  );
  t.same(await wcagViolationsEverywhere(editor), [], 'axe WCAG 2.2 AA: the flag page with its requests');

  // ---- the header: two wait for the admin, none for their author, who may not approve them; its page lists them ----
  const counted = editor.waitForResponse((r) => r.url().endsWith('/console/api/requests/waiting'));
  await visit(editor, '#/', 'Organisations and projects');
  t.strictSame((await (await counted).json()).requests, [], 'nothing waits for the author');
  t.equal(await editor.locator('#waiting').isHidden(), true, 'and the header says nothing');
  const admin = await signedInPage(browser, base, kAdmin.email, kAdmin.password);
  await admin.getByRole('link', { name: '2 change requests wait for you' }).click();
  await admin.getByRole('heading', { level: 1, name: 'Change requests waiting for you' }).waitFor();
  const rows = admin.getByRole('region', { name: 'Change requests waiting for you' }).getByRole('row');
  t.equal(await rows.count(), 3, 'two requests and the header');
  t.match(
    await rows.nth(1).textContent(),
    /^Schedule a change of flag search-v2 in production for .+UTC\s*Platform\s*Ed Editor\s*production\s*0 of 1 approvals/,
  );
  t.same(await wcagViolationsEverywhere(admin), [], 'axe WCAG 2.2 AA: what waits for you');
  await admin.setViewportSize({ width: 1200, height: 900 });

  // ---- approved: one fewer waits, said at once ----
  await rows.nth(1).getByRole('link').first().click();
  await admin.getByRole('button', { name: 'Approve' }).click();
  await admin.locator('#status').filter({ hasText: 'Approved: the change is applied.' }).waitFor();
  await admin.getByRole('link', { name: '1 change request waits for you' }).waitFor();
});

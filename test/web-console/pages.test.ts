// The web console's editing pages in a real browser (headless Chromium driven by playwright-core) as
// the demo owner, each edit made the way a person makes it (fields by their labels, buttons by role and
// name) and its effect checked from outside the browser: the Management and Evaluation APIs, the CLI
// and the audit log (every change audited as user:<id>). Covered: flag rename (a taken name is refused
// with the writer's text and changes nothing), describe, tags, a group flag's flag-wide cohorts, delete
// behind a confirmation (cancel keeps the flag), environment add and rename (a token limited to the old
// name is refused; a taken name is refused), audience create and update (a taken name is refused),
// token rotation (the old secret gets 401, the new one works), a member's role (audited in each of the
// organisation's projects; the writer applies it; demoting the last Owner is refused), the project flag
// list's tag filter, and the audit log's flag and actor filters and paging against the CLI's audit pages.
import type { Browser, Locator } from 'playwright-core';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { consoleCall, demoPassword, demoSecret, ensureChromium, kDemoOwner, launchChromium, signIn } from '../helpers/web-console.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';

const kShop = 'prj_DemoWebShop';
const kPlatform = 'prj_DemoPlatform';

/**
 * The audit table's rows as `actor|action|flag name`: a name holds the name, then its id (as smaller
 * text and as the title); the flag is the one the sentences name (by its id, flg_…). Run in the page
 * (page.evaluate sends its source, so it is self-contained).
 */
function readAuditRows(): string[] {
  return [...document.querySelectorAll('tbody tr')].map((row) => {
    const cells = [...row.querySelectorAll('td')];
    if (cells.length < 4) return cells.map((td) => td.textContent ?? '').join('|');
    const actor = cells[1]!.querySelector('[title]')?.getAttribute('title') ?? cells[1]!.textContent;
    // A flag the page cannot name (deleted) is its id.
    const flag =
      cells[2]!.querySelector('[title^="flg_"]')?.firstChild?.textContent ??
      /\bflg_[A-Za-z0-9_-]+/.exec(cells[2]!.textContent ?? '')?.[0] ??
      '';
    return `${actor}|${cells[3]!.textContent}|${flag}`;
  });
}

t.test("the web console's editing pages in Chromium", async (t) => {
  ensureChromium();
  const server = await startTestServer({ demo: true });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const dir = server.dataDir;
  const shopWrite = demoSecret(server.output(), 'demo-write');
  const shopRead = demoSecret(server.output(), 'demo-read');
  const platformWrite = demoSecret(server.output(), 'demo-platform-write');
  const ownerPassword = demoPassword(server.output());
  const ownerId = (await cli(dir, ['user', 'list'])).json.users.find((u: { email: string }) => u.email === kDemoOwner).id as string;
  const actor = `user:${ownerId}`;

  const browser: Browser = await launchChromium(t);
  const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  // Generous: a loaded 2-core machine; every wait is on a visible outcome.
  page.setDefaultTimeout(60_000);
  await page.goto(`${base}/console`);
  await page.getByLabel('Email').fill(kDemoOwner);
  await page.getByLabel('Password').fill(ownerPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Organisations and projects' }).waitFor();

  const apiFlag = (id: string, token = shopWrite) => call(base, 'GET', `/api/v1/flags/${id}`, { token });
  const flagIdOf = async (name: string, token: string) =>
    ((await call(base, 'GET', `/api/v1/flags?name=${name}`, { token })).json.flags[0] as { id: string }).id;
  const auditLog = async (projectId: string) =>
    (await cli(dir, ['audit', projectId, '--limit', '200'])).json.entries as {
      seq: number;
      actor: string;
      action: string;
      flagId: string | null;
      env: string | null;
      changes: Record<string, { before: unknown; after: unknown }>;
    }[];
  /** The project's newest audit entry: the change just made, by the signed-in owner. */
  const expectAudited = async (projectId: string, action: string, changes: Record<string, unknown>) => {
    const [entry] = await auditLog(projectId);
    t.match(entry, { actor, action, changes }, `${action} is audited as ${actor}`);
  };
  const newestSeq = async (projectId: string) => (await auditLog(projectId))[0]!.seq;
  const status = page.locator('#status');
  /** Adds items to a list editor as a person does: "Add <item>", then the new box, one per value. */
  const addItems = async (scope: Locator, item: string, values: string[], after = 0) => {
    for (const [i, value] of values.entries()) {
      await scope.getByRole('button', { name: `Add ${item.toLowerCase()}`, exact: true }).click();
      await scope.getByLabel(`${item} ${after + i + 1}`, { exact: true }).fill(value);
    }
  };

  // ---- one flag: rename, describe, tags ----
  const bannerId = await flagIdOf('holiday-banner', shopWrite);
  await page.goto(`${base}/console#/flags/${bannerId}`);
  await page.getByRole('heading', { name: 'holiday-banner', level: 1 }).waitFor();
  await page.getByLabel('New name').fill('seasonal-banner');
  await page.getByRole('button', { name: 'Save name' }).click();
  await page.getByRole('heading', { name: 'seasonal-banner', level: 1 }).waitFor();
  await page.getByText('Name saved.').waitFor();
  t.equal((await apiFlag(bannerId)).json.name, 'seasonal-banner', 'the Management API has the new name');
  await expectAudited(kShop, 'flag.rename', { name: { before: 'holiday-banner', after: 'seasonal-banner' } });

  const beforeRefusal = await newestSeq(kShop);
  await page.getByLabel('New name').fill('dark-mode');
  await page.getByRole('button', { name: 'Save name' }).click();
  await page.getByText('Invalid request: a flag named "dark-mode" already exists in this project').waitFor();
  t.equal(await status.getAttribute('class'), 'status error', 'the refusal is shown as an error');
  t.equal((await apiFlag(bannerId)).json.name, 'seasonal-banner', 'a refused rename changes nothing');
  t.equal(await newestSeq(kShop), beforeRefusal, 'and writes no audit entry');
  t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'seasonal-banner');

  await page.getByLabel('Description text').fill('Shown in December');
  await page.getByRole('button', { name: 'Save description' }).click();
  await page.getByText('Description saved.').waitFor();
  t.equal((await apiFlag(bannerId)).json.description, 'Shown in December');
  await expectAudited(kShop, 'flag.describe', { description: { before: '', after: 'Shown in December' } });

  await addItems(page.locator('main'), 'Tag', ['seasonal', 'marketing']);
  await page.getByRole('button', { name: 'Save tags' }).click();
  await page.getByText('Tags saved.').waitFor();
  t.same((await apiFlag(bannerId)).json.tags, ['seasonal', 'marketing']);
  await expectAudited(kShop, 'flag.tags', { tags: { before: [], after: ['seasonal', 'marketing'] } });

  // ---- the project's flag list: the tag filter; a flag created and deleted behind a confirmation ----
  await page.goto(`${base}/console#/projects/${kShop}`);
  await page.getByRole('heading', { name: 'Web shop', level: 1 }).waitFor();
  const flagCells = () => page.locator('tbody tr td:first-child a').allTextContents();
  t.same((await flagCells()).sort(), ['dark-mode', 'new-checkout', 'seasonal-banner'], 'every flag before filtering');
  await page.getByLabel(/^Tag\b/).selectOption('marketing');
  t.same(await flagCells(), ['seasonal-banner'], 'the tag filter keeps only the flags with that tag');
  const tagged = (await call(base, 'GET', '/api/v1/flags', { token: shopRead })).json.flags.filter((f: { tags: string[] }) =>
    f.tags.includes('marketing'),
  );
  t.same(
    tagged.map((f: { name: string }) => f.name),
    ['seasonal-banner'],
    'as the Management API lists them',
  );
  await page.getByLabel(/^Tag\b/).selectOption('');
  t.equal(await page.locator('tbody tr').count(), 3, '"Any tag" shows every flag again');

  await page.getByLabel('Name', { exact: true }).fill('doomed-flag');
  await page.getByRole('button', { name: 'Create flag' }).click();
  await page.getByRole('heading', { name: 'doomed-flag', level: 1 }).waitFor();
  const doomedId = page.url().split('#/flags/')[1]!;
  t.equal((await call(base, 'GET', `/v1/flags/${doomedId}`)).status, 200);
  t.equal(await page.getByRole('button', { name: 'Yes, delete' }).count(), 0, 'no delete button before asking');
  await page.getByRole('button', { name: 'Delete flag…' }).click();
  await page.getByText('Delete flag doomed-flag? Applications asking for it get 404 from now on. This cannot be undone.').waitFor();
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).waitFor({ state: 'hidden' });
  t.equal((await call(base, 'GET', `/v1/flags/${doomedId}`)).status, 200, 'cancelling keeps the flag');
  t.equal((await apiFlag(doomedId)).status, 200);
  await page.getByRole('button', { name: 'Delete flag…' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await page.getByText('Flag doomed-flag deleted.').waitFor();
  await page.getByRole('heading', { name: 'Web shop', level: 1 }).waitFor();
  t.equal((await call(base, 'GET', `/v1/flags/${doomedId}`)).status, 404, 'confirming deletes it: the Evaluation API says 404');
  t.equal((await apiFlag(doomedId)).status, 404, 'and the Management API');
  await expectAudited(kShop, 'flag.delete', { flag: { before: { name: 'doomed-flag' }, after: null } });

  // ---- a group flag's flag-wide cohorts ----
  const searchId = await flagIdOf('search-v2', platformWrite);
  await page.goto(`${base}/console#/flags/${searchId}`);
  await page.getByRole('heading', { name: 'search-v2', level: 1 }).waitFor();
  await addItems(page.locator('main'), 'Flag-wide cohort', ['beta-group', 'ops']);
  await page.getByRole('button', { name: 'Save flag-wide cohorts' }).click();
  await page.getByText('Flag-wide cohorts saved.').waitFor();
  const grouped = (await apiFlag(searchId, platformWrite)).json;
  t.same(grouped.environments.staging.cohorts, ['beta-group', 'ops'], 'staging (no list of its own) takes the flag-wide cohorts');
  t.same(grouped.environments.production.cohorts, ['qa-team'], 'production keeps its own');
  await expectAudited(kPlatform, 'flag.cohorts', { cohorts: { before: [], after: ['beta-group', 'ops'] } });

  // ---- environments: add, rename (a token limited to the old name stops working), a refused rename ----
  await page.goto(`${base}/console#/projects/${kPlatform}/tokens`);
  await page.getByRole('heading', { name: 'Tokens of Platform' }).waitFor();
  await page.getByLabel('Token name').fill('staging-only');
  await page.getByLabel('staging', { exact: true }).check();
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.getByText('Token staging-only created.').waitFor();
  const stagingOnly = (await page.locator('#token-secret').textContent())!;
  t.equal(
    (await call(base, 'GET', `/api/v1/flags/${searchId}?env=staging`, { token: stagingOnly })).status,
    200,
    'the limited token reads staging',
  );

  await page.goto(`${base}/console#/projects/${kPlatform}/settings`);
  await page.getByRole('heading', { name: 'Environments and audiences of Platform' }).waitFor();
  await page.getByLabel('New environment').fill('qa');
  await page.getByRole('button', { name: 'Add environment' }).click();
  await page.getByText('Environment qa added.').waitFor();
  t.same(
    (await cli(dir, ['project', 'show', kPlatform])).json.environments,
    ['staging', 'production', 'qa'],
    'project show lists the new environment',
  );
  await expectAudited(kPlatform, 'env.add', { environment: { before: null, after: 'qa' } });

  t.ok(
    await page
      .getByText('Tokens limited to the old name are not updated: their requests for that environment are refused until they are replaced.')
      .isVisible(),
    'the rename form warns about tokens limited to the old name',
  );
  await page.getByLabel(/^Environment\b/).selectOption('staging');
  await page.getByLabel('New name').fill('preprod');
  await page.getByRole('button', { name: 'Rename environment' }).click();
  await page.getByText('Environment staging renamed to preprod.').waitFor();
  t.same((await cli(dir, ['project', 'show', kPlatform])).json.environments, ['preprod', 'production', 'qa']);
  t.match(
    (await cli(dir, ['flag', 'show', searchId])).json.environments,
    { preprod: { enabled: true, trafficPercentage: 100 } },
    "the flag's staging state moved to preprod",
  );
  await expectAudited(kPlatform, 'env.rename', { environment: { before: 'staging', after: 'preprod' } });
  const limited = await call(base, 'GET', `/api/v1/flags/${searchId}?env=preprod`, { token: stagingOnly });
  t.equal(limited.status, 403, 'as warned, the token limited to the old name is refused the renamed environment');
  t.equal(limited.json.error, 'Environment not permitted');

  const beforeEnvRefusal = await newestSeq(kPlatform);
  await page.getByLabel(/^Environment\b/).selectOption('production');
  await page.getByLabel('New name').fill('qa');
  await page.getByRole('button', { name: 'Rename environment' }).click();
  await page.getByText('Invalid request: environment "qa" already exists').waitFor();
  t.same(
    (await cli(dir, ['project', 'show', kPlatform])).json.environments,
    ['preprod', 'production', 'qa'],
    'a refused rename changes nothing',
  );
  t.equal(await newestSeq(kPlatform), beforeEnvRefusal, 'and writes no audit entry');

  // ---- audiences: create, update, a refused update ----
  // The refused rename is still in its form, unsaved: leaving asks first.
  await page.goto(`${base}/console#/projects/${kShop}/settings`);
  await page.getByRole('alertdialog', { name: 'Leave this page?' }).getByRole('button', { name: 'Leave page' }).click();
  // A single-environment project's settings list no environments: its audiences only.
  await page.getByRole('heading', { name: 'Audiences of Web shop', exact: true }).waitFor();
  const fresh = page.getByRole('group', { name: 'New audience' });
  await fresh.getByLabel('Audience name').fill('EU customers');
  await fresh.getByRole('button', { name: 'Add rule', exact: true }).click();
  await fresh.getByLabel('Rule 1 attribute').fill('country');
  await addItems(fresh, 'Rule 1 value', ['de', 'fr']);
  await fresh.getByRole('button', { name: 'Create audience' }).click();
  await page.getByText('Audience EU customers created.').waitFor();
  const audiences = async () =>
    (await cli(dir, ['audience', 'list', kShop])).json.audiences as { id: string; name: string; rules: unknown }[];
  const created = (await audiences()).find((a) => a.name === 'EU customers');
  t.same(created?.rules, [{ attribute: 'country', values: ['de', 'fr'] }], 'audience list has the new audience and its rule');
  await expectAudited(kShop, 'audience.create', { audience: { before: null, after: { name: 'EU customers' } } });

  const eu = page.getByRole('group', { name: 'Audience EU customers' });
  await eu.getByLabel('Audience name').fill('EU shoppers');
  await addItems(eu, 'Rule 1 value', ['nl'], 2);
  await eu.getByRole('button', { name: 'Add rule', exact: true }).click();
  await eu.getByLabel('Rule 2 attribute').fill('plan');
  await addItems(eu, 'Rule 2 value', ['pro']);
  await eu.getByRole('button', { name: 'Save audience' }).click();
  await page.getByText('Audience EU shoppers saved.').waitFor();
  t.match(
    (await audiences()).find((a) => a.id === created?.id),
    {
      name: 'EU shoppers',
      rules: [
        { attribute: 'country', values: ['de', 'fr', 'nl'] },
        { attribute: 'plan', values: ['pro'] },
      ],
    },
    'the update is stored',
  );
  await expectAudited(kShop, 'audience.update', { audience: { before: { name: 'EU customers' }, after: { name: 'EU shoppers' } } });

  const beforeAudienceRefusal = [await newestSeq(kShop), await audiences()];
  const shoppers = page.getByRole('group', { name: 'Audience EU shoppers' });
  await shoppers.getByLabel('Audience name').fill('beta testers');
  await shoppers.getByRole('button', { name: 'Save audience' }).click();
  await page.getByText(/^Invalid request: an audience named "Beta testers" already exists in this project \(aud_\w+\)$/).waitFor();
  t.same([await newestSeq(kShop), await audiences()], beforeAudienceRefusal, 'a refused update changes nothing and writes no audit entry');

  // ---- tokens: rotation ----
  // The refused name is still in its form, unsaved: leaving asks first.
  await page.goto(`${base}/console#/projects/${kShop}/tokens`);
  await page.getByRole('alertdialog', { name: 'Leave this page?' }).getByRole('button', { name: 'Leave page' }).click();
  await page.getByRole('heading', { name: 'Tokens of Web shop' }).waitFor();
  const oldReadId = (await call(base, 'GET', '/api/v1/token', { token: shopRead })).json.id as string;
  await page.getByRole('button', { name: 'Rotate demo-read' }).click();
  await page.getByRole('alertdialog', { name: 'Rotate token demo-read?' }).getByRole('button', { name: 'Rotate' }).click();
  await page.getByText('Token demo-read rotated: the old secret no longer works.').waitFor();
  const rotated = (await page.locator('#token-secret').textContent())!;
  t.not(rotated, shopRead);
  t.equal((await call(base, 'GET', '/api/v1/token', { token: shopRead })).status, 401, 'the old secret gets 401');
  const described = await call(base, 'GET', '/api/v1/token', { token: rotated });
  t.equal(described.status, 200, 'the new secret works');
  t.equal(described.json.name, 'demo-read');
  t.equal((await call(base, 'GET', `/api/v1/flags/${bannerId}`, { token: rotated })).json.name, 'seasonal-banner');
  const tokens = (await cli(dir, ['token', 'list', kShop])).json.tokens as { id: string; name: string; revokedAt: number | null }[];
  t.type(tokens.find((x) => x.id === oldReadId)?.revokedAt, 'number', 'token list: the old token is revoked');
  t.equal(tokens.find((x) => x.id === described.json.id)?.revokedAt, null, 'and its replacement active');
  await expectAudited(kShop, 'token.rotate', {
    token: { before: { id: oldReadId, name: 'demo-read' }, after: { id: described.json.id, name: 'demo-read' } },
  });

  // ---- members: a role change the writer applies; demoting the last Owner is refused ----
  const orgId = (await cli(dir, ['org', 'list'])).json.orgs[0].id as string;
  const member = (await cli(dir, ['user', 'create', '--email', 'member@demo.flagwire.test', '--name', 'Demo Member'])).json.id as string;
  t.equal((await cli(dir, ['org', 'add-member', orgId, member, '--role', 'viewer'])).code, 0);
  const checkoutId = await flagIdOf('new-checkout', shopWrite);
  const asMember = ['flag', 'describe', checkoutId, 'Described by a member', '--as', member];
  const refused = await cli(dir, asMember);
  t.equal(refused.code, 1, 'a viewer may not describe a flag');
  t.match(refused.json.detail, /is viewer/);
  await page.goto(`${base}/console#/orgs/${orgId}/members`);
  await page.getByRole('heading', { name: 'Members of Demo Org' }).waitFor();
  await page.getByLabel('User id').fill(member);
  await page.getByLabel('Role').selectOption('editor');
  await page.getByRole('button', { name: 'Set role' }).click();
  await page.getByText(`User ${member} is now editor.`).waitFor();
  t.ok(await page.getByRole('row', { name: /Demo Member .* editor/ }).isVisible(), 'the members table shows the new role');
  const session = await signIn(base, kDemoOwner, ownerPassword);
  const roles = async () =>
    Object.fromEntries(
      ((await consoleCall(base, session, 'GET', `orgs/${orgId}/members`)).json.members as { userId: string; role: string }[]).map((m) => [
        m.userId,
        m.role,
      ]),
    );
  t.same(await roles(), { [ownerId]: 'owner', [member]: 'editor' }, 'the members listing has the new role');
  for (const projectId of [kShop, 'prj_DemoPlatform'])
    await expectAudited(projectId, 'member.role', { [`role of user:${member}`]: { before: 'viewer', after: 'editor' } });
  // The audit log names the member whose role changed (the key holds their id), the id after the name.
  t.same(
    (await consoleCall(base, session, 'GET', `projects/${kShop}/audit`)).json.people,
    [{ ref: `user:${member}`, name: 'Demo Member' }],
    'the audit page is given the name of the user its change keys name',
  );
  await page.goto(`${base}/console#/projects/${kShop}/audit`);
  const roleRow = page.getByRole('row').filter({ hasText: 'member.role' });
  t.equal(await roleRow.locator('.change').textContent(), `Changed the role of Demo Member user:${member} from viewer to editor.`);
  t.equal(await roleRow.locator('.change [title]').getAttribute('title'), `user:${member}`, 'the id as the tooltip');
  t.equal((await cli(dir, asMember)).code, 0, 'the writer applies it: the editor may now describe a flag');
  t.match((await auditLog(kShop))[0], { actor: `user:${member}`, action: 'flag.describe' });

  await page.goto(`${base}/console#/orgs/${orgId}/members`);
  await page.getByRole('heading', { name: 'Members of Demo Org' }).waitFor();
  await page.getByLabel('User id').fill(ownerId);
  await page.getByLabel('Role').selectOption('viewer');
  await page.getByRole('button', { name: 'Set role' }).click();
  await page.getByText('Invalid request: An organisation keeps at least one Owner: make someone else Owner first.').waitFor();
  t.same(await roles(), { [ownerId]: 'owner', [member]: 'editor' }, 'the last Owner stays Owner');

  // ---- the audit log: paging, and the flag and actor filters, against the CLI's pages ----
  const writerId = (await call(base, 'GET', '/api/v1/token', { token: shopWrite })).json.id as string;
  for (let p = 51; p <= 80; p++) {
    t.equal((await call(base, 'PATCH', `/api/v1/flags/${checkoutId}`, { token: shopWrite, body: { trafficPercentage: p } })).status, 200);
  }
  const names = new Map<string, string>([
    [bannerId, 'seasonal-banner'],
    [checkoutId, 'new-checkout'],
    [await flagIdOf('dark-mode', shopWrite), 'dark-mode'],
  ]);
  // A flag made or deleted is named as the entry recorded it; any other by its name now (a deleted one: its id).
  const row = (e: { actor: string; action: string; flagId: string | null; changes: Record<string, { before: any; after: any }> }) => {
    const recorded = (e.changes.flag?.after ?? e.changes.flag?.before)?.name as string | undefined;
    return `${e.actor}|${e.action}|${e.flagId === null ? '' : (recorded ?? names.get(e.flagId) ?? e.flagId)}`;
  };
  const all = await auditLog(kShop);
  const firstPage = await cli(dir, ['audit', kShop, '--limit', '25']);
  const secondPage = await cli(dir, ['audit', kShop, '--limit', '25', '--before', String(firstPage.json.nextBefore)]);
  t.ok(all.length > 25 && all.length <= 50, `the shop's log (${all.length} entries) takes two pages`);
  /**
   * Waits for the table to show `expected` (the page re-renders after a hash change), then compares
   * what it shows. Polled from here rather than with waitForFunction: a poll that throws (the page
   * between two renders) is retried, not taken as the answer, and the table must hold still for two
   * reads in a row, so a later render replacing it is seen.
   */
  const expectRows = async (expected: string[], what: string) => {
    const want = JSON.stringify(expected);
    const read = () => page.evaluate(readAuditRows).catch((err: Error) => [`(unreadable: ${err.message})`]);
    let shown = await read();
    for (let tries = 0; tries < 600 && JSON.stringify(shown) !== want; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      shown = await read();
    }
    await new Promise((r) => setTimeout(r, 100));
    t.same(await read(), expected, what);
  };
  const older = page.getByRole('button', { name: 'Older entries' });

  // The refused role is still chosen in its form, unsaved: leaving asks first.
  await page.goto(`${base}/console#/projects/${kShop}/audit`);
  await page.getByRole('alertdialog', { name: 'Leave this page?' }).getByRole('button', { name: 'Leave page' }).click();
  await page.getByRole('heading', { name: 'Audit log of Web shop' }).waitFor();
  await expectRows(firstPage.json.entries.map(row), "the first page is the CLI's first page");
  await older.click();
  await page.getByRole('link', { name: 'Newest entries' }).waitFor();
  await expectRows(secondPage.json.entries.map(row), '"Older entries" shows the CLI\'s second page');
  t.equal(await older.count(), 0, 'and no older page after the last');

  await page.getByRole('link', { name: 'Newest entries' }).click();
  await page.getByRole('button', { name: 'Older entries' }).waitFor();
  await page.getByLabel(/^Flag\b/).selectOption({ label: 'seasonal-banner' });
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/flag=/);
  const bannerRows = all.filter((e) => e.flagId === bannerId).map(row);
  t.same(
    bannerRows.map((r) => r.split('|')[1]),
    ['flag.tags', 'flag.describe', 'flag.rename', 'flag.create'],
    "the CLI's log has the banner's four entries",
  );
  await expectRows(bannerRows, "the flag filter keeps only that flag's entries");
  t.equal(await older.count(), 0);

  await page.getByLabel(/^Flag\b/).selectOption('');
  await page.getByLabel('Actor').selectOption(`token:${writerId}`);
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/actor=token/);
  const tokenRows = all.filter((e) => e.actor === `token:${writerId}`).map(row);
  t.equal(tokenRows.length, 30);
  await expectRows(tokenRows.slice(0, 25), "the actor filter keeps only that actor's entries, 25 a page");
  await older.click();
  await page.waitForURL(/before=/);
  await expectRows(tokenRows.slice(25), 'and pages on with the filter kept');
  t.match(page.url(), /actor=token%3A/);

  await page.getByLabel('Actor').selectOption(actor);
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/actor=user%3A(?!.*before=)/);
  const ownerRows = all.filter((e) => e.actor === actor).map(row);
  t.ok(ownerRows.length >= 8 && ownerRows.length <= 25, `the owner's ${ownerRows.length} changes fit one page`);
  await expectRows(ownerRows, 'filtered by the signed-in owner: every change made in these pages');
});

// The SCIM page of the web console (docs/scim.md: Enabling it), in Chromium against a real server: an
// Owner turns SCIM on from the page and is shown its secret once; the identity provider (this test, over
// /scim/v2 with that secret) provisions a person and a group, which the page lists with the last sync;
// the Owner maps the group to a role (the person's role follows) and unmaps it, rotates the secret (the
// old one is refused from then on) and turns SCIM off, each asked in a dialog first. An Editor gets no
// link and the API refuses them. axe finds no WCAG 2.2 AA violation at 1,280 and 390 px, light and dark.
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import {
  consoleCall,
  demoConsole,
  demoEditorPage,
  demoPassword,
  kDemoEditor,
  kDemoEditorPassword,
  ensureChromium,
  signIn,
  wcagViolationsEverywhere,
} from '../helpers/web-console.js';

const kUser = 'urn:ietf:params:scim:schemas:core:2.0:User';
const kGroup = 'urn:ietf:params:scim:schemas:core:2.0:Group';

t.test('an Owner turns SCIM on, maps a group, rotates the secret and turns it off from the SCIM page', async (t) => {
  ensureChromium();
  const { browser, server, base, ownerPage } = await demoConsole(t);
  const orgId = (await cli(server.dataDir, ['org', 'list'])).json.orgs[0].id as string;
  const scim = (secret: string, method: string, path: string, body?: unknown) =>
    call(base, method, `/scim/v2${path}`, { token: secret, body, headers: { 'content-type': 'application/scim+json' } });
  const heading = 'SCIM provisioning of Demo Org';

  const page = await ownerPage();
  await page.getByRole('link', { name: 'SCIM provisioning' }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await page.getByText('SCIM is off.', { exact: false }).first().waitFor();
  await page.getByText('Nothing provisioned yet.').waitFor();
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA at 1,280 and 390 px, light and dark: SCIM off');
  await page.setViewportSize({ width: 1280, height: 800 });

  // ---- on: the secret shown once, and it opens /scim/v2 ----
  await page.getByRole('button', { name: 'Turn on SCIM' }).click();
  await page
    .getByRole('region', { name: 'New SCIM secret' })
    .getByText(/shown only this once/)
    .waitFor();
  await page.getByText('SCIM is on.', { exact: true }).first().waitFor();
  const secret = (await page.locator('#scim-secret').textContent())!;
  t.match(secret, /^fws_[A-Za-z0-9]+$/);
  await page.getByText(`${base}/scim/v2`).waitFor();

  // ---- the identity provider provisions a person and a group; the page lists them ----
  const alice = await scim(secret, 'POST', '/Users', { schemas: [kUser], userName: 'alice@demo.test', displayName: 'Alice Archer' });
  t.equal(alice.status, 201, alice.text);
  const group = await scim(secret, 'POST', '/Groups', { schemas: [kGroup], displayName: 'Engineers', members: [{ value: alice.json.id }] });
  t.equal(group.status, 201, group.text);
  await page.reload();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  t.equal(await page.getByText(secret).count(), 0, 'the secret is not shown again');
  await page.getByText(/^Last sync: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC .* 1 user, 1 group\.$/).waitFor();
  const people = page.getByRole('region', { name: 'Provisioned people' });
  const aliceRow = people.getByRole('row', { name: /alice@demo\.test/ });
  await aliceRow.getByRole('cell', { name: 'Alice Archer' }).waitFor();
  await aliceRow.getByRole('cell', { name: 'active' }).waitFor();
  await aliceRow.getByRole('cell', { name: 'viewer' }).waitFor();
  const groups = page.getByRole('region', { name: 'Provisioned groups' });
  await groups
    .getByRole('row', { name: /Engineers/ })
    .getByRole('cell', { name: 'none' })
    .waitFor();

  // ---- a group mapped to a role: its member holds it; unmapped, they are a Viewer again ----
  await page.getByLabel('Group name').fill('engineers');
  await page.getByRole('combobox', { name: /^Role/ }).selectOption('editor');
  await page.getByRole('button', { name: 'Map group' }).click();
  await page.getByText('Members of group engineers hold the editor role now.').waitFor();
  await aliceRow.getByRole('cell', { name: 'editor' }).waitFor();
  await groups
    .getByRole('row', { name: /Engineers/ })
    .getByRole('cell', { name: 'editor' })
    .waitFor();
  await page.getByRole('region', { name: 'Mapped groups' }).getByRole('cell', { name: 'engineers', exact: true }).waitFor();
  const owner = await signIn(base, 'owner@demo.flagwire.test', demoPassword(server.output()));
  const role = async () =>
    ((await consoleCall(base, owner, 'GET', `orgs/${orgId}/members`)).json.members as { userId: string; role: string }[]).find(
      (m) => m.userId === alice.json.id,
    )?.role;
  t.equal(await role(), 'editor', 'the membership holds it');
  const view = (await consoleCall(base, owner, 'GET', `orgs/${orgId}/scim`)).json;
  t.match(view, {
    orgName: 'Demo Org',
    enabled: true,
    groupRoles: { engineers: 'editor' },
    users: [{ id: alice.json.id, userName: 'alice@demo.test', displayName: 'Alice Archer', active: true, role: 'editor' }],
    userCount: 1,
    groups: [{ id: group.json.id, displayName: 'Engineers', members: 1, role: 'editor' }],
    groupCount: 1,
    shown: 200,
  });
  t.equal(view.lastSync, Math.max(view.users[0].lastModified, view.groups[0].lastModified), "the last sync is the latest change's time");
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA at 1,280 and 390 px, light and dark: mappings and lists');
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByRole('button', { name: 'Unmap group engineers' }).click();
  await page.getByText('Group engineers gives no role now.').waitFor();
  await page.getByText('No group is mapped to a role yet', { exact: false }).waitFor();
  t.equal(await role(), 'viewer', 'unmapped: a Viewer');

  // ---- rotate: asked first; Cancel changes nothing; Rotate shows a new secret and the old one stops ----
  const rotateDialog = page.getByRole('alertdialog', { name: 'Rotate the SCIM secret?' });
  await page.getByRole('button', { name: 'Rotate secret' }).click();
  await rotateDialog.getByRole('button', { name: 'Cancel' }).click();
  await rotateDialog.waitFor({ state: 'detached' });
  t.equal((await scim(secret, 'GET', '/Users')).status, 200, 'cancelled: the secret still works');
  await page.getByRole('button', { name: 'Rotate secret' }).click();
  await rotateDialog.getByRole('button', { name: 'Rotate' }).click();
  await page.getByText('SCIM secret rotated: the old one no longer works.').waitFor();
  const rotated = (await page.locator('#scim-secret').textContent())!;
  t.match(rotated, /^fws_/);
  t.not(rotated, secret, 'a new secret');
  t.equal((await scim(secret, 'GET', '/Users')).status, 401, 'the old secret is refused');
  t.equal((await scim(rotated, 'GET', '/Users')).status, 200, 'the new one works');

  // ---- an Editor: no link, and the page and its API refuse them ----
  const editorPage = await demoEditorPage(browser, server, orgId);
  t.equal(await editorPage.getByRole('link', { name: 'SCIM provisioning' }).count(), 0, 'an Editor gets no link');
  await editorPage.evaluate((hash) => {
    location.hash = hash;
  }, `#/orgs/${orgId}/scim`);
  await editorPage.getByText(/Only an Owner of organisation .* sees and changes its SCIM settings/).waitFor();
  const asEditor = await signIn(base, kDemoEditor, kDemoEditorPassword);
  for (const [method, path] of [
    ['GET', 'scim'],
    ['POST', 'scim/secret'],
    ['DELETE', 'scim'],
  ] as const) {
    const refused = await consoleCall(base, asEditor, method, `orgs/${orgId}/${path}`);
    t.equal(refused.status, 403, `${method} ${path} as an Editor: ${JSON.stringify(refused.json)}`);
  }
  t.equal((await scim(rotated, 'GET', '/Users')).status, 200, "the Editor's tries changed nothing");

  // ---- off: asked first; the secret stops, what was provisioned stays listed ----
  await page.getByRole('button', { name: 'Turn off SCIM' }).click();
  await page.getByRole('alertdialog', { name: 'Turn off SCIM?' }).getByRole('button', { name: 'Turn off' }).click();
  await page.getByText('SCIM is off: its secret no longer works.').waitFor();
  await page.getByRole('button', { name: 'Turn on SCIM' }).waitFor();
  t.equal((await scim(rotated, 'GET', '/Users')).status, 401, 'off: the secret is refused');
  await people.getByRole('row', { name: /alice@demo\.test/ }).waitFor();
});

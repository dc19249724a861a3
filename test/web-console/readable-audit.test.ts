// Issue 47, items 4 and 5, in Chromium against the real server: the audit log reads as sentences (one
// per changed field, names not ids, a long value folded), its filters are in the address and back and
// forward go through them; the flag list names a state's audience; a traffic percentage says what it
// takes as its accessible description; a single-environment project lists no environments (settings,
// tokens) where a multi-environment one does. axe's WCAG 2.2 AA rules pass on these pages at 1,280 and
// 390 px, light and dark.
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { demoConsole, visit, wcagViolationsEverywhere } from '../helpers/web-console.js';

const kShop = 'prj_DemoWebShop';
const kPlatform = 'prj_DemoPlatform';

t.test('the audit log as sentences, its filters in the address; the small things', async (t) => {
  const { server, base, secret, ownerPage } = await demoConsole(t);
  const shopWrite = secret('demo-write');
  const audience = (await cli(server.dataDir, ['audience', 'list', kShop])).json.audiences[0] as { id: string; name: string };
  const created = await call(base, 'POST', '/api/v1/flags', { token: shopWrite, body: { name: 'sentenced', enabled: false } });
  t.equal(created.status, 201, created.text);
  const flagId = created.json.id as string;
  const rule = { if: [{ in: [{ var: 'email' }, ['someone@example.test', 'someone.else@example.test']] }, true, false] };
  const patched = await call(base, 'PATCH', `/api/v1/flags/${flagId}`, {
    token: shopWrite,
    body: { enabled: true, trafficPercentage: 30, audienceId: audience.id },
  });
  t.equal(patched.status, 200, patched.text);
  const page = await ownerPage();

  // ---- the flag list names the audience ----
  await visit(page, `#/projects/${kShop}`, 'Web shop');
  const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'sentenced', exact: true }) });
  t.match(await row.textContent(), `30% · audience ${audience.name}`, "the state's audience by its name");
  t.notMatch(await row.textContent(), audience.id, 'not its id');

  // ---- a percentage says what it takes ----
  await visit(page, `#/flags/${flagId}`, 'sentenced');
  const percentage = page.getByLabel('Traffic percentage', { exact: true });
  const hintId = (await percentage.getAttribute('aria-describedby'))!;
  t.equal(await page.locator(`[id="${hintId}"]`).textContent(), 'A whole number, 0 to 100', 'said beside the field');
  t.ok(await page.locator(`[id="${hintId}"]`).isVisible());

  // ---- the audit log: one sentence per field, by names; the flag filter, then the actor's, in the address ----
  await visit(page, `#/projects/${kShop}/audit`, 'Audit log of Web shop');
  const entry = page.getByRole('row').filter({ hasText: 'flag.patch' }).first();
  t.same(await entry.locator('.change').allTextContents(), [
    `Changed the state of flag sentenced ${flagId} from off to on.`,
    `Changed the traffic percentage of flag sentenced ${flagId} from 0% to 30%.`,
    `Changed the audience of flag sentenced ${flagId} from everyone (no audience) to ${audience.name} ${audience.id}.`,
  ]);
  t.equal(await entry.locator(`[title="${audience.id}"]`).count(), 1, "the audience's id as the tooltip");
  t.match(await entry.locator('td').nth(1).textContent(), 'demo-write', 'the actor by name');

  t.equal(
    (
      await call(base, 'PATCH', `/api/v1/flags/${flagId}`, {
        token: shopWrite,
        body: { variants: { on: true, off: false }, defaultVariant: 'off', targeting: rule },
      })
    ).status,
    200,
  );
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Audit log of Web shop' }).waitFor();
  const ruled = page.getByRole('row').filter({ hasText: 'Set the rule' }).first();
  const folded = ruled.locator('details');
  t.equal(await folded.count(), 1, 'the long rule is folded');
  t.notOk(await folded.locator('div').isVisible(), 'closed');
  await folded.locator('summary').click();
  t.match(
    await folded.locator('div').textContent(),
    '{if: [{in: [{var: email}, someone@example.test, someone.else@example.test]}, true, false]}',
  );
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA at 1,280 and 390 px, light and dark: the audit log');
  await page.setViewportSize({ width: 1280, height: 800 });

  const filter = page.getByRole('search', { name: 'Filter the audit log' });
  // The address changes at the click; the page draws the filtered log once its answer is in, replacing
  // the form. Each step waits for that, so the next choice is made in the page the filter drew.
  const filtered = async (address: RegExp) => {
    const drawn = await filter.getByLabel('Flag').elementHandle();
    await filter.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(address);
    await page.waitForFunction((el) => !el?.isConnected, drawn);
  };
  await filter.getByLabel('Flag').selectOption({ label: 'sentenced' });
  await filtered(new RegExp(`#/projects/${kShop}/audit\\?flag=${flagId}$`));
  await filter.getByLabel('Actor').selectOption({ label: 'token demo-write' });
  await filtered(/&actor=token%3A/);
  const rows = page.locator('main tbody tr');
  await rows.first().waitFor();
  const actions = async () => page.locator('main tbody tr td:nth-child(4)').allTextContents();
  t.same(await actions(), ['flag.patch', 'flag.patch', 'flag.create'], "the flag's entries by that token");

  // Back: the flag filter alone; back again: every entry; forward: the filters again.
  await page.goBack();
  await page.waitForURL(new RegExp(`audit\\?flag=${flagId}$`));
  await page.waitForFunction(() => document.querySelector<HTMLSelectElement>('select[name="actor"]')?.value === '');
  t.equal(await filter.getByLabel('Flag').inputValue(), flagId, 'back: the flag filter restored');
  await page.goBack();
  await page.waitForURL(new RegExp(`#/projects/${kShop}/audit$`));
  await page.waitForFunction(() => document.querySelector<HTMLSelectElement>('select[name="flag"]')?.value === '');
  t.ok((await rows.count()) > 3, 'back again: every entry');
  await page.goForward();
  await page.goForward();
  await page.waitForURL(/&actor=token%3A/);
  await page.waitForFunction(() => document.querySelector<HTMLSelectElement>('select[name="actor"]')?.value.startsWith('token:'));
  t.same(await actions(), ['flag.patch', 'flag.patch', 'flag.create'], 'forward: both filters again');

  // ---- a single-environment project lists no environments; a multi-environment one does ----
  await visit(page, `#/projects/${kShop}/settings`, 'Audiences of Web shop');
  t.equal(await page.getByRole('heading', { name: 'Environments' }).count(), 0, 'no environments section');
  t.equal(await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Audiences', exact: true }).count(), 1);
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA: the settings of a single-environment project');
  await page.setViewportSize({ width: 1280, height: 800 });
  await visit(page, `#/projects/${kShop}/tokens`, 'Tokens of Web shop');
  t.equal(await page.getByRole('columnheader', { name: 'Environments' }).count(), 0, 'no Environments column for its tokens');
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA: the tokens of a single-environment project');
  await page.setViewportSize({ width: 1280, height: 800 });
  await visit(page, `#/projects/${kPlatform}/settings`, 'Environments and audiences of Platform');
  t.equal(await page.getByRole('heading', { name: 'Environments', level: 2 }).count(), 1, 'a multi-environment project lists them');
  await visit(page, `#/projects/${kPlatform}/tokens`, 'Tokens of Platform');
  t.equal(await page.getByRole('columnheader', { name: 'Environments' }).count(), 1, 'and its tokens say which');
  await visit(page, `#/projects/${kShop}`, 'Web shop');
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA: the flag list');
});

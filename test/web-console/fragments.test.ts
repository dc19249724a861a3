// Shared fragments in the console (issue 47), in Chromium against the real server: a fragment made on the
// project's Shared fragments page; in a flag's rule builder the condition "matches shared fragment" picked
// by name from the project's fragments, the JSON view showing {"$ref": NAME}; saved, OFREP answers as the
// fragment says; the fragment's rule changed on its page, OFREP follows; its delete refused while the flag
// uses it, the server's words shown; axe-core's WCAG 2.2 AA rules pass on both pages at 1,280 and 390 px,
// light and dark.
import type { Locator } from 'playwright-core';
import t from 'tap';
import { call } from '../helpers/http.js';
import { demoConsole, visit, wcagViolationsEverywhere } from '../helpers/web-console.js';

t.test('a fragment made on its page, picked in the rule builder, saved: OFREP answers as the fragment says', async (t) => {
  const { base, secret, ownerPage } = await demoConsole(t);
  const write = secret('demo-write');
  const created = await call(base, 'POST', '/api/v1/flags', {
    token: write,
    body: { name: 'eu-offer', enabled: true, trafficPercentage: 100, variants: { red: '#f00', green: '#0f0' }, defaultVariant: 'red' },
  });
  t.equal(created.status, 201, created.text);
  const flagId = created.json.id as string;
  const projectId = 'prj_DemoWebShop';
  const ofrep = async (context: Record<string, unknown>) => {
    const r = await call(base, 'POST', `/ofrep/v1/evaluate/flags/${flagId}`, { token: secret('demo-read'), body: { context } });
    t.equal(r.status, 200, r.text);
    return r.json.variant as string;
  };

  const page = await ownerPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  const box = (label: string): Locator => page.getByLabel(label, { exact: true });

  // ---- the Shared fragments page: made with the form ----
  await page.goto(`${base}/console#/projects/${projectId}`);
  await page.getByRole('link', { name: 'Shared fragments' }).click();
  const title = page.getByRole('heading', { level: 1, name: /^Shared fragments of / });
  await title.waitFor();
  const heading = (await title.textContent()) ?? '';
  await page.getByText('No shared fragments yet.').waitFor();
  await box('Name (a letter, then letters, digits, _ or -)').fill('benelux');
  await box('Rule (JSON)').fill('{"in": [{"var": "country"}, ["NL", "BE", "LU"]]}');
  await page.getByRole('button', { name: 'Create shared fragment' }).click();
  await page.getByText('Shared fragment benelux created.').waitFor();
  t.same(
    (await call(base, 'GET', '/api/v1/fragments', { token: write })).json.fragments.map((f: { name: string }) => f.name),
    ['benelux'],
  );
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA on the Shared fragments page');

  // ---- the rule builder: "matches shared fragment", picked by name ----
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${base}/console#/flags/${flagId}`);
  await page.getByRole('heading', { name: 'eu-offer', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Add branch', exact: true }).click();
  await box('Branch 1 serves').selectOption('v:green');
  await box('Branch 1 condition 1 operator').selectOption('fragment');
  t.equal(await box('Branch 1 condition 1 shared fragment').inputValue(), 'benelux', 'the project fragment offered by name');
  t.same(
    JSON.parse(await box('Targeting rule (JSON)').inputValue()),
    { if: [{ $ref: 'benelux' }, 'green', null] },
    'the JSON view shows the $ref',
  );
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA on the rule builder with a fragment condition');
  await page.setViewportSize({ width: 1280, height: 900 });
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'PATCH'),
    page.getByRole('button', { name: 'Save variants' }).click(),
  ]);
  const stored = (await call(base, 'GET', `/api/v1/flags/${flagId}`, { token: write })).json.targeting;
  t.same(stored, { if: [{ $ref: 'benelux' }, 'green', null] }, 'saved as written');
  t.equal(await ofrep({ targetingKey: 'u1', country: 'BE' }), 'green', 'OFREP answers as the fragment says');
  t.equal(await ofrep({ targetingKey: 'u1', country: 'FR' }), 'red');

  // ---- reopened, the rule shows in the builder; the fragment changed on its page, OFREP follows ----
  await page.reload();
  await page.getByRole('heading', { name: 'eu-offer', level: 1 }).waitFor();
  t.equal(await box('Branch 1 condition 1 shared fragment').inputValue(), 'benelux', 'a saved $ref opens in the builder');
  await visit(page, `#/projects/${projectId}/fragments`, heading);
  await box('Rule of benelux (JSON)').fill('{"in": [{"var": "country"}, ["FR"]]}');
  await page.getByRole('button', { name: 'Save rule' }).click();
  await page.getByText('Shared fragment benelux changed').waitFor();
  t.equal(await ofrep({ targetingKey: 'u1', country: 'FR' }), 'green', 'every flag using it follows');
  t.equal(await ofrep({ targetingKey: 'u1', country: 'BE' }), 'red');
  await page.getByRole('cell', { name: 'eu-offer' }).waitFor();

  // ---- deleting it while the flag uses it: refused, the server's words shown ----
  const dialog = page.getByRole('alertdialog', { name: 'Delete the shared fragment benelux?' });
  await page.getByRole('button', { name: 'Delete shared fragment benelux' }).click();
  await dialog.getByRole('button', { name: 'Delete' }).click();
  await page.getByText(/shared fragment "benelux" is used by flag "eu-offer"/).waitFor();
  t.equal((await call(base, 'GET', '/api/v1/fragments', { token: write })).json.fragments.length, 1, 'still there');
});

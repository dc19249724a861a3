// The web console's variant table and rules editor (issue 25, item 5), in Chromium: a boolean flag gets
// typed variants, a default and a flagd rule, which evaluation then serves; a value or a rule that is
// not JSON is refused in the page with nothing sent; a rule flagd would not load is refused by the
// server naming the place, and nothing is saved; removing every variant makes it a boolean flag again.
import type { Browser, Locator } from 'playwright-core';
import t from 'tap';
import { demoPassword, demoSecret, ensureChromium, kDemoOwner, launchChromium, seriousViolations } from '../helpers/web-console.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';

t.test('variants and a rule edited in the flag page, checked before they are saved', async (t) => {
  ensureChromium();
  const server = await startTestServer({ demo: true });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const shopWrite = demoSecret(server.output(), 'demo-write');
  const created = await call(base, 'POST', '/api/v1/flags', {
    token: shopWrite,
    body: { name: 'colours', enabled: true, trafficPercentage: 100 },
  });
  t.equal(created.status, 201, JSON.stringify(created.json));
  const flagId = created.json.id as string;
  const apiFlag = async () => (await call(base, 'GET', `/api/v1/flags/${flagId}`, { token: shopWrite })).json;

  const browser: Browser = await launchChromium(t);
  const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  page.setDefaultTimeout(60_000);
  let patches = 0;
  page.on('request', (r) => {
    if (r.method() === 'PATCH') patches++;
  });
  // What the save says is the page's status line; the rule's playground may show the same refusal.
  const save = async (button: Locator, says: string) => {
    await Promise.all([page.waitForResponse((r) => r.request().method() === 'PATCH'), button.click()]);
    await page.locator('#status', { hasText: says }).waitFor();
  };
  await page.goto(`${base}/console`);
  await page.getByLabel('Email').fill(kDemoOwner);
  await page.getByLabel('Password').fill(demoPassword(server.output()));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Organisations and projects' }).waitFor();
  await page.goto(`${base}/console#/flags/${flagId}`);
  await page.getByRole('heading', { name: 'colours', level: 1 }).waitFor();
  const saveVariants = page.getByRole('button', { name: 'Save variants' });

  // ---- two variants, a default and a rule ----
  await page.getByRole('button', { name: 'Add variant' }).click();
  await page.getByLabel('Variant 1 name').fill('red');
  await page.getByLabel('Variant 1 value').fill('"#f00"');
  await page.getByRole('button', { name: 'Add variant' }).click();
  await page.getByLabel('Variant 2 name').fill('green');
  await page.getByLabel('Variant 2 value').fill('"#0f0"');
  await page.getByLabel('Default variant (empty: none)').fill('red');
  await page.getByLabel('Targeting rule (JSON)').fill('{"if": [{"ends_with": [{"var": "email"}, "@example.com"]}, "green", null]}');
  await save(saveVariants, 'Saved variants and rule of colours.');
  t.match(await apiFlag(), {
    variants: { red: '#f00', green: '#0f0' },
    defaultVariant: 'red',
    targeting: { if: [{ ends_with: [{ var: 'email' }, '@example.com'] }, 'green', null] },
  });
  t.same((await call(base, 'GET', `/v1/flags/${flagId}?email=ada%40example.com`)).json.value, '#0f0', 'evaluation serves the rule at once');
  t.same(await seriousViolations(page), [], 'axe: no serious or critical violation on the flag page with variants');

  // ---- not JSON, or two variants of one name: refused in the page, nothing sent ----
  const before = patches;
  await page.getByLabel('Variant 2 value').fill('#0f0');
  await saveVariants.click();
  await page.getByText(/Variant 2's value is not JSON/).waitFor();
  await page.getByLabel('Variant 2 value').fill('"#0f0"');
  await page.getByLabel('Targeting rule (JSON)').fill('{"if": [');
  await saveVariants.click();
  // The save's refusal, not the rule playground's live "The rule is not JSON yet (...)", which may show beside it.
  await page.getByText(/The rule is not JSON \(.*nothing was saved\./).waitFor();
  await page.getByLabel('Variant 2 name').fill('red');
  await saveVariants.click();
  await page.getByText('Two variants are named "red": each needs its own name; nothing was saved.').waitFor();
  await page.getByLabel('Variant 2 name').fill('green');
  t.equal(patches, before, 'nothing was sent');

  // ---- a rule flagd would not load: the server's refusal names the place, nothing saved ----
  await page.getByLabel('Targeting rule (JSON)').fill('{"if": [{"starts_wit": [{"var": "email"}, "a"]}, "green", null]}');
  await save(saveVariants, 'Invalid request: "targeting.if[0]": unknown operator "starts_wit"');
  t.match(
    await apiFlag(),
    { targeting: { if: [{ ends_with: [{ var: 'email' }, '@example.com'] }, 'green', null] } },
    'the stored rule is unchanged',
  );

  // ---- every variant removed: a boolean flag again ----
  await page.getByRole('button', { name: 'Remove variant 2' }).click();
  await page.getByRole('button', { name: 'Remove variant 1' }).click();
  await save(saveVariants, 'Saved variants and rule of colours.');
  const after = await apiFlag();
  t.notOk('variants' in after, 'no variants: the flag is boolean again');
  t.equal((await call(base, 'GET', `/v1/flags/${flagId}`)).text, JSON.stringify({ id: flagId, name: 'colours', enabled: true }));
});

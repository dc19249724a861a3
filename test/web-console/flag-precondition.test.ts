// The flag page's changes name the version the page read (If-Match, src/flags/flag-version.ts), in
// Chromium as the demo owner, checked from outside through the Management API: a save, a setting's save
// and a deletion made after someone else changed the flag are refused, and the page says so and shows
// the flag as it is now; saved again from there, the change lands.
import t from 'tap';
import { call } from '../helpers/http.js';
import { demoConsole } from '../helpers/web-console.js';

t.test('a flag changed since the page read it: nothing saved, the page says so and shows it as it is', async (t) => {
  const { base, secret, ownerPage } = await demoConsole(t);
  const token = secret('demo-write');
  const flagId = (await call(base, 'GET', '/api/v1/flags?name=holiday-banner', { token })).json.flags[0].id as string;
  const apiFlag = async () => (await call(base, 'GET', `/api/v1/flags/${flagId}`, { token })).json;
  const elsewhere = (body: unknown) => call(base, 'PATCH', `/api/v1/flags/${flagId}`, { token, body });
  const page = await ownerPage();
  const stale = page.getByText(/^holiday-banner was changed by someone else since this page showed it, so nothing was saved\./);

  // ---- the state's form ----
  await page.goto(`${base}/console#/flags/${flagId}`);
  await page.getByRole('heading', { name: 'holiday-banner', level: 1 }).waitFor();
  const traffic = page.getByLabel('Traffic percentage');
  await traffic.fill('42');
  t.equal((await elsewhere({ trafficPercentage: 7 })).status, 200, 'someone else changes the flag');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await stale.waitFor();
  t.equal((await apiFlag()).trafficPercentage, 7, "nothing was saved: the other person's change stands");
  t.equal(await traffic.inputValue(), '7', 'the page shows the flag as it is now');
  await traffic.fill('42');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('Saved state of holiday-banner.').waitFor();
  t.equal((await apiFlag()).trafficPercentage, 42, 'saved again from the page as it is now, it lands');

  // ---- a setting's form ----
  await page.getByLabel('Description text').fill('from the page');
  t.equal((await elsewhere({ enabled: true })).status, 200);
  await page.getByRole('button', { name: 'Save description' }).click();
  await stale.waitFor();
  t.not((await apiFlag()).description, 'from the page', 'the description was not saved');
  t.equal(await page.getByLabel('Enabled').isChecked(), true, "the page shows the other person's change");

  // ---- the deletion ----
  t.equal((await elsewhere({ enabled: false })).status, 200);
  await page.getByRole('button', { name: 'Delete flag…' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await stale.waitFor();
  t.equal((await call(base, 'GET', `/api/v1/flags/${flagId}`, { token })).status, 200, 'the flag was not deleted');
});

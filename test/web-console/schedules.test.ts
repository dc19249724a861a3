// Scheduled changes on the web console's flag page (docs/release-plans.md), in Chromium: a change is
// scheduled from the page as the flag's own fields (its other fields as JSON, checked as JSON before
// anything is sent; then the whole by the server as the PATCH it will be), listed, applied by the server
// once due (the test moves the service clock instead of waiting) and shown as applied, the flag's state
// then what the form said; a pending one is cancelled with one click. Checked from outside the browser too.
import t from 'tap';
import { demoConsole, seriousViolations } from '../helpers/web-console.js';
import { call } from '../helpers/http.js';
import { cli } from '../helpers/cli.js';

const kHourMs = 3_600_000;

/** A datetime-local value (the browser's local time) for Unix ms, to the minute. */
function localInput(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

t.test('a change scheduled, listed, applied when due and a pending one cancelled, on the flag page', async (t) => {
  const { base, secret, ownerPage, server } = await demoConsole(t, { FLAGWIRE_TEST_HOOKS: '1' });
  const shopWrite = secret('demo-write');
  const created = await call(base, 'POST', '/api/v1/flags', { token: shopWrite, body: { name: 'launch', trafficPercentage: 100 } });
  t.equal(created.status, 201, JSON.stringify(created.json));
  const flagId = created.json.id as string;
  const schedules = async () =>
    (await call(base, 'GET', '/api/v1/schedules', { token: shopWrite })).json.schedules as { status: string; patch: unknown }[];

  const page = await ownerPage();
  let posts = 0;
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().includes('/schedules')) posts++;
  });
  await page.goto(`${base}/console#/flags/${flagId}`);
  await page.getByRole('heading', { name: 'launch', level: 1 }).waitFor();
  await page.getByText('No scheduled changes.').waitFor();
  t.equal(await page.getByLabel('Default variant when due').isVisible(), false, 'a flag without variants: no default variant to set');

  // ---- not JSON: refused in the page, nothing sent; a bad PATCH: refused by the server, naming it ----
  const due = Date.now() + 2 * kHourMs;
  const audience = (await cli(server.dataDir, ['audience', 'list', 'prj_DemoWebShop'])).json.audiences[0] as { id: string; name: string };
  const schedule = page.getByRole('button', { name: 'Schedule', exact: true });
  await page.getByLabel('Due (local time)').fill(localInput(due));
  await page.getByText('Other fields (variants, rule, metadata) as JSON').click();
  await page.getByLabel('Other fields of the change (JSON, as a PATCH body)').fill('{"enabled": tru');
  await schedule.click();
  await page.getByText(/The other fields are not JSON .*nothing was scheduled/).waitFor();
  t.equal(posts, 0, 'nothing was sent');
  await page.getByLabel('Other fields of the change (JSON, as a PATCH body)').fill('');
  await page.getByLabel('Percentage when due (blank: as it is)').fill('500');
  await schedule.click();
  await page.getByText(/patch: "trafficPercentage" must be a whole number between 0 and 100/).waitFor();
  t.same(await schedules(), [], 'nothing scheduled');

  // ---- two changes scheduled from the page: on, half the traffic, an audience; then 10% an hour later ----
  await page.getByLabel('On or off when due').selectOption('true');
  await page.getByLabel('Percentage when due (blank: as it is)').fill('50');
  await page.getByLabel('Audience when due').selectOption(audience.id);
  await schedule.click();
  await page.getByText(/Scheduled a change of launch for/).waitFor();
  await page.getByLabel('Due (local time)').fill(localInput(due + kHourMs));
  await page.getByLabel('Percentage when due (blank: as it is)').fill('10');
  await schedule.click();
  // The status line still says the first was scheduled: the second row is what shows this one done.
  await page
    .getByRole('button', { name: /Cancel the change due/ })
    .nth(1)
    .waitFor();
  t.match(await schedules(), [
    { status: 'pending', patch: { enabled: true, trafficPercentage: 50, audienceId: audience.id } },
    { status: 'pending', patch: { trafficPercentage: 10 } },
  ]);
  t.same(Object.keys((await schedules())[1]!.patch as object), ['trafficPercentage'], 'only the field chosen');
  // Each change reads as sentences in the audit log's words, the audience by its name: no JSON.
  const changes = page.getByRole('region', { name: 'Scheduled changes' });
  await changes.getByText('Set the traffic percentage to 10%.').waitFor();
  for (const sentence of ['Set the state to on.', 'Set the traffic percentage to 50%.', `Set the audience to ${audience.name}`])
    t.equal(await changes.getByText(sentence).count(), 1, sentence);
  t.notMatch((await changes.textContent()) ?? '', '{"', 'no patch shown as JSON');
  t.same(await seriousViolations(page), [], 'axe: no serious or critical violation on the flag page with scheduled changes');

  // ---- the later one cancelled with one click ----
  await page
    .getByRole('button', { name: /Cancel the change due/ })
    .nth(1)
    .click();
  await page.getByText(/Cancelled the change due/).waitFor();
  t.match(await schedules(), [{ status: 'pending' }, { status: 'cancelled' }]);

  // ---- the service clock moved past the first: the server applies it, the page shows it applied ----
  const moved = await call(base, 'POST', `/__test/clock?advance=${Math.ceil((3 * kHourMs) / 1000)}`);
  t.equal(moved.status, 200);
  const deadline = Date.now() + 60_000;
  while ((await schedules())[0]!.status === 'pending') {
    if (Date.now() > deadline) throw new Error('the scheduled change was never applied');
    await new Promise((r) => setTimeout(r, 50));
  }
  t.match(await schedules(), [{ status: 'applied' }, { status: 'cancelled' }], 'applied once; the cancelled one never');
  t.match(
    (await call(base, 'GET', `/api/v1/flags/${flagId}`, { token: shopWrite })).json,
    { enabled: true, trafficPercentage: 50, audienceId: audience.id },
    "the flag's state is what the form said",
  );
  await page.reload();
  await page.getByRole('cell', { name: 'applied', exact: true }).waitFor();
  t.equal(await page.getByRole('button', { name: /Cancel the change due/ }).count(), 0, 'nothing left to cancel');
});

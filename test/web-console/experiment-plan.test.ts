// An experiment's plan edited in the console before it starts (issue 59, item 1), in Chromium against the
// real demo server: on the experiment's page its arm weights and planned size are changed and saved, and
// the Management API then reads them; a weight the API refuses is refused in its words and nothing
// changes; a page left open while the experiment was started elsewhere has its change refused as the API
// refuses a running experiment's plan, nothing changed; the page of a running experiment offers no form
// and says why. axe-core's WCAG 2.2 AA rules pass on the page with its form at 1,280 and 390 px, light
// and dark.
import t from 'tap';
import { call } from '../helpers/http.js';
import { demoConsole, wcagViolationsEverywhere } from '../helpers/web-console.js';

const kProject = 'prj_DemoWebShop';
const kKey = 'plan-test';

t.test("an experiment's weights and planned size are changed in the console before it starts, and not after", async (t) => {
  const { base, secret, ownerPage } = await demoConsole(t);
  const token = secret('demo-write');
  const api = (method: string, path: string, body?: unknown) => call(base, method, path, { token, body });
  const experiment = async () => (await api('GET', `/api/v1/experiments/${kKey}`)).json;
  const flag = await api('POST', '/api/v1/flags', { name: 'plan-edit', enabled: true, trafficPercentage: 100 });
  t.equal(flag.status, 201, `the flag made ${flag.status === 201 ? '' : flag.text}`);
  const made = await api('POST', '/api/v1/experiments', {
    key: kKey,
    flagId: flag.json.id,
    variants: [
      { variant: 'off', weight: 50 },
      { variant: 'on', weight: 50 },
    ],
    control: 'off',
    metrics: [{ metric: 'checkout', kind: 'conversion' }],
    primaryMetric: 'checkout',
    plannedSubjects: 1000,
  });
  t.equal(made.status, 201, `the experiment made ${made.status === 201 ? '' : made.text}`);

  const page = await ownerPage();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${base}/console#/projects/${kProject}/experiments/${kKey}`);
  await page.getByRole('heading', { level: 1, name: `Experiment ${kKey}` }).waitFor();
  const form = page.getByRole('group', { name: 'Change the plan' });
  await form.getByLabel('Weight of off').fill('1');
  await form.getByLabel('Weight of on').fill('3');
  await form.getByLabel('Planned subjects').fill('4000');
  await form.getByRole('button', { name: 'Save plan' }).click();
  await page.getByText(`Plan of experiment ${kKey} saved.`).waitFor();
  t.match(
    await experiment(),
    {
      status: 'draft',
      plannedSubjects: 4000,
      variants: [
        { variant: 'off', weight: 1 },
        { variant: 'on', weight: 3 },
      ],
    },
    'the API reads the plan the page saved',
  );
  const arms = page.getByRole('region', { name: 'Arms' });
  t.same(await arms.getByRole('row').last().getByRole('cell').allTextContents(), ['on', '3', '75.0%'], 'the planned share shown');
  t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA on the page with its plan form');
  await page.setViewportSize({ width: 1280, height: 900 });

  await form.getByLabel('Weight of on').fill('0');
  await form.getByRole('button', { name: 'Save plan' }).click();
  await page.getByText(/weight must be a positive number/).waitFor();
  t.match(await experiment(), { variants: [{ weight: 1 }, { weight: 3 }] }, 'a refused weight changes nothing');

  // Started over the API while the page stays open: the page's change is refused as the API refuses it.
  t.equal((await api('POST', `/api/v1/experiments/${kKey}/start`)).status, 200);
  await form.getByLabel('Weight of on').fill('5');
  await form.getByRole('button', { name: 'Save plan' }).click();
  await page
    .getByText(`Experiment "${kKey}" is running: its plan (flag, variants, weights, control, metrics, planned size, alpha) cannot change`)
    .waitFor();
  t.match(await experiment(), { status: 'running', variants: [{ weight: 1 }, { weight: 3 }], plannedSubjects: 4000 }, 'nothing changed');

  await page.reload();
  await page.getByRole('heading', { level: 1, name: `Experiment ${kKey}` }).waitFor();
  await page.getByText('Its weights and planned size cannot change while it runs: stop it first').waitFor();
  t.equal(await page.getByRole('group', { name: 'Change the plan' }).count(), 0, 'a running experiment offers no form');
});

// Progressive rollouts on the web console's flag page (docs/release-plans.md), in Chromium: a rollout
// started from the page (its steps as a table, its guard as fields; the rollout made equals the one the
// Management API makes from the same JSON), shown as a timeline with its current step,
// stepped by the server when a hold ends (the test moves the service clock instead of waiting), paused,
// resumed, skipped and rolled back through its buttons (the rollback confirmed in a dialog), a refusal
// shown in the status line, a group flag's environments each with their own, and a viewer who sees the
// timeline and no control. Checked from outside the browser (the Management API) too.
import type { Page } from 'playwright-core';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import {
  type DemoConsole,
  demoConsole,
  demoPassword,
  kDemoOwner,
  seriousViolations,
  setPassword,
  signedInPage,
  wcagViolationsEverywhere,
} from '../helpers/web-console.js';
import { call } from '../helpers/http.js';

const kViewer = 'viewer@demo.flagwire.test';
const kViewerPassword = 'viewer password 123';
const kHourMs = 3_600_000;
// The last three tests each make and read flags of their own, in projects of their own or by id: one demo
// server and browser for them (a start is about 1 CPU s), started by the first of them, and one page
// signed in as the owner, each test going to its flag by address (a sign-in is a page load, about 0.6 CPU
// s of Chromium, and each page load injects axe-core again, about 0.2). The first test moves the server's
// clock and adds a user: it has its own.
let sharedConsole: Promise<DemoConsole & { page: Page }> | undefined;
const shared = () =>
  (sharedConsole ??= (async () => {
    const demo = await demoConsole(t);
    return { ...demo, page: await demo.ownerPage() };
  })());

/**
 * Sets the start form's table (of the environment `where` names) to `steps`, written as --steps is
 * (`10:1h,50:90m,100`; a percentage not a number is typed as it is): rows added or removed through the
 * table's buttons, each percentage and hold typed, each unit chosen.
 */
async function fillSteps(page: Page, steps: string, where = ''): Promise<void> {
  const parts = steps.split(',').map((part) => /^([^:]*)(?::(\d+)([smhd]))?$/.exec(part)!);
  const rows = () => page.getByRole('region', { name: `Steps${where}`, exact: true }).locator('tbody tr');
  while ((await rows().count()) < parts.length) await page.getByRole('button', { name: `Add step${where}`, exact: true }).click();
  while ((await rows().count()) > parts.length)
    await page.getByRole('button', { name: `Remove step ${await rows().count()}${where}`, exact: true }).click();
  for (const [i, [, percentage, amount, unit]] of parts.entries()) {
    await page.getByLabel(`Step ${i + 1} percentage${where}`, { exact: true }).fill(percentage!);
    if (i === parts.length - 1) continue;
    await page.getByLabel(`Step ${i + 1} held for${where}`, { exact: true }).fill(amount!);
    await page.getByLabel(`Step ${i + 1} hold unit${where}`, { exact: true }).selectOption(unit!);
  }
}

t.test('a rollout started, shown as a timeline, stepped, paused, resumed, skipped and rolled back from the flag page', async (t) => {
  const { browser, server, base, secret } = await demoConsole(t, { FLAGWIRE_TEST_HOOKS: '1' });
  const shopWrite = secret('demo-write');
  const created = await call(base, 'POST', '/api/v1/flags', {
    token: shopWrite,
    body: { name: 'ramp', enabled: true, trafficPercentage: 0 },
  });
  t.equal(created.status, 201, JSON.stringify(created.json));
  const flagId = created.json.id as string;
  const rollouts = async (token = shopWrite) =>
    (await call(base, 'GET', '/api/v1/rollouts', { token })).json.rollouts as Record<string, any>[];
  const served = async () => (await call(base, 'GET', `/api/v1/flags/${flagId}`, { token: shopWrite })).json.trafficPercentage as number;

  const open = async (email: string, password: string): Promise<Page> => {
    const page = await signedInPage(browser, base, email, password);
    await page.goto(`${base}/console#/flags/${flagId}`);
    await page.getByRole('heading', { name: 'ramp', level: 1 }).waitFor();
    return page;
  };
  const page = await open(kDemoOwner, demoPassword(server.output()));
  const current = page.locator('li[aria-current="step"]');
  const button = (name: string) => page.getByRole('button', { name, exact: true });
  const start = async (steps: string) => {
    await fillSteps(page, steps);
    await page.getByRole('button', { name: 'Start rollout' }).click();
  };
  await page.getByText('No rollout yet.').waitFor();

  // ---- refused: a part that is not a step (the CLI's parser, on the server), a percentage going down ----
  await start('10:1h,fifty');
  await page.getByText('Invalid request: steps[1].trafficPercentage must be a whole number between 0 and 100').waitFor();
  await start('50:1h,10');
  await page
    .getByText('steps[1].trafficPercentage goes down (50 to 10): a rollout only raises it; roll back instead', { exact: false })
    .waitFor();
  t.same(await rollouts(), [], 'nothing started');

  // ---- started: the timeline, its first step current, the next one's due time ----
  await start('10:1h,50:90m,100');
  await page.getByText(/Started rollout rol_\w+ of ramp: its first step now\./).waitFor();
  const [plan] = await rollouts();
  t.match(plan, {
    flagId,
    env: null,
    status: 'running',
    current: 0,
    initialPercentage: 0,
    createdBy: /^user:/,
    createdByName: 'Demo Owner',
  });
  t.same(plan!.steps, [
    { trafficPercentage: 10, holdMs: kHourMs },
    { trafficPercentage: 50, holdMs: 90 * 60_000 },
    { trafficPercentage: 100 },
  ]);
  t.equal(await served(), 10, 'the first step at once');
  const id = plan!.id as string;
  const steps = page.getByRole('list', { name: `Steps of rollout ${id}` }).getByRole('listitem');
  t.equal(await steps.count(), 3);
  t.match(await current.textContent(), /^Step 1: 10% · held 1h · applied \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC current$/);
  t.match(await steps.nth(1).textContent(), /^Step 2: 50% · held 90m · due \d{4}-.* UTC$/);
  t.equal(await steps.nth(2).textContent(), 'Step 3: 100% · held for good');
  await page.getByText('Status: running').waitFor();
  t.same(
    await page.getByRole('button', { name: /Pause|Resume|Skip|Roll back/ }).allInnerTexts(),
    ['Pause', 'Skip to the next step', 'Roll back'],
    'the actions a running rollout allows',
  );
  t.equal(await page.getByRole('region', { name: 'Steps', exact: true }).count(), 0, 'no second rollout while one runs');
  t.same(await seriousViolations(page), [], 'axe: no serious or critical violation on the flag page with a timeline');

  // ---- the service clock moved past the hold: the server takes the next step, the page shows it ----
  t.equal((await call(base, 'POST', `/__test/clock?advance=${kHourMs / 1000}`)).status, 200);
  const deadline = Date.now() + 60_000;
  while ((await rollouts())[0]!.current !== 1) {
    if (Date.now() > deadline) throw new Error('the second step was never taken');
    await new Promise((r) => setTimeout(r, 50));
  }
  await page.reload();
  await current.filter({ hasText: 'Step 2: 50%' }).waitFor();
  t.match(await steps.nth(0).textContent(), /^Step 1: 10% · held 1h · applied .* UTC$/, 'the step before: applied');
  t.equal(await served(), 50);

  // ---- pause, resume, skip through the buttons ----
  await button('Pause').click();
  await page.getByText(`Rollout ${id} paused: paused at step 2 (50%).`).waitFor();
  await page.getByText('Why paused: paused by Demo Owner').waitFor();
  t.match(await steps.nth(2).textContent(), /waits until the rollout is resumed/);
  t.same(await page.getByRole('button', { name: /Pause|Resume|Skip|Roll back/ }).allInnerTexts(), [
    'Resume',
    'Skip to the next step',
    'Roll back',
  ]);
  await button('Resume').click();
  await page.getByText(`Rollout ${id} resumed: running at step 2 (50%).`).waitFor();
  await button('Skip to the next step').click();
  await page.getByText(`Rollout ${id} moved to its next step: completed at step 3 (100%).`).waitFor();
  await current.filter({ hasText: 'Step 3: 100%' }).waitFor();
  t.equal(await served(), 100);
  t.same(
    await page.getByRole('button', { name: /Pause|Resume|Skip|Roll back/ }).allInnerTexts(),
    ['Roll back'],
    'completed: only a rollback',
  );

  // ---- roll back: a dialog asks first; dismissed, nothing happens; accepted, it rolls back ----
  const rollBack = page.getByRole('alertdialog', { name: `Roll back rollout ${id}?` });
  await button('Roll back').click();
  t.equal(await rollBack.getByText('ramp goes back to 0%', { exact: false }).count(), 1, 'the dialog says what rolling back does');
  await rollBack.getByRole('button', { name: 'Cancel' }).click();
  await rollBack.waitFor({ state: 'detached' });
  t.match(await rollouts(), [{ id, status: 'completed' }], 'dismissed: nothing sent');
  await button('Roll back').click();
  await rollBack.getByRole('button', { name: 'Roll back' }).click();
  await page.getByText(`Rollout ${id} rolled back: ramp is back at 0% (the percentage before its first step).`).waitFor();
  await page.getByText(/^Rolled back .* UTC to 0% \(the percentage before its first step\)\.$/).waitFor();
  t.equal(await current.count(), 0, 'a rolled-back rollout holds no step');
  t.equal(await served(), 0);
  t.match(await rollouts(), [{ id, status: 'rolled-back' }]);

  // ---- a second rollout: the first listed under it ----
  await start('20:1h,100');
  await page.getByText(/Started rollout rol_\w+ of ramp: its first step now\./).waitFor();
  await page.getByText('Earlier rollouts, newest first:').waitFor();
  t.match(await page.locator('ul.earlier li').textContent(), `${id} · 10% → 50% → 100% · rolled-back · started`);
  t.match(await rollouts(), [
    { id, status: 'rolled-back' },
    { status: 'running', steps: [{ trafficPercentage: 20 }, { trafficPercentage: 100 }] },
  ]);

  // ---- a refusal from an action: the rollout changed elsewhere since the page was loaded ----
  const second = (await rollouts())[1]!.id as string;
  t.equal((await call(base, 'POST', `/api/v1/rollouts/${second}/pause`, { token: shopWrite })).status, 200);
  await button('Pause').click();
  await page.getByText(`Invalid request: Rollout ${second} is paused: it cannot pause now.`).waitFor();

  // ---- a viewer: the timeline, no control ----
  const orgId = (await cli(server.dataDir, ['org', 'list'])).json.orgs[0].id as string;
  const viewer = await cli(server.dataDir, ['user', 'create', '--email', kViewer, '--name', 'Demo Viewer']);
  t.equal((await cli(server.dataDir, ['org', 'add-member', orgId, viewer.json.id, '--role', 'viewer'])).code, 0);
  t.equal((await setPassword(server.dataDir, viewer.json.id, `${kViewerPassword}\n`)).code, 0);
  const seen = await open(kViewer, kViewerPassword);
  await seen.locator('li[aria-current="step"]').filter({ hasText: 'Step 1: 20%' }).waitFor();
  t.equal(await seen.getByRole('button', { name: /Pause|Resume|Skip|Roll back|Start rollout/ }).count(), 0, 'a viewer gets no button');
  t.equal(await seen.getByRole('region', { name: 'Steps', exact: true }).count(), 0, 'and no form');
  t.same(await seriousViolations(seen), [], 'axe: none on the viewer’s page either');
});

t.test('a group flag: a rollout per environment', async (t) => {
  const { base, secret, page } = await shared();
  const platformWrite = secret('demo-platform-write');
  const off = { enabled: true, trafficPercentage: 0 };
  const created = await call(base, 'POST', '/api/v1/flags', {
    token: platformWrite,
    body: { name: 'ramp-group', environments: { staging: off, production: off } },
  });
  t.equal(created.status, 201, JSON.stringify(created.json));
  await page.goto(`${base}/console#/flags/${created.json.id}`);
  await page.getByRole('heading', { name: 'In production' }).waitFor();

  await fillSteps(page, '25:2h,100', ' in production');
  await page.getByRole('button', { name: 'Start rollout in production' }).click();
  await page.getByText(/Started rollout rol_\w+ of ramp-group in production: its first step now\./).waitFor();
  await page.getByText('No rollout in staging yet.').waitFor();
  await page.getByRole('button', { name: 'Pause in production' }).waitFor();
  t.equal(await page.getByRole('region', { name: 'Steps in staging' }).count(), 1, 'staging can still start its own');
  const rollouts = (await call(base, 'GET', '/api/v1/rollouts', { token: platformWrite })).json.rollouts;
  t.match(rollouts, [
    { env: 'production', status: 'running', steps: [{ trafficPercentage: 25, holdMs: 2 * kHourMs }, { trafficPercentage: 100 }] },
  ]);
  t.same(await seriousViolations(page), [], 'axe: no serious or critical violation with a timeline per environment');
});

t.test("a guarded rollout's timeline shows its guard and the guard's last reading, and why a breach paused it", async (t) => {
  const { base, secret, page } = await shared();
  const shopWrite = secret('demo-write');
  const steps = [{ trafficPercentage: 10, holdMs: kHourMs }, { trafficPercentage: 100 }];
  // The server's own gauge of its evaluation workers (1 here): healthy below 100, a breach below 5.
  const guarded = async (name: string, guard: Record<string, unknown>) => {
    const flag = await call(base, 'POST', '/api/v1/flags', { token: shopWrite, body: { name, enabled: true } });
    const started = await call(base, 'POST', `/api/v1/flags/${flag.json.id}/rollouts`, {
      token: shopWrite,
      body: { steps, guard: { flagwire: 'flagwire_eval_workers', intervalMs: 1000, ...guard } },
    });
    t.equal(started.status, 201, started.text);
    return flag.json.id as string;
  };
  const healthy = await guarded('guarded-ok', { max: 100 });
  const breached = await guarded('guarded-breach', { min: 5 });

  await page.goto(`${base}/console#/flags/${breached}`);
  await page.getByRole('heading', { name: 'guarded-breach', level: 1 }).waitFor();
  // The reading is taken within a poll of the start; the page shows what the server had when it loaded.
  for (let i = 0; (await page.getByText('Why paused: guard breached: read 1, below min 5').count()) === 0; i++) {
    if (i > 300) throw new Error('the breach never showed');
    await new Promise((r) => setTimeout(r, 200));
    await page.reload();
    await page.getByRole('heading', { name: 'guarded-breach', level: 1 }).waitFor();
  }
  await page
    .getByText('Guard: flagwire: flagwire_eval_workers (min 5; on breach: pause); last reading: breached: read 1, below min 5')
    .waitFor();

  await page.goto(`${base}/console#/flags/${healthy}`);
  await page.getByRole('heading', { name: 'guarded-ok', level: 1 }).waitFor();
  const line = page.getByText(/^Guard: flagwire: flagwire_eval_workers \(max 100; on breach: pause\); last reading: /);
  await line.waitFor();
  for (let i = 0; /not read yet/.test((await line.textContent()) ?? ''); i++) {
    if (i > 300) throw new Error('no reading ever showed');
    await new Promise((r) => setTimeout(r, 200));
    await page.reload();
    await line.waitFor();
  }
  t.match((await line.textContent()) ?? '', /last reading: 1 at \d{4}-/);
  t.same(await seriousViolations(page), [], 'axe: no serious or critical violation with a guard line');
});

t.test(
  "a rollout by variant weights with a guard, from the table and the guard's fields: the same rollout as the API's from the same JSON",
  async (t) => {
    const { base, secret, page } = await shared();
    const shopWrite = secret('demo-write');
    const typed = async (name: string) => {
      const made = await call(base, 'POST', '/api/v1/flags', {
        token: shopWrite,
        body: { name, enabled: true, trafficPercentage: 100, variants: { on: true, off: false }, defaultVariant: 'off' },
      });
      t.equal(made.status, 201, made.text);
      return made.json.id as string;
    };
    const fromPage = await typed('weights-page');
    const fromApi = await typed('weights-api');
    await page.goto(`${base}/console#/flags/${fromPage}`);
    await page.getByRole('heading', { name: 'weights-page', level: 1 }).waitFor();

    await page.getByLabel('Each step sets').selectOption('weights');
    await page.getByRole('button', { name: 'Add step', exact: true }).click();
    const weights = [
      ['10', '90'],
      ['50', '50'],
      ['100', '0'],
    ];
    for (const [i, [on, off]] of weights.entries()) {
      await page.getByLabel(`Step ${i + 1} weight of on`, { exact: true }).fill(on!);
      await page.getByLabel(`Step ${i + 1} weight of off`, { exact: true }).fill(off!);
    }
    await page.getByLabel('Step 2 held for', { exact: true }).fill('30');
    await page.getByLabel('Step 2 hold unit', { exact: true }).selectOption('m');
    await page.getByLabel('Guarded by').selectOption('flagwire');
    await page.getByLabel('Expression or metric').fill('flagwire_http_requests_total{status="500"}');
    await page.getByLabel('Breach above (max)').fill('5');
    await page.getByLabel('Read every (30 seconds if blank)').fill('2');
    await page.locator('select[name="guardEveryUnit"]').selectOption('m');
    await page.getByLabel('On a breach').selectOption('rollback');
    t.same(await wcagViolationsEverywhere(page), [], 'axe WCAG 2.2 AA at 1,280 and 390 px, light and dark: the rollout form');
    await page.getByRole('button', { name: 'Start rollout' }).click();
    await page.getByText(/Started rollout rol_\w+ of weights-page: its first step now\./).waitFor();

    const body = {
      steps: [
        { variantWeights: { on: 10, off: 90 }, holdMs: kHourMs },
        { variantWeights: { on: 50, off: 50 }, holdMs: 30 * 60_000 },
        { variantWeights: { on: 100, off: 0 } },
      ],
      guard: { flagwire: 'flagwire_http_requests_total{status="500"}', max: 5, intervalMs: 120_000, onBreach: 'rollback' },
    };
    const started = await call(base, 'POST', `/api/v1/flags/${fromApi}/rollouts`, { token: shopWrite, body });
    t.equal(started.status, 201, started.text);
    const rollouts = (await call(base, 'GET', '/api/v1/rollouts', { token: shopWrite })).json.rollouts as Record<string, any>[];
    const made = rollouts.find((r) => r.flagId === fromPage)!;
    const api = rollouts.find((r) => r.flagId === fromApi)!;
    const same = (r: Record<string, any>) => ({ steps: r.steps, guard: r.guard, status: r.status, current: r.current, env: r.env });
    t.same(same(made), same(api), 'the page made the rollout the API makes from the same JSON');
    t.same(made.steps, body.steps);
    t.match(made.guard, { ...body.guard, min: null });
    t.equal(
      (await call(base, 'GET', `/api/v1/flags/${fromPage}`, { token: shopWrite })).json.targeting?.fractional?.length,
      2,
      'its first step serves the split',
    );
  },
);

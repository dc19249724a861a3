// The playground page in Chromium against the real server: a context typed in (targeting key, an
// attribute, an environment) shows every flag's answer and why, and each answer is what GET
// /v1/flags/{id} gives for the same context, asked from outside the browser. The context is kept in the
// address, so a reload shows the same answers; the results are announced; axe-core's WCAG 2.2 AA rules
// pass at desktop and phone widths, and a phone does not scroll sideways.
import type { Page } from 'playwright-core';
import t from 'tap';
import { call } from '../helpers/http.js';
import { demoConsole, wcagViolations } from '../helpers/web-console.js';

const kShop = 'prj_DemoWebShop';
const kPlatform = 'prj_DemoPlatform';
interface Row {
  id: string;
  name: string;
  enabled: string;
  value: string;
  reason: string;
  why: string;
}

/** The results table as the page shows it. */
function rows(page: Page): Promise<Row[]> {
  return page.locator('#page table tbody tr').evaluateAll((trs) =>
    trs.map((tr) => {
      const cells = [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '');
      const href = tr.querySelector('a')?.getAttribute('href') ?? '';
      return { id: href.replace('#/flags/', ''), name: cells[0]!, enabled: cells[1]!, value: cells[2]!, reason: cells[3]!, why: cells[4]! };
    }),
  );
}

t.test('the playground: a context in, every answer and why out, the same as the Evaluation API', async (t) => {
  const { base, ownerPage } = await demoConsole(t);
  const page = await ownerPage();
  const status = page.getByRole('status').filter({ hasText: 'flags evaluated' });

  /** Each row's `enabled` against GET /v1/flags/{id}?<query>, the query written here, not taken from the page. */
  const sameAsEvaluationApi = async (query: string) => {
    const shown = await rows(page);
    t.ok(shown.length > 0, 'the page lists the flags');
    for (const row of shown) {
      const evaluated = await call(base, 'GET', `/v1/flags/${row.id}?${query}`);
      t.equal(evaluated.status, 200);
      t.equal(row.enabled, evaluated.json.enabled ? 'on' : 'off', `${row.name}: the page says what the Evaluation API says for ${query}`);
    }
    return Object.fromEntries(shown.map((r) => [r.name, r]));
  };

  // ---- a single-environment project, reached by its tab ----
  await page.evaluate((h) => (location.hash = h), `#/projects/${kShop}`);
  await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Playground' }).click();
  await page.getByRole('heading', { level: 1, name: 'Playground of Web shop' }).waitFor();
  await page.getByLabel('Targeting key').fill('user 7+x');
  await page.getByRole('button', { name: 'Add attribute' }).click();
  await page.getByLabel('Attribute 1 name').fill('plan');
  await page.getByLabel('Attribute 1 value').fill('beta');
  await page.getByRole('button', { name: 'Evaluate' }).click();
  await status.waitFor();
  t.match(
    await status.textContent(),
    /^3 flags evaluated: \d enabled, \d not\. Same as GET \/v1\/flags\/\{id\}\?targetingKey=user%207%2Bx&plan=beta\.$/,
  );
  let shown = await sameAsEvaluationApi('targetingKey=user%207%2Bx&plan=beta');
  t.match(shown['dark-mode'], {
    enabled: 'on',
    value: 'true',
    reason: 'TARGETING_MATCH',
    why: 'audience "Beta testers" matched (100% of it)',
  });
  t.match(shown['holiday-banner'], { enabled: 'off', reason: 'DISABLED', why: 'flag off' });
  t.match(shown['new-checkout'], { reason: 'SPLIT', why: /^(in|not in) the 50% rollout \(bucket \d+ of 100, from the targetingKey\)$/ });

  // Many keys: each is the Evaluation API's answer.
  for (let i = 0; i < 8; i++) {
    await page.getByLabel('Targeting key').fill(`key-${i}`);
    await page.getByRole('button', { name: 'Evaluate' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `targetingKey=key-${i}&plan=beta.` })
      .waitFor();
    await sameAsEvaluationApi(`targetingKey=key-${i}&plan=beta`);
  }

  // ---- the context is in the address: a reload shows the same answers ----
  t.match(await page.evaluate(() => location.hash), `#/projects/${kShop}/playground?targetingKey=key-7&plan=beta`);
  await page.reload();
  await page.getByRole('status').filter({ hasText: 'targetingKey=key-7&plan=beta.' }).waitFor();
  t.equal(await page.getByLabel('Targeting key').inputValue(), 'key-7');
  t.equal(await page.getByLabel('Attribute 1 value').inputValue(), 'beta');
  await sameAsEvaluationApi('targetingKey=key-7&plan=beta');
  t.same(await wcagViolations(page), [], 'WCAG 2.2 AA at 1280 px');

  // ---- a multi-environment project: the environment is part of the context ----
  await page.evaluate((h) => (location.hash = h), `#/projects/${kPlatform}/playground`);
  await page.getByRole('heading', { level: 1, name: 'Playground of Platform' }).waitFor();
  await page.getByLabel('Environment').selectOption('production');
  await page.getByLabel('Cohort').fill('qa-team');
  await page.getByRole('button', { name: 'Evaluate' }).click();
  await page.getByRole('status').filter({ hasText: 'in production' }).waitFor();
  shown = await sameAsEvaluationApi('cohort=qa-team&env=production');
  t.match(shown['search-v2'], { enabled: 'on', reason: 'TARGETING_MATCH', why: 'cohort "qa-team" is listed' });

  // ---- a bad context is said on the status line ----
  await page.getByRole('button', { name: 'Add attribute' }).click();
  await page.getByLabel('Attribute 1 name').fill('env');
  await page.getByRole('button', { name: 'Evaluate' }).click();
  await page.locator('#status').filter({ hasText: '"env" is not an attribute' }).waitFor();

  // ---- a phone ----
  await page.setViewportSize({ width: 390, height: 844 });
  await page.evaluate((h) => (location.hash = h), `#/projects/${kShop}/playground?targetingKey=key-1&plan=beta`);
  await page.getByRole('status').filter({ hasText: 'targetingKey=key-1&plan=beta.' }).waitFor();
  t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling at 390 px');
  t.same(await wcagViolations(page), [], 'WCAG 2.2 AA at 390 px');
});

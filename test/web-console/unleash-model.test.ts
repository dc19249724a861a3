// The web console and a flag in Unleash's model (issue 60, item 5), in Chromium as the demo owner: the
// flag page says each environment's strategies in words (parameters, constraints with their operator,
// values, inverted and case-insensitive, segments by name, variants with weights, stickiness and
// payloads, dependencies); its editor changes a rollout and a constraint and reorders the strategies,
// and the save is seen by the Management API and by Unleash's front-end API; a bad value is refused by
// the server, its problem shown beside the field, and nothing changes. axe's WCAG 2.2 AA rules find
// nothing on the page with the editor open, at 1,280 and 390 px, light and dark.
import t from 'tap';
import { call } from '../helpers/http.js';
import { demoConsole, wcagViolationsEverywhere } from '../helpers/web-console.js';

const kParentModel = { strategies: [{ name: 'default' }] };
const kModel = {
  strategies: [
    {
      name: 'flexibleRollout',
      parameters: { rollout: '0', stickiness: 'default', groupId: 'checkout-v3' },
      constraints: [
        { contextName: 'appVersion', operator: 'SEMVER_GT', value: '2.0.0' },
        { contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@example.com'], caseInsensitive: true },
        { contextName: 'country', operator: 'IN', values: ['NO', 'SE'], inverted: true },
      ],
      segments: [1],
      variants: [{ name: 'blue', weight: 1000, stickiness: 'default', payload: { type: 'string', value: 'b' } }],
    },
    { name: 'userWithId', parameters: { userIds: 'alice,bob' } },
  ],
  segments: [{ id: 1, name: 'beta users', constraints: [{ contextName: 'plan', operator: 'IN', values: ['beta'] }] }],
  variants: [
    { name: 'a', weight: 500 },
    { name: 'b', weight: 500 },
  ],
  dependencies: [{ feature: 'parent-gate' }],
};

t.test("an Unleash-model flag's strategies read and edited in the flag page", async (t) => {
  const { base, secret, ownerPage } = await demoConsole(t);
  const token = secret('demo-platform-write');
  const both = (model: unknown) => ({ staging: { enabled: true, unleash: kParentModel }, production: { enabled: true, unleash: model } });
  t.equal(
    (await call(base, 'POST', '/api/v1/flags', { token, body: { name: 'parent-gate', environments: both(kParentModel) } })).status,
    201,
  );
  const made = await call(base, 'POST', '/api/v1/flags', { token, body: { name: 'checkout-v3', environments: both(kModel) } });
  t.equal(made.status, 201, JSON.stringify(made.json));
  const flagId = made.json.id as string;
  const stored = async () => (await call(base, 'GET', `/api/v1/flags/${flagId}`, { token })).json.environments.production.unleash;
  const key = await call(base, 'POST', '/api/v1/client-keys', {
    token,
    body: { name: 'web', uses: ['frontend'], environment: 'production' },
  });
  t.equal(key.status, 201, JSON.stringify(key.json));
  // Whether Unleash's front-end API (as unleash-proxy-client asks it) has the flag on for the context.
  const enabledFor = async (query: string) => {
    const answer = await call(base, 'GET', `/api/frontend?${query}`, { headers: { authorization: key.json.secret } });
    t.equal(answer.status, 200, JSON.stringify(answer.json));
    return (answer.json.toggles as { name: string }[]).some((toggle) => toggle.name === 'checkout-v3');
  };
  const v3 = 'userId=carol&appVersion=3.0.0&email=carol%40EXAMPLE.com&country=DK&plan=beta';
  const v25 = 'userId=carol&appVersion=2.5.0&email=carol%40EXAMPLE.com&country=DK&plan=beta';
  t.equal(await enabledFor(v3), false, 'before: a rollout of 0% lets carol in nowhere');

  const page = await ownerPage();
  let patches = 0;
  page.on('request', (r) => {
    if (r.method() === 'PATCH') patches++;
  });

  // ---- the project page says which states are in Unleash's model ----
  await page.goto(`${base}/console#/projects/prj_DemoPlatform`);
  const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'checkout-v3' }) });
  await row.getByText('Unleash model · 1 strategy', { exact: true }).waitFor();
  await row.getByText('Unleash model · 2 strategies', { exact: true }).waitFor();
  await row.getByRole('link', { name: 'checkout-v3' }).click();
  await page.getByRole('heading', { name: 'checkout-v3', level: 1 }).waitFor();

  // ---- said in words, per environment ----
  const production = page.getByRole('region', { name: 'Unleash strategies in production' });
  await production.waitFor();
  const says = async (text: string) => {
    t.equal(await production.getByText(text, { exact: true }).count(), 1, text);
  };
  t.equal(await page.getByRole('heading', { name: 'Strategy 1 in production: Gradual rollout flexibleRollout' }).count(), 1);
  await says('Lets in 0% of users, sticky on default, group "checkout-v3".');
  await says('appVersion is a version after "2.0.0"');
  await says('email ends with "@example.com" (ignoring case)');
  await says('not: country is one of "NO" or "SE"');
  await says('And in segment beta users: plan is one of "beta".');
  await says('blue: weight 1000 of 1000 (100%), sticky on default, payload string "b"');
  await says('Lets in the users alice, bob.');
  await says('a: weight 500 of 1000 (50%)');
  await says('Only while parent-gate is on.');
  t.equal(await page.getByRole('heading', { name: 'Strategy 1 in staging: Everyone default' }).count(), 1, 'staging has its own');

  // ---- edited: a rollout, a constraint, the order; saved through the PATCH ----
  await production.getByText('Edit strategies in production').click();
  t.same(await wcagViolationsEverywhere(page), [], 'axe: WCAG 2.2 AA with the editor open');
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByLabel('Strategy 1 rollout % in production', { exact: true }).fill('100');
  await page.getByLabel('Strategy 1 constraint 1 operator in production', { exact: true }).selectOption('SEMVER_GTE');
  await page.getByLabel('Strategy 1 constraint 1 value in production', { exact: true }).fill('3.0.0');
  await page.getByLabel('Feature variant 1 weight in production', { exact: true }).fill('700');
  await page.getByRole('button', { name: 'Move down strategy 1 in production' }).click();
  t.equal(
    await page.getByLabel('Strategy 1 strategy in production', { exact: true }).inputValue(),
    'userWithId',
    'the strategies swapped places',
  );
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'PATCH'),
    page.getByRole('button', { name: 'Save strategies in production' }).click(),
  ]);
  await page.locator('#status', { hasText: 'Saved Unleash strategies in production of checkout-v3.' }).waitFor();
  const [rollout, userIds] = kModel.strategies;
  const edited = {
    ...kModel,
    strategies: [
      userIds,
      {
        ...rollout,
        parameters: { ...rollout!.parameters, rollout: '100' },
        constraints: [{ contextName: 'appVersion', operator: 'SEMVER_GTE', value: '3.0.0' }, ...rollout!.constraints!.slice(1)],
      },
    ],
    variants: [{ name: 'a', weight: 700 }, kModel.variants[1]],
  };
  t.same(await stored(), edited, 'the Management API has the edited model, the rest as it was');
  t.equal(await enabledFor(v3), true, 'after: 100% and version 3.0.0 let carol in');
  t.equal(await enabledFor(v25), false, 'after: version 2.5.0 is not at or after 3.0.0');
  await production.getByText('Lets in 100% of users, sticky on default, group "checkout-v3".').waitFor();
  await production.getByText('appVersion is a version at or after "3.0.0"', { exact: true }).waitFor();
  await production.getByText('a: weight 700 of 1200 (58.3%)', { exact: true }).waitFor();

  // ---- a bad value: the server's problem beside the field, nothing changed ----
  await production.getByText('Edit strategies in production').click();
  await page.getByLabel('Strategy 2 rollout % in production', { exact: true }).fill('150');
  const before = patches;
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'PATCH' && r.status() === 400),
    page.getByRole('button', { name: 'Save strategies in production' }).click(),
  ]);
  t.equal(patches, before + 1, 'one PATCH, refused');
  const problem = page.locator('[data-path="strategies[1].parameters.rollout"] .field-error');
  await problem.waitFor();
  t.equal(await problem.textContent(), 'strategies[1].parameters.rollout: a percentage from 0 to 100 is required');
  t.equal(
    await page.getByLabel('Strategy 2 rollout % in production', { exact: true }).getAttribute('aria-invalid'),
    'true',
    'the field is marked invalid, described by the problem',
  );
  await page.locator('#status', { hasText: 'a percentage from 0 to 100 is required' }).waitFor();
  t.same(await stored(), edited, 'nothing changed');
  t.equal(await enabledFor(v3), true, 'and the answers are as they were');

  // ---- a strategy added and one removed, in staging ----
  const staging = page.getByRole('region', { name: 'Unleash strategies in staging' });
  await staging.getByText('Edit strategies in staging').click();
  await page.getByRole('button', { name: 'Add strategy in staging' }).click();
  await page.getByLabel('Strategy 2 rollout % in staging', { exact: true }).fill('25');
  await page.getByRole('button', { name: 'Remove strategy 1 in staging' }).click();
  await page.getByRole('button', { name: 'Save strategies in staging' }).click();
  await page.locator('#status', { hasText: 'Saved Unleash strategies in staging of checkout-v3.' }).waitFor();
  t.same((await call(base, 'GET', `/api/v1/flags/${flagId}`, { token })).json.environments.staging.unleash, {
    strategies: [
      { name: 'flexibleRollout', parameters: { rollout: '25', stickiness: 'default', groupId: 'checkout-v3' }, constraints: [] },
    ],
  });
  await staging.getByText('Lets in 25% of users, sticky on default, group "checkout-v3".').waitFor();

  // ---- changed elsewhere since the page was drawn: not overwritten ----
  await production.getByText('Edit strategies in production').click();
  const elsewhere = { strategies: [{ name: 'default' }] };
  const patched = await call(base, 'PATCH', `/api/v1/flags/${flagId}?env=production`, { token, body: { unleash: elsewhere } });
  t.equal(patched.status, 200, JSON.stringify(patched.json));
  await page.getByLabel('Strategy 1 user ids (comma-separated) in production', { exact: true }).fill('alice,bob,carol');
  const patchesThen = patches;
  await page.getByRole('button', { name: 'Save strategies in production' }).click();
  await page
    .locator('#status', {
      hasText: 'Not saved: the Unleash strategies in production of checkout-v3 were changed since this page was drawn.',
    })
    .waitFor();
  t.equal(patches, patchesThen, 'no PATCH sent');
  t.same(await stored(), elsewhere, 'the change made elsewhere stands');
});

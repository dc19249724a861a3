// The web console never changes what the user did not edit (issue 23): list fields (a flag's cohorts
// and tags, a group flag's flag-wide cohorts, an audience's rule values) keep every item exactly,
// commas and surrounding blanks included, and a state save sends only the fields the user edited.
// Values are made through the APIs, edited in Chromium (playwright-core, Debian's chromium), and read
// back through the Management API and the CLI; the PATCH bodies the page sent are captured as sent.
import type { Browser, Locator } from 'playwright-core';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import {
  consoleCall,
  demoPassword,
  demoSecret,
  ensureChromium,
  kDemoOwner,
  launchChromium,
  seriousViolations,
  signIn,
} from '../helpers/web-console.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';

const kShop = 'prj_DemoWebShop';
const kCohorts = ['Doe, Jane', ' padded '];
const kTags = ['ops, web', ' spaced ', 'plain'];

t.test('list fields keep every item exactly; a save sends only what was edited', async (t) => {
  ensureChromium();
  const server = await startTestServer({ demo: true });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const shopWrite = demoSecret(server.output(), 'demo-write');
  const platformWrite = demoSecret(server.output(), 'demo-platform-write');
  const password = demoPassword(server.output());
  const apiFlag = async (id: string, token: string) => (await call(base, 'GET', `/api/v1/flags/${id}`, { token })).json;

  const created = await call(base, 'POST', '/api/v1/flags', { token: shopWrite, body: { name: 'lists', cohorts: kCohorts, tags: kTags } });
  t.equal(created.status, 201, JSON.stringify(created.json));
  const flagId = created.json.id as string;
  t.same([created.json.cohorts, created.json.tags], [kCohorts, kTags], 'the API stores the lists exactly as sent');
  const group = await call(base, 'POST', '/api/v1/flags', {
    token: platformWrite,
    body: { name: 'group-lists', environments: { production: { cohorts: ['x, y'] } } },
  });
  t.equal(group.status, 201, JSON.stringify(group.json));
  const groupId = group.json.id as string;
  const session = await signIn(base, kDemoOwner, password);
  t.equal((await consoleCall(base, session, 'POST', `flags/${groupId}/cohorts`, { body: { cohorts: kCohorts } })).status, 200);
  const audience = await consoleCall(base, session, 'POST', `projects/${kShop}/audiences`, {
    body: { name: 'people', rules: [{ attribute: 'name', values: kCohorts }] },
  });
  t.equal(audience.status, 200, JSON.stringify(audience.json));
  const audienceRules = async () =>
    (await cli(server.dataDir, ['audience', 'list', kShop])).json.audiences.find((a: { name: string }) => a.name.startsWith('people'))
      .rules;
  t.same(await audienceRules(), [{ attribute: 'name', values: kCohorts }], 'the audience keeps its values exactly');

  const browser: Browser = await launchChromium(t);
  const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  // Generous: a loaded 2-core machine; every wait is on a visible outcome.
  page.setDefaultTimeout(60_000);
  const sent: { url: string; body: unknown }[] = [];
  page.on('request', (r) => {
    if (r.method() === 'PATCH') sent.push({ url: r.url(), body: JSON.parse(r.postData() ?? 'null') });
  });
  /**
   * Clicks a save button and waits for the console's answer to the change it sends, then for `says` in
   * the status line: the status line may still show the same text from the save before.
   */
  const save = async (button: Locator, says: string) => {
    await Promise.all([
      page.waitForResponse((r) => r.request().method() !== 'GET' && new URL(r.url()).pathname.startsWith('/console/api/')),
      button.click(),
    ]);
    await page.getByText(says).waitFor();
  };
  await page.goto(`${base}/console`);
  await page.getByLabel('Email').fill(kDemoOwner);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Organisations and projects' }).waitFor();

  // ---- a flag: only Enabled toggled ----
  await page.goto(`${base}/console#/flags/${flagId}`);
  await page.getByRole('heading', { name: 'lists', level: 1 }).waitFor();
  await page.getByLabel('Enabled').check();
  await save(page.getByRole('button', { name: 'Save', exact: true }), 'Saved state of lists.');
  t.same(
    sent.map((s) => s.body),
    [{ enabled: true }],
    'the PATCH holds only the field edited',
  );
  let flag = await apiFlag(flagId, shopWrite);
  t.equal(flag.enabled, true);
  t.same([flag.cohorts, flag.tags], [kCohorts, kTags], 'cohorts and tags byte-identical after saving only Enabled');
  t.same(await seriousViolations(page), [], 'axe: no serious or critical violation on the flag page');

  // ---- one cohort edited: the other kept exactly ----
  sent.length = 0;
  await page.getByLabel('Cohort 2', { exact: true }).fill('Roe, Richard ');
  await save(page.getByRole('button', { name: 'Save', exact: true }), 'Saved state of lists.');
  t.same(
    sent.map((s) => s.body),
    [{ cohorts: ['Doe, Jane', 'Roe, Richard '] }],
    'only the cohorts are sent, the untouched one as it was',
  );
  flag = await apiFlag(flagId, shopWrite);
  t.same([flag.cohorts, flag.tags, flag.enabled], [['Doe, Jane', 'Roe, Richard '], kTags, true]);

  // ---- one tag removed, one added: the others kept exactly ----
  await page.getByRole('button', { name: 'Remove tag 3' }).click();
  await page.getByRole('button', { name: 'Add tag' }).click();
  await page.getByLabel('Tag 3', { exact: true }).fill('new, tag');
  await save(page.getByRole('button', { name: 'Save tags' }), 'Tags saved.');
  t.same((await apiFlag(flagId, shopWrite)).tags, ['ops, web', ' spaced ', 'new, tag'], 'the untouched tags are exact');
  t.same((await apiFlag(flagId, shopWrite)).cohorts, ['Doe, Jane', 'Roe, Richard '], 'and the cohorts untouched');

  // ---- a group flag: one environment's Enabled, then one flag-wide cohort ----
  sent.length = 0;
  await page.goto(`${base}/console#/flags/${groupId}`);
  await page.getByRole('heading', { name: 'group-lists', level: 1 }).waitFor();
  const staging = page.locator('form', { has: page.getByRole('button', { name: 'Save staging' }) });
  await staging.getByLabel('Enabled').check();
  await save(page.getByRole('button', { name: 'Save staging' }), 'Saved environment staging of group-lists.');
  t.same(
    sent.map((s) => [new URL(s.url).search, s.body]),
    [['?env=staging', { enabled: true }]],
    "the PATCH holds only staging's Enabled",
  );
  let grouped = await apiFlag(groupId, platformWrite);
  t.same(
    [grouped.environments.staging.enabled, grouped.environments.staging.cohorts, grouped.environments.production.cohorts],
    [true, kCohorts, ['x, y']],
    'staging still inherits the flag-wide list exactly; production keeps its own',
  );
  await page.getByLabel('Flag-wide cohort 1', { exact: true }).fill('Roe, Richard');
  await save(page.getByRole('button', { name: 'Save flag-wide cohorts' }), 'Flag-wide cohorts saved.');
  grouped = await apiFlag(groupId, platformWrite);
  t.same(grouped.environments.staging.cohorts, ['Roe, Richard', ' padded '], 'the untouched flag-wide cohort is exact');
  t.same(grouped.environments.production.cohorts, ['x, y']);

  // ---- an audience: renamed only, then one value edited ----
  await page.goto(`${base}/console#/projects/${kShop}/settings`);
  const people = page.locator('form', { has: page.getByRole('group', { name: 'Audience people' }) });
  await people.getByLabel('Audience name').fill('people, renamed');
  await save(people.getByRole('button', { name: 'Save audience' }), 'Audience people, renamed saved.');
  t.same(await audienceRules(), [{ attribute: 'name', values: kCohorts }], "a rename keeps the rule's values exactly");
  t.same(await seriousViolations(page), [], 'axe: no serious or critical violation on the settings page');
  const renamed = page.locator('form', { has: page.getByRole('group', { name: 'Audience people, renamed' }) });
  await renamed.getByLabel('Rule 1 value 1', { exact: true }).fill('Roe, Richard');
  await save(renamed.getByRole('button', { name: 'Save audience' }), 'Audience people, renamed saved.');
  t.same(await audienceRules(), [{ attribute: 'name', values: ['Roe, Richard', ' padded '] }], 'the untouched value is exact');
});

// A project's client keys in the console (issue 96, item 12), in Chromium against the real server: the
// owner makes one with the form, its secret shown once (and never again: the list reads no secret), and
// it opens Unleash's front-end API; revoked after a confirmation, it is refused 401. A viewer sees the
// project's keys with no form and no Revoke, and the writer refuses their revoke sent by hand (403), as
// the Management API's rule says (a person needs a role that may change flags). axe-core on both.
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { demoConsole, seriousViolations, setPassword, signedInPage } from '../helpers/web-console.js';

/** The demo's single-environment project (the browser module's test covers a multi-environment one's form). */
const kProject = 'prj_DemoWebShop';
const kViewer = 'viewer@demo.flagwire.test';
const kViewerPassword = 'viewer password 123';

t.test('client keys: made on their page with the secret shown once, revoked after a confirmation; a viewer only sees them', async (t) => {
  const { browser, server, base, secret, ownerPage } = await demoConsole(t);
  const frontend = async (key: string) => (await call(base, 'GET', '/api/frontend', { headers: { authorization: key } })).status;

  // ---- the owner ----
  const page = await ownerPage();
  await page.goto(`${base}/console#/projects/${kProject}`);
  await page.getByRole('link', { name: 'Client keys' }).click();
  await page.getByRole('heading', { name: 'Client keys of Web shop', level: 1 }).waitFor();
  await page.getByText('No client keys yet.').waitFor();
  await page.getByLabel('Key name').fill('storefront');
  t.equal(await page.getByLabel('Environment').count(), 0, 'a single-environment project: no environment to choose');
  await page.getByRole('button', { name: 'Create client key' }).click();
  await page.getByText('Client key storefront created.').waitFor();
  const key = (await page.locator('#client-key-secret').textContent())!;
  t.match(key, /^fwc_/, 'the new secret is shown');
  t.ok(await page.getByText('it is shown only this once').isVisible(), 'with its warning');
  t.equal(await frontend(key), 200, "the key opens Unleash's front-end API");
  const listed = (await call(base, 'GET', '/api/v1/client-keys', { token: secret('demo-write') })).json.clientKeys;
  t.same(
    listed.map((k: { name: string; environment: string | null; uses: string[] }) => [k.name, k.environment, k.uses]),
    [['storefront', null, ['events', 'frontend']]],
    'made as the form said, with both uses checked',
  );
  t.same(await seriousViolations(page), [], 'axe: no serious or critical violation on the client keys page');

  // Read again: the list names the key and never shows its secret.
  await page.goto(`${base}/console#/projects/${kProject}/tokens`);
  await page.getByRole('heading', { name: 'Tokens of Web shop' }).waitFor();
  await page.getByRole('link', { name: 'Client keys' }).click();
  await page.getByRole('cell', { name: 'storefront', exact: true }).waitFor();
  t.equal(await page.locator('#client-key-secret').count(), 0, 'the secret is not shown again');
  t.notMatch(await page.locator('#page').textContent(), key, 'nor anywhere on the page');

  await page.getByRole('button', { name: 'Revoke storefront' }).click();
  const dialog = page.getByRole('alertdialog', { name: 'Revoke client key storefront?' });
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  t.equal(await frontend(key), 200, 'cancelled: the key still works');
  await page.getByRole('button', { name: 'Revoke storefront' }).click();
  await dialog.getByRole('button', { name: 'Revoke' }).click();
  await page.getByText('Client key storefront revoked.').waitFor();
  t.equal(await frontend(key), 401, 'a revoked key gets 401');
  t.equal(await page.getByRole('button', { name: 'Revoke storefront' }).count(), 0, 'a revoked key offers no Revoke');

  // ---- a viewer ----
  const live = await call(base, 'POST', '/api/v1/client-keys', {
    token: secret('demo-write'),
    body: { name: 'mobile-app', uses: ['frontend'] },
  });
  t.equal(live.status, 201, 'a live key, made over the Management API');
  const orgId = (await cli(server.dataDir, ['org', 'list'])).json.orgs[0].id as string;
  const viewer = await cli(server.dataDir, ['user', 'create', '--email', kViewer, '--name', 'Demo Viewer']);
  await cli(server.dataDir, ['org', 'add-member', orgId, viewer.json.id, '--role', 'viewer']);
  t.equal((await setPassword(server.dataDir, viewer.json.id, `${kViewerPassword}\n`)).code, 0);
  const seen = await signedInPage(browser, base, kViewer, kViewerPassword);
  await seen.goto(`${base}/console#/projects/${kProject}/client-keys`);
  await seen.getByRole('heading', { name: 'Client keys of Web shop', level: 1 }).waitFor();
  await seen.getByRole('cell', { name: 'mobile-app', exact: true }).waitFor();
  t.ok(await seen.getByRole('cell', { name: 'storefront', exact: true }).isVisible(), 'revoked keys are listed too');
  t.equal(await seen.getByRole('button', { name: /Create client key|Revoke/ }).count(), 0, 'a viewer cannot make or revoke keys');
  t.equal(await seen.getByLabel('Key name').count(), 0, 'no form');
  t.same(await seriousViolations(seen), [], "axe: no serious or critical violation on the viewer's page");
  // Sent by hand from the viewer's page (its cookie and CSRF token): the writer refuses it too.
  const refused = await seen.evaluate(async (id) => {
    const session = (await (await fetch('/console/api/session')).json()) as { csrfToken: string };
    const res = await fetch(`/console/api/client-keys/${id}/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Flagwire-CSRF': session.csrfToken },
      body: '{}',
    });
    return res.status;
  }, live.json.id as string);
  t.equal(refused, 403, "the viewer's revoke is refused");
  t.equal(await frontend(live.json.secret as string), 200, 'and the key still works');
});

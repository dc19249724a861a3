// A project's webhooks page in the web console (docs/webhooks.md), in Chromium: a webhook made from the
// page to a real receiver, its secret shown once; a flag change (over the Management API) delivered and
// shown in the page's delivery log as delivered; Redeliver sends the same webhook-id again; a private URL
// refused with the server's words; Delete confirmed in a dialog; a viewer sees the list and the log and
// no control. Checked from outside the browser too (the Management API lists what the page made).
import type { Page } from 'playwright-core';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';
import {
  consoleCall,
  demoPassword,
  demoSecret,
  kDemoOwner,
  launchChromium,
  seriousViolations,
  setPassword,
  signedInPage,
  signIn,
} from '../helpers/web-console.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const kViewer = 'viewer@demo.flagwire.test';
const kViewerPassword = 'viewer password 123';

t.test('webhooks made, delivered, redelivered and deleted from the webhooks page; a viewer only reads', async (t) => {
  const browser = await launchChromium(t);
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  // The receiver listens on loopback: the allow-list lets exactly that through, and nothing private.
  const server = await startTestServer({ demo: true, env: { FLAGWIRE_WEBHOOK_ALLOW: '127.0.0.1' } });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const shopWrite = demoSecret(server.output(), 'demo-write');
  const projectId = (await call(base, 'GET', '/api/v1/token', { token: shopWrite })).json.project.id as string;
  const webhooks = async () => (await call(base, 'GET', '/api/v1/webhooks', { token: shopWrite })).json.webhooks as Record<string, any>[];

  const open = async (email: string, password: string): Promise<Page> => {
    const page = await signedInPage(browser, base, email, password);
    await page.goto(`${base}/console#/projects/${projectId}`);
    await page.getByRole('navigation', { name: 'Project' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: /^Webhooks of /, level: 1 }).waitFor();
    return page;
  };
  const page = await open(kDemoOwner, demoPassword(server.output()));
  await page.getByText('No webhooks yet.').waitFor();
  const create = async (url: string) => {
    await page.getByLabel('URL').fill(url);
    await page.getByRole('button', { name: 'Create webhook' }).click();
  };

  // ---- a private address: refused with the server's words, nothing made ----
  await create('http://10.1.2.3/x');
  await page
    .getByText('Invalid request: url: 10.1.2.3 is a private address: not sent (FLAGWIRE_WEBHOOK_ALLOW can let it through)')
    .waitFor();
  t.same(await webhooks(), [], 'nothing made');

  // ---- made to the receiver (flag events only, Slack's format unchosen): the secret shown once ----
  await page.getByLabel('token (made, rotated, revoked)').uncheck();
  await page.getByLabel('plan (scheduled changes, rollouts)').uncheck();
  await create(receiver.url);
  await page.getByText(`Webhook to ${receiver.url} created.`).waitFor();
  const secretBox = page.getByRole('region', { name: 'New webhook secret' });
  await secretBox.getByText(/shown only this once/).waitFor();
  const secret = (await page.locator('#webhook-secret').textContent())!;
  t.match(secret, /^whsec_/);
  const made = await webhooks();
  t.match(made, [{ id: /^whk_/, url: receiver.url, events: ['flag'], format: 'standard', createdBy: /^user:usr_/ }], 'the API lists it');
  t.notOk('secret' in made[0]!, 'the API shows no secret');
  const row = page.getByRole('row', { name: new RegExp(receiver.url.replace(/[.]/g, '\\.')) }).first();
  await row.getByRole('cell', { name: 'flag', exact: true }).waitFor();
  await row.getByRole('cell', { name: /^Demo Owner \(user:usr_/ }).waitFor();
  await page.reload();
  await page.getByRole('heading', { name: /^Webhooks of /, level: 1 }).waitFor();
  t.equal(await page.getByText(secret).count(), 0, 'the secret is not shown again');

  // ---- a flag change over the Management API: delivered, and shown in the log as delivered ----
  const flag = await call(base, 'POST', '/api/v1/flags', { token: shopWrite, body: { name: 'hooked', enabled: true } });
  t.equal(flag.status, 201, flag.text);
  await receiver.waitFor(1);
  const messageId = receiver.received[0]!.headers['webhook-id'] as string;
  t.match(messageId, /^msg_/);
  t.match(JSON.parse(receiver.received[0]!.body), { type: 'flag.create', data: { flag: { name: 'hooked' } } });
  const log = page.getByRole('region', { name: `Deliveries to ${receiver.url}` });
  const delivery = log.getByRole('row', { name: new RegExp(messageId) });
  for (let i = 0; (await delivery.getByText('delivered', { exact: true }).count()) === 0; i++) {
    if (i > 150) throw new Error('the delivery never showed as delivered');
    await new Promise((r) => setTimeout(r, 200));
    await page.reload();
    await log.waitFor();
  }
  await delivery.getByRole('cell', { name: 'flag.create' }).waitFor();
  await delivery.getByRole('cell', { name: 'HTTP 200' }).waitFor();
  await delivery.getByRole('cell', { name: /^\d+ ms$/ }).waitFor();
  t.same(await seriousViolations(page), [], 'axe: no serious or critical violation on the webhooks page with a delivery log');

  // ---- Redeliver: the receiver gets the same webhook-id again ----
  await delivery.getByRole('button', { name: `Redeliver ${messageId}` }).click();
  await page.getByText(`Delivery ${messageId} (flag.create) queued again: it is sent now, with the same webhook-id.`).waitFor();
  await receiver.waitFor(2);
  t.equal(receiver.received[1]!.headers['webhook-id'], messageId, 'the same message again');
  t.equal(receiver.received[1]!.body, receiver.received[0]!.body, 'the same body');

  // ---- a viewer: the list and the log, no form and no button ----
  const orgId = (await cli(server.dataDir, ['org', 'list'])).json.orgs[0].id as string;
  const viewer = await cli(server.dataDir, ['user', 'create', '--email', kViewer, '--name', 'Demo Viewer']);
  t.equal((await cli(server.dataDir, ['org', 'add-member', orgId, viewer.json.id, '--role', 'viewer'])).code, 0);
  t.equal((await setPassword(server.dataDir, viewer.json.id, `${kViewerPassword}\n`)).code, 0);
  const seen = await open(kViewer, kViewerPassword);
  await seen
    .getByRole('region', { name: `Deliveries to ${receiver.url}` })
    .getByText(messageId)
    .waitFor();
  await seen.getByText('Making, deleting and redelivering webhooks needs a role that may change flags').waitFor();
  t.equal(
    await seen
      .getByRole('button')
      .filter({ hasText: /Create webhook|Delete|Redeliver/ })
      .count(),
    0,
    'a viewer gets no button',
  );
  t.equal(await seen.getByLabel('URL').count(), 0, 'a viewer gets no form');
  t.same(await seriousViolations(seen), [], 'axe: no serious or critical violation on the webhooks page as a viewer');
  // Sent by hand as the viewer (their cookie and CSRF token): the writer refuses it in its words.
  const asViewer = await signIn(base, kViewer, kViewerPassword);
  const refused = await consoleCall(base, asViewer, 'POST', `projects/${projectId}/webhooks`, { body: { url: receiver.url } });
  t.equal(refused.status, 403, JSON.stringify(refused.json));
  t.match(refused.json.detail, /Changing flags needs the Editor, Admin or Owner role/);
  const notRedelivered = await consoleCall(base, asViewer, 'POST', `deliveries/${messageId}/redeliver`);
  t.equal(notRedelivered.status, 403, JSON.stringify(notRedelivered.json));
  t.equal((await webhooks()).length, 1, 'nothing made by the viewer');

  // ---- Delete: a dialog asks first; dismissed, nothing happens; accepted, it is gone ----
  const deleteDialog = page.getByRole('alertdialog', { name: `Delete the webhook to ${receiver.url}?` });
  await page.getByRole('button', { name: `Delete webhook ${receiver.url}` }).click();
  await deleteDialog.getByRole('button', { name: 'Cancel' }).click();
  await deleteDialog.waitFor({ state: 'detached' });
  t.equal((await webhooks()).length, 1, 'dismissed: still there');
  await page.getByRole('button', { name: `Delete webhook ${receiver.url}` }).click();
  await deleteDialog.getByRole('button', { name: 'Delete' }).click();
  await page.getByText(`Webhook to ${receiver.url} deleted.`).waitFor();
  await page.getByText('No webhooks yet.').waitFor();
  t.same(await webhooks(), [], 'the API lists none');
});

// What a change request would alter, in the web console (issue 54, item 1; docs/approvals.md: What is
// guarded), in Chromium against the real server: production guarded, a flag off there that an approved
// scheduled change and a token's pending request will both turn on; renaming it on its page is held,
// naming both (`alters`), and the status line links to the request. The request's page lists them under "What it alters", each linked: the
// pending request to its page, the scheduled change to its flag's page, which lists it. axe-core's WCAG
// 2.2 AA rules pass on that page at 1,280 and 390 px, light and dark.
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { demoConsole, setPassword, signedInPage, visit, wcagViolationsEverywhere } from '../helpers/web-console.js';

const kPlatform = 'prj_DemoPlatform';

t.test("a request's page links the plans and requests it would alter; axe", async (t) => {
  const { browser, server, base, secret } = await demoConsole(t);
  const dir = server.dataDir;
  const ok = async (args: string[]): Promise<any> => {
    const r = await cli(dir, args);
    if (r.code !== 0) throw new Error(`flagwire ${args.join(' ')}: exit ${r.code} ${r.stdout} ${r.stderr}`);
    return r.json;
  };
  const orgId = (await ok(['org', 'list'])).orgs[0].id as string;
  const adminId = (await ok(['user', 'create', '--email', 'al@demo.flagwire.test', '--name', 'Al Admin'])).id as string;
  await ok(['org', 'add-member', orgId, adminId, '--role', 'admin']);
  t.equal((await setPassword(dir, adminId, 'admin password 123\n')).code, 0);

  const token = secret('demo-platform-write');
  const made = await call(base, 'POST', '/api/v1/flags', { token, body: { name: 'checkout-v3', environments: { production: {} } } });
  t.equal(made.status, 201, made.text);
  const flagId = made.json.id as string;
  await ok(['approvals', 'set', kPlatform, '--env', 'production', '--required', '1']);

  // The approved scheduled change: asked for by the token, approved by the admin.
  const at = Date.now() + 24 * 3_600_000;
  const asked = await call(base, 'POST', `/api/v1/flags/${flagId}/schedules?env=production`, {
    token,
    body: { at, patch: { enabled: true, trafficPercentage: 100 } },
  });
  t.equal(asked.status, 202, asked.text);
  await ok(['request', 'approve', asked.json.changeRequest.id, '--version', String(asked.json.changeRequest.version), '--as', adminId]);
  const [plan] = (await ok(['schedule', 'list', kPlatform])).schedules.filter((s: any) => s.flagId === flagId);
  // The token's pending request.
  const pending = await call(base, 'PATCH', `/api/v1/flags/${flagId}?env=production`, { token, body: { enabled: true } });
  t.equal(pending.status, 202, pending.text);
  const pendingRequest = pending.json.changeRequest;

  // The admin renames it on its page (the owner would edit the token's request: the token is theirs):
  // held, and the status line links to the request.
  const admin = await signedInPage(browser, base, 'al@demo.flagwire.test', 'admin password 123');
  await visit(admin, `#/flags/${flagId}`, 'checkout-v3');
  await admin.getByLabel('New name').fill('checkout-v4');
  await admin.getByRole('button', { name: 'Save name' }).click();
  await admin.locator('#status').filter({ hasText: 'Not applied' }).waitFor();
  await admin.locator('#status').getByRole('link', { name: 'Open the change request' }).click();
  await admin.getByRole('heading', { level: 1, name: /^Change request: / }).waitFor();
  const request = (await ok(['request', 'show', admin.url().split('/').pop()!])) as { alters: string[] };
  t.same([...request.alters].sort(), [plan.id, pendingRequest.id].sort(), 'the request names both');
  t.equal((await ok(['flag', 'list', kPlatform])).flags.filter((f: any) => f.name === 'checkout-v3').length, 1, 'the flag as it was');

  const alters = admin.getByRole('region', { name: 'What it alters' });
  const toRequest = alters.getByRole('link', { name: `Change request: ${pendingRequest.title}` });
  const toPlan = alters.getByRole('link', { name: 'Scheduled change of checkout-v3 in production' });
  t.equal(await toRequest.getAttribute('href'), `#/requests/${pendingRequest.id}`, 'the pending request, linked to its page');
  t.equal(await toPlan.getAttribute('href'), `#/flags/${flagId}`, "the scheduled change, linked to its flag's page");
  t.match(await alters.textContent(), `(${plan.id})`, 'the plan named by its id too');
  t.same(await wcagViolationsEverywhere(admin), [], 'axe WCAG 2.2 AA: a request that alters others');
  await admin.setViewportSize({ width: 1200, height: 900 });

  await toRequest.click();
  await admin.getByRole('heading', { level: 1, name: `Change request: ${pendingRequest.title}`, exact: true }).waitFor();
  await admin.goBack();
  await toPlan.click();
  await admin.getByRole('heading', { level: 1, name: 'checkout-v3', exact: true }).waitFor();
  t.pass("the links lead to the request's page and the flag's");
});

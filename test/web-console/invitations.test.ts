// Mail and membership in the web console (issue 23, item 5), from outside: the real server, the CLI and
// headless Chromium. The owner of organisation A cannot make user X a member by naming X's user id (a
// role change is for members only): adding someone is an invitation, and only X's acceptance, in X's
// own browser, makes X a member. At no point, before or after the acceptance, does A's owner see any of
// X's mail (here a denial notice about organisation B: its token's name and id, B's project, the
// request path); X sees it, and A's owner still sees the mail addressed to them about A.
import type { Browser } from 'playwright-core';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import {
  consoleCall,
  demoPassword,
  demoSecret,
  ensureChromium,
  kDemoOwner,
  launchChromium,
  setPassword,
  signIn,
  type WebSession,
} from '../helpers/web-console.js';
import { call } from '../helpers/http.js';
import { startTestServer } from '../helpers/server.js';

const kX = 'xavier@other.test';
const kXPassword = 'xavier password 123';
const kShop = 'prj_DemoWebShop';

interface Message {
  to: string;
  subject: string;
  text: string;
}

t.test('an organisation owner cannot add a person without consent, nor read their mail', async (t) => {
  ensureChromium();
  const server = await startTestServer({ demo: true });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const dir = server.dataDir;
  const orgA = (await cli(dir, ['org', 'list'])).json.orgs[0].id as string;

  // X owns organisation B, whose read token is refused on a write route: a denial notice to X about B.
  const x = (await cli(dir, ['user', 'create', '--email', kX, '--name', 'Xavier'])).json.id as string;
  const orgB = (await cli(dir, ['org', 'create', '--name', 'Other Org', '--plan', 'teams'])).json.id as string;
  t.equal((await cli(dir, ['org', 'add-member', orgB, x, '--role', 'owner'])).code, 0);
  const projectB = (await cli(dir, ['project', 'create', '--name', 'Secret project', '--org', orgB])).json.id as string;
  const tokenB = (await cli(dir, ['token', 'create', projectB, '--as', x, '--name', 'b-deploy', '--permission', 'read'])).json as {
    id: string;
    secret: string;
  };
  t.equal((await call(base, 'POST', '/api/v1/flags', { token: tokenB.secret, body: { name: 'nope' } })).status, 403);
  // And a read token of A refused the same way: a notice to A's owner about A.
  const readA = demoSecret(server.output(), 'demo-read');
  t.equal((await call(base, 'POST', '/api/v1/flags', { token: readA, body: { name: 'nope' } })).status, 403);
  const outbox = async () => (await cli(dir, ['mail', 'list'])).json.messages as Message[];
  // Token activity reaches the writer every second; 60 s only catches a hang.
  for (let i = 0; i < 120 && (await outbox()).filter((m) => m.to === kX || m.to === kDemoOwner).length < 2; i++)
    await new Promise((r) => setTimeout(r, 500));
  t.ok(
    (await outbox()).some((m) => m.to === kX && m.text.includes(tokenB.id)),
    "the outbox holds X's notice about B",
  );

  const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
  const members = async () =>
    ((await consoleCall(base, owner, 'GET', `orgs/${orgA}/members`)).json.members as { userId: string; role: string }[]).map(
      (m) => m.userId,
    );
  /** Nothing of X's mail in A's owner's mail, in any form; A's own notice is there. */
  const expectNoLeak = async (when: string) => {
    const answer = await consoleCall(base, owner, 'GET', 'mail');
    t.equal(answer.status, 200, `${when}: A's owner reads their mail`);
    const raw = JSON.stringify(answer.json);
    for (const secret of [kX, tokenB.id, 'b-deploy', 'Secret project', orgB])
      t.notOk(raw.includes(secret), `${when}: A's owner sees nothing of "${secret}"`);
    t.ok(
      (answer.json.messages as Message[]).some((m) => m.to === kDemoOwner && m.subject.includes('demo-read')),
      `${when}: A's owner sees their own notice about A`,
    );
  };
  await expectNoLeak('before anything');

  // ---- naming X's user id does not make X a member ----
  const added = await consoleCall(base, owner, 'POST', `orgs/${orgA}/members`, { body: { userId: x, role: 'viewer' } });
  t.equal(added.status, 400, 'a role for a non-member is refused');
  t.equal(added.json.error, 'Invalid request');
  t.match(added.json.detail, /not a member.*invit/i, 'and the answer says to invite');
  t.notOk((await members()).includes(x), 'X is not a member of A');
  await expectNoLeak('after the refused add');

  // ---- an invitation: pending until X accepts ----
  const invited = await consoleCall(base, owner, 'POST', `orgs/${orgA}/invitations`, {
    body: { email: 'Xavier@Other.test', role: 'editor' },
  });
  t.equal(invited.status, 200, `the invitation is made: ${JSON.stringify(invited.json)}`);
  const listing = await consoleCall(base, owner, 'GET', `orgs/${orgA}/members`);
  t.notOk(
    (listing.json.members as { userId: string }[]).some((m) => m.userId === x),
    'an invitation is not a membership',
  );
  t.match(listing.json.invitations, [{ email: 'xavier@other.test', role: 'editor' }], 'the members page lists the pending invitation');
  await expectNoLeak('while the invitation is pending');
  const audit = async () => (await cli(dir, ['audit', kShop, '--limit', '5'])).json.entries as { actor: string; action: string }[];
  t.match((await audit())[0], { action: 'member.invite' }, 'the invitation is audited');

  // Someone else (A's owner with X's invitation id) cannot accept it for X.
  const stolen = await consoleCall(base, owner, 'POST', `invitations/${invited.json.id}/accept`);
  t.equal(stolen.status, 404, 'an invitation addressed to someone else is not found');
  t.notOk((await members()).includes(x));

  // ---- X accepts in the browser ----
  t.equal((await setPassword(dir, x, `${kXPassword}\n`)).code, 0);
  const browser: Browser = await launchChromium(t);
  const page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(60_000);
  await page.goto(`${base}/console`);
  await page.getByLabel('Email').fill(kX);
  await page.getByLabel('Password').fill(kXPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Organisations and projects' }).waitFor();
  await page.getByRole('heading', { name: 'Invitations' }).waitFor();
  t.notOk(await page.getByRole('link', { name: 'Web shop' }).isVisible(), "before accepting, A's projects are not X's");
  await page.getByRole('button', { name: 'Accept the invitation to Demo Org' }).click();
  await page.getByText('You are now editor of Demo Org.').waitFor();
  await page.getByRole('link', { name: 'Web shop' }).waitFor();
  t.ok(await page.getByRole('heading', { name: 'Demo Org', level: 2 }).isVisible(), 'X sees organisation A');
  t.equal(await page.getByRole('heading', { name: 'Invitations' }).count(), 0, 'and no pending invitation');

  const roles = Object.fromEntries(
    ((await consoleCall(base, owner, 'GET', `orgs/${orgA}/members`)).json.members as { userId: string; role: string }[]).map((m) => [
      m.userId,
      m.role,
    ]),
  );
  t.equal(roles[x], 'editor', 'X is a member of A with the invited role');
  t.match((await audit())[0], { actor: `user:${x}`, action: 'member.accept' }, 'the acceptance is audited as X');
  const again = await consoleCall(
    base,
    (await signIn(base, kX, kXPassword)) as WebSession,
    'POST',
    `invitations/${invited.json.id}/accept`,
  );
  t.equal(again.status, 404, 'an invitation is accepted once');

  await expectNoLeak('after X accepted');

  // X reads X's own mail about B (X belongs to B), in the browser.
  await page.goto(`${base}/console#/mail`);
  await page.getByRole('heading', { name: 'Your mail' }).waitFor();
  await page.getByRole('heading', { name: 'Flagwire: API token "b-deploy" was refused' }).waitFor();
  t.equal(await page.getByText('demo-read').count(), 0, "X does not see A's owner's mail");
});

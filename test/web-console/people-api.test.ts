// The console's people endpoints from outside, on the real server: an invitation's mail and its link
// (POST /console/api/join: no session; a bad password 400, a wrong or used token the same 404, a used
// link signs its user in; POST join/invitation names the organisation, the address and the role), creating a project (session, CSRF, Admin or Owner, another organisation's
// 404, bad input 400), and creating an organisation, on only where FLAGWIRE_CONSOLE_CREATE_ORGS is.
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { consoleCall, demoPassword, kDemoOwner, setPassword, signIn, type WebSession } from '../helpers/web-console.js';
import { startTestServer } from '../helpers/server.js';

/** The join link's parts in the newest mail to `to`, read from the outbox as the operator does. */
async function joinLink(dir: string, to: string): Promise<{ invitationId: string; token: string }> {
  const messages = (await cli(dir, ['mail', 'list'])).json.messages as { to: string; text: string }[];
  const text = messages.filter((m) => m.to === to).at(-1)?.text ?? '';
  const m = /\/console\/#\/join\/([^/\s]+)\/(\S+)/.exec(text);
  if (m === null) throw new Error(`no join link to ${to} in:\n${text}`);
  return { invitationId: m[1]!, token: m[2]! };
}

t.test('invitation links, projects and organisations (FLAGWIRE_CONSOLE_CREATE_ORGS=on)', async (t) => {
  const server = await startTestServer({ demo: true, env: { FLAGWIRE_CONSOLE_CREATE_ORGS: 'on' } });
  t.teardown(() => server.stop());
  const base = server.baseUrl;
  const dir = server.dataDir;
  const owner = await signIn(base, kDemoOwner, demoPassword(server.output()));
  const orgA = (await cli(dir, ['org', 'list'])).json.orgs[0].id as string;

  t.equal(
    (await consoleCall(base, owner, 'POST', `orgs/${orgA}/invitations`, { body: { email: 'Nia@New.test', role: 'editor' } })).status,
    200,
  );
  const link = await joinLink(dir, 'nia@new.test');
  const join = (body: Record<string, unknown>, origin?: string) => consoleCall(base, null, 'POST', 'join', { body, origin });
  const good = { ...link, name: 'Nia', password: 'nia password 12' };
  t.equal((await join(good, 'http://evil.test')).status, 403, 'another origin is refused');
  const short = await join({ ...good, password: 'too short' });
  t.equal(short.status, 400);
  t.match(short.json.detail, 'at least 12 characters');
  t.equal((await join({ ...good, name: 7 })).status, 400, 'fields are strings');
  const wrong = await join({ ...good, token: `${link.token}x` });
  t.equal(wrong.status, 404);
  const unknown = await join({ ...good, invitationId: 'inv_nope' });
  t.equal(unknown.status, 404);
  t.equal(wrong.json.error, unknown.json.error, 'a wrong token is answered as an unknown invitation is');
  t.equal((await join({ ...good, invitationId: 'i'.repeat(5000) })).status, 404, 'an id too long for a key');
  // What the join page reads first: the organisation, the address and the role, for the link's token only.
  const invitation = (body: Record<string, unknown>, origin?: string) =>
    consoleCall(base, null, 'POST', 'join/invitation', { body, origin });
  const read = await invitation(link);
  t.equal(read.status, 200, JSON.stringify(read.json));
  t.match(read.json, { orgName: 'Demo Org', email: 'nia@new.test', role: 'editor', expiresAt: Number });
  t.equal((await invitation(link, 'http://evil.test')).status, 403, 'another origin is refused');
  const misread = await invitation({ ...link, token: `${link.token}x` });
  t.same([misread.status, misread.json.error], [404, unknown.json.error], 'a wrong token reads as an unknown invitation');
  t.equal((await invitation({ invitationId: link.invitationId })).status, 400, 'both fields are needed');
  const joined = await join(good);
  t.equal(joined.status, 200);
  t.equal(joined.json.user.email, 'nia@new.test');
  const cookie = (joined.headers.get('set-cookie') ?? '').split(';')[0]!;
  t.match(cookie, /^flagwire_session=\w{43}$/, 'signed in');
  const nia: WebSession = { cookie, csrf: joined.json.csrfToken, setCookie: '' };
  const home = await consoleCall(base, nia, 'GET', 'home');
  t.strictSame(
    home.json.orgs.map((o: { id: string; role: string }) => [o.id, o.role]),
    [[orgA, 'editor']],
  );
  t.equal((await join(good)).status, 404, 'the link works once');
  t.equal((await invitation(link)).status, 404, 'and reads as none once used');
  t.equal((await signIn(base, 'nia@new.test', 'nia password 12')).csrf.length > 0, true, 'the password signs in');

  // Projects: an Admin or Owner of the organisation, through the session and CSRF checks.
  const project = { name: 'Console made', kind: 'multi', environments: ['dev', 'prod'] };
  t.equal((await consoleCall(base, null, 'POST', `orgs/${orgA}/projects`, { body: project })).status, 401);
  t.equal((await consoleCall(base, owner, 'POST', `orgs/${orgA}/projects`, { body: project, csrf: false })).status, 403);
  const made = await consoleCall(base, owner, 'POST', `orgs/${orgA}/projects`, { body: project });
  t.equal(made.status, 200);
  t.strictSame([made.json.orgId, made.json.kind, made.json.environments], [orgA, 'multi', ['dev', 'prod']]);
  const byEditor = await consoleCall(base, nia, 'POST', `orgs/${orgA}/projects`, { body: { name: 'Mine', kind: 'single' } });
  t.equal(byEditor.status, 403);
  t.equal(byEditor.json.error, 'Forbidden');
  for (const bad of [
    { name: '', kind: 'single' },
    { name: 'X', kind: 'both' },
    { name: 'X', kind: 'single', environments: ['dev'] },
    { name: 'Console made', kind: 'single' },
  ])
    t.equal((await consoleCall(base, owner, 'POST', `orgs/${orgA}/projects`, { body: bad })).status, 400, JSON.stringify(bad));

  // Organisations: anyone signed in, who becomes its Owner; and no one else's organisation for projects.
  const org = await consoleCall(base, nia, 'POST', 'orgs', { body: { name: 'Nia Labs' } });
  t.equal(org.status, 200);
  t.equal((await consoleCall(base, nia, 'GET', 'home')).json.canCreateOrgs, true);
  t.equal((await consoleCall(base, nia, 'POST', `orgs/${org.json.id}/projects`, { body: { name: 'Lab', kind: 'single' } })).status, 200);
  t.equal(
    (await consoleCall(base, owner, 'POST', `orgs/${org.json.id}/projects`, { body: { name: 'X', kind: 'single' } })).status,
    404,
    "another's organisation",
  );
  t.equal((await consoleCall(base, nia, 'POST', 'orgs', { body: { name: 'nia labs' } })).status, 400, 'names are unique');
  t.equal((await consoleCall(base, nia, 'POST', 'orgs', { body: {} })).status, 400);
});

t.test('FLAGWIRE_CONSOLE_CREATE_ORGS off (the default): no organisations from the console', async (t) => {
  const server = await startTestServer({ demo: true });
  t.teardown(() => server.stop());
  const owner = await signIn(server.baseUrl, kDemoOwner, demoPassword(server.output()));
  t.equal((await consoleCall(server.baseUrl, owner, 'GET', 'home')).json.canCreateOrgs, false);
  const refused = await consoleCall(server.baseUrl, owner, 'POST', 'orgs', { body: { name: 'Nope' } });
  t.equal(refused.status, 403);
  t.equal(refused.json.error, 'Forbidden');
  t.equal((await cli(server.dataDir, ['org', 'list'])).json.orgs.length, 1, 'nothing made');
  // An address with a user is mailed sign-in advice and no link.
  const x = (await cli(server.dataDir, ['user', 'create', '--email', 'x@x.test'])).json.id as string;
  t.equal((await setPassword(server.dataDir, x, 'x password 1234\n')).code, 0);
  const orgA = (await cli(server.dataDir, ['org', 'list'])).json.orgs[0].id as string;
  t.equal(
    (await consoleCall(server.baseUrl, owner, 'POST', `orgs/${orgA}/invitations`, { body: { email: 'x@x.test', role: 'viewer' } })).status,
    200,
  );
  const mail = ((await cli(server.dataDir, ['mail', 'list'])).json.messages as { to: string; text: string }[]).filter(
    (m) => m.to === 'x@x.test',
  );
  t.equal(mail.length, 1);
  t.match(mail[0]!.text, /Sign in to the Flagwire console at http:\/\/\S+\/console\/ and accept/);
  t.notMatch(mail[0]!.text, '#/join/');
});

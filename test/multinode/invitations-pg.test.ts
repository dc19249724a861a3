// Invitations are records of the system of record: on two nodes sharing PostgreSQL, an invitation made
// on one is seen and accepted on the other, the membership it gives reaches both, and a node started
// later on an empty data dir (a full copy) holds the pending invitations and none of the answered ones;
// the link mailed to an address with no user, made on one node, creates that user on the copy.
import t from 'tap';
import { ok } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { consoleCall, setPassword, signIn } from '../helpers/web-console.js';
import { sharedPostgres } from '../helpers/postgres.js';
import type { TestServer } from '../helpers/server.js';
import { seedInProcess, startReadyNodes, until } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

t.test('an invitation made on one node is accepted on another', async (t) => {
  const url = await pg.newDatabase();
  const seeded = await seedInProcess(t, url);
  // The console's runs that need no stdin in this process (cli's inProcess): a console process is about 0.5 CPU s.
  const x = await ok(t, tempDir(t), ['user', 'create', '--email', 'x@other.test', '--database', url], { inProcess: true });
  t.equal((await setPassword(tempDir(t), seeded.ownerId, 'the owner of acme\n', ['--database', url])).code, 0);
  t.equal((await setPassword(tempDir(t), x.id, 'x of another org\n', ['--database', url])).code, 0);
  const [a, b] = (await startReadyNodes(t, url, 2)) as [TestServer, TestServer];

  const owner = await signIn(a.baseUrl, 'owner@acme.test', 'the owner of acme');
  const invited = await consoleCall(a.baseUrl, owner, 'POST', `orgs/${seeded.orgId}/invitations`, {
    body: { email: 'x@other.test', role: 'viewer' },
  });
  t.equal(invited.status, 200, `invited on A: ${JSON.stringify(invited.json)}`);
  t.equal(
    (
      await consoleCall(a.baseUrl, owner, 'POST', `orgs/${seeded.orgId}/invitations`, {
        body: { email: 'later@other.test', role: 'editor' },
      })
    ).status,
    200,
  );

  const onB = await signIn(b.baseUrl, 'x@other.test', 'x of another org');
  const home = async () =>
    (await consoleCall(b.baseUrl, onB, 'GET', 'home')).json as { orgs: { id: string }[]; invitations: { id: string }[] };
  await until(async () => (await home()).invitations.length === 1, 60_000, 'the invitation on B');
  t.same((await home()).orgs, [], 'X is not a member before accepting');
  const accepted = await consoleCall(b.baseUrl, onB, 'POST', `invitations/${invited.json.id}/accept`);
  t.same(accepted.json, { orgId: seeded.orgId, userId: x.id, role: 'viewer' }, 'accepted on B');
  t.same(
    (await home()).orgs.map((o) => o.id),
    [seeded.orgId],
    'B shows the organisation at once',
  );
  const membersOnA = async () =>
    (await consoleCall(a.baseUrl, owner, 'GET', `orgs/${seeded.orgId}/members`)).json as {
      members: { userId: string; role: string }[];
      invitations: { email: string }[];
    };
  await until(async () => (await membersOnA()).members.some((m) => m.userId === x.id), 60_000, 'the membership on A');
  t.same(
    (await membersOnA()).invitations.map((i) => i.email),
    ['later@other.test'],
    'A lists only the invitation still pending',
  );

  const [c] = (await startReadyNodes(t, url, 1)) as [TestServer];
  const onC = await signIn(c.baseUrl, 'owner@acme.test', 'the owner of acme');
  const fromCopy = (await consoleCall(c.baseUrl, onC, 'GET', `orgs/${seeded.orgId}/members`)).json as {
    members: { userId: string; role: string }[];
    invitations: { email: string }[];
  };
  t.equal(fromCopy.members.find((m) => m.userId === x.id)?.role, 'viewer', 'a node copying everything has the membership');
  t.same(
    fromCopy.invitations.map((i) => i.email),
    ['later@other.test'],
    'and the pending invitation, not the accepted one',
  );

  // The join link's hash travels with the invitation: the link made on A works on the full copy C.
  const mail = (await ok(t, tempDir(t), ['mail', 'list', '--database', url], { inProcess: true })).messages as {
    to: string;
    text: string;
  }[];
  const [, invitationId, token] = /#\/join\/(\S+)\/(\S+)/.exec(mail.find((m) => m.to === 'later@other.test')!.text)!;
  const joined = await consoleCall(c.baseUrl, null, 'POST', 'join', {
    body: { invitationId, token, name: 'Later', password: 'later of another org' },
  });
  t.equal(joined.status, 200, `joined on C: ${JSON.stringify(joined.json)}`);
  await until(
    async () => (await membersOnA()).members.some((m) => m.userId === joined.json.user.id && m.role === 'editor'),
    10_000,
    'the new member on A',
  );
  t.same((await membersOnA()).invitations, [], 'and no invitation pending');
});

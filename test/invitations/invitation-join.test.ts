// The mailed invitation link and creating from the console, in-process against a real store: the
// invitation's mail (a one-time link for an address no user has, sign-in advice for one that has), the
// link's token kept only as a hash and good once, until the invitation expires, is answered or is
// replaced; a password hash the writer did not get from hashPassword refused; and projectCreate and
// orgCreate given the console's signed-in user.
import t from 'tap';
import { hashSecret } from '../../src/model/ids.js';
import { kInvitationLifetimeMs } from '../../src/model/invitations.js';
import { hashPassword } from '../../src/model/passwords.js';
import type { TestContext } from '../helpers/cli.js';
import { commandStore } from '../helpers/command-store.js';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { getInvitation } from '../../src/model/records/invitation-records.js';
import { listMail } from '../../src/model/records/mail-records.js';
import { getRole } from '../../src/model/records/member-records.js';
import { getCredential } from '../../src/model/records/session-records.js';

const at = Date.UTC(2030, 0, 1);
const kConsoleUrl = 'http://flagwire.test/console/';

async function setUp(t: TestContext) {
  const { store, run, refused, member } = commandStore(t, 'flagwire-join-', at);
  const org = run('orgCreate', { principal: kOperator, name: 'Acme', plan: 'teams' });
  const owner = member(org.id, 'owner', 'owner@a.test', 'Olive Owner');
  const project = run('projectCreate', { principal: kOperator, name: 'P', orgId: org.id });
  const invite = (email: string, role = 'editor', now = at) =>
    run('orgInvite', { orgId: org.id, email, role, principal: principalOf(owner.id), consoleUrl: kConsoleUrl }, now);
  /** The link of the newest mail to `email`: its invitation id and token. */
  const link = (email: string) => {
    const text = listMail(store)
      .filter((m) => m.to === email)
      .at(-1)!.text;
    const match = /#\/join\/([^/\s]+)\/([A-Za-z0-9]+)/.exec(text);
    return match === null ? null : { invitationId: match[1]!, token: match[2]! };
  };
  return { store, run, refused, owner, org, project, invite, link, passwordHash: await hashPassword('a good long password') };
}

t.test('an invitation mails its addressee; a new address gets a one-time link, kept only as a hash', async (t) => {
  const { store, run, refused, org, project, invite, link, passwordHash } = await setUp(t);
  const invitation = invite('New.Person@B.test');
  t.notOk('linkHash' in invitation, 'the inviter is never answered the hash');
  const mail = listMail(store).at(-1)!;
  t.equal(mail.to, 'new.person@b.test');
  t.equal(mail.orgId, org.id);
  t.match(mail.subject, 'Olive Owner invites you to Acme');
  t.match(mail.text, 'as editor');
  const { invitationId, token } = link('new.person@b.test')!;
  t.equal(invitationId, invitation.id);
  t.ok(token.length >= 22, 'at least 128 bits of base62');
  t.equal(getInvitation(store, invitation.id)!.linkHash, hashSecret(token), 'stored as its SHA-256');
  t.notOk(JSON.stringify(getInvitation(store, invitation.id)).includes(token), 'the token itself is not stored');

  const join = { invitationId, tokenHash: hashSecret(token), name: 'Nina New', passwordHash };
  t.equal(refused('invitationJoin', { ...join, tokenHash: hashSecret('wrong') }).code, 'NOT_FOUND', 'a wrong token');
  t.equal(refused('invitationJoin', { ...join, passwordHash: 'plain text' }).code, 'INVALID_REQUEST', 'a hash not made by Flagwire');
  t.equal(refused('invitationJoin', { ...join, name: '' }).code, 'INVALID_REQUEST', 'a name is needed');
  const { user, member } = run('invitationJoin', join);
  t.equal(user.email, 'new.person@b.test');
  t.equal(user.name, 'Nina New');
  t.strictSame(member, { orgId: org.id, userId: user.id, role: 'editor' });
  t.equal(getCredential(store, user.id)!.passwordHash, passwordHash);
  t.equal(getInvitation(store, invitationId), undefined, 'the invitation is answered');
  t.match(
    store.listAudit(project.id, { limit: 1, before: null })[0],
    { action: 'member.accept', actor: `user:${user.id}`, changes: { [`role of user:${user.id}`]: { before: null, after: 'editor' } } },
    'audited as an acceptance by the new member',
  );
  t.equal(refused('invitationJoin', join).code, 'NOT_FOUND', 'the link works once');
});

t.test('a link ends with its invitation: expired, replaced, or the address has a user by now', async (t) => {
  const { run, refused, invite, link, passwordHash } = await setUp(t);
  invite('late@b.test');
  const late = link('late@b.test')!;
  const lateJoin = { invitationId: late.invitationId, tokenHash: hashSecret(late.token), name: 'Late', passwordHash };
  t.equal(refused('invitationJoin', lateJoin, at + kInvitationLifetimeMs).code, 'NOT_FOUND', 'expired after 7 days');
  run('invitationJoin', lateJoin, at + kInvitationLifetimeMs - 1);

  invite('twice@b.test', 'viewer');
  const first = link('twice@b.test')!;
  invite('twice@b.test', 'admin');
  const second = link('twice@b.test')!;
  t.not(second.token, first.token);
  const join = (l: typeof first) => ({ invitationId: l.invitationId, tokenHash: hashSecret(l.token), name: 'Twice', passwordHash });
  t.equal(refused('invitationJoin', join(first)).code, 'NOT_FOUND', 'the replaced invitation’s link is dead');
  t.equal(
    refused('invitationJoin', { ...join(second), invitationId: first.invitationId }).code,
    'NOT_FOUND',
    'a token is its invitation’s',
  );
  t.equal(run('invitationJoin', join(second)).member.role, 'admin');

  invite('cli@b.test');
  const cliLink = link('cli@b.test')!;
  run('userCreate', { email: 'cli@b.test' });
  t.equal(
    refused('invitationJoin', { invitationId: cliLink.invitationId, tokenHash: hashSecret(cliLink.token), name: 'C', passwordHash }).code,
    'NOT_FOUND',
    'an address with a user signs in instead',
  );
});

t.test('an address that has a user is told to sign in, with no link', async (t) => {
  const { store, run, invite, link } = await setUp(t);
  run('userCreate', { email: 'known@b.test', name: 'Known' });
  const invitation = invite('known@b.test');
  t.equal(link('known@b.test'), null);
  t.match(listMail(store).at(-1)!.text, `Sign in to the Flagwire console at ${kConsoleUrl}`);
  t.equal(getInvitation(store, invitation.id)!.linkHash, undefined);
});

t.test('the console creates projects as an Admin or Owner, and organisations owned by their maker', async (t) => {
  const { store, run, refused, owner, org } = await setUp(t);
  const editor = run('userCreate', { email: 'ed@a.test' });
  run('orgAddMember', { principal: kOperator, orgId: org.id, userId: editor.id, role: 'editor' });
  const made = run('projectCreate', {
    name: 'Shop',
    orgId: org.id,
    kind: 'multi',
    environments: ['dev', 'prod'],
    principal: principalOf(owner.id),
  });
  t.strictSame(made.environments, ['dev', 'prod']);
  t.equal(
    refused('projectCreate', { name: 'No', orgId: org.id, principal: principalOf(editor.id) }).code,
    'FORBIDDEN',
    'an Editor may not',
  );
  t.equal(
    refused('projectCreate', { name: 'No', ownerUserId: owner.id, principal: principalOf(owner.id) }).code,
    'INVALID_REQUEST',
    'no personal ones',
  );
  const outsider = run('userCreate', { email: 'out@c.test' });
  t.equal(refused('projectCreate', { name: 'No', orgId: org.id, principal: principalOf(outsider.id) }).code, 'FORBIDDEN');

  const mine = run('orgCreate', { name: 'Outsider Org', principal: principalOf(outsider.id) });
  t.equal(mine.plan, 'free');
  t.equal(getRole(store, mine.id, outsider.id), 'owner', 'its maker is its Owner');
  t.equal(refused('orgCreate', { name: 'acme', principal: principalOf(outsider.id) }).code, 'INVALID_REQUEST', 'names stay unique');
});

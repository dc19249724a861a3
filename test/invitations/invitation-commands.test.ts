// Invitations and who reads mail, in-process against a real store (the writer's commands and the one
// mail rule): the cap on pending invitations, expiry, a re-invitation replacing the pending one, an
// invitation answered only by its addressee and only once, a decline that makes no member, the CLI's
// direct add unchanged, and mail about an organisation the reader does not belong to (not shown, also
// not through an organisation they do belong to).
import t from 'tap';
import type { User } from '../../src/model/accounts.js';
import { kInvitationLifetimeMs, kMaxPendingInvitations } from '../../src/model/invitations.js';
import { appendMail, readableMail } from '../../src/model/records/mail-records.js';
import type { TestContext } from '../helpers/cli.js';
import { commandStore } from '../helpers/command-store.js';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { listProjects } from '../../src/model/records/project-records.js';
import { listEmailInvitations, listOrgInvitations } from '../../src/model/records/invitation-records.js';
import { getRole } from '../../src/model/records/member-records.js';

const at = Date.UTC(2030, 0, 1);
const kConsoleUrl = 'http://flagwire.test/console/';

function setUp(t: TestContext) {
  const { store, run, refused, member } = commandStore(t, 'flagwire-invitations-', at);
  const org = run('orgCreate', { principal: kOperator, name: 'A', plan: 'teams' });
  const owner = member(org.id, 'owner', 'owner@a.test', 'Owner');
  const x = run('userCreate', { email: 'X@Other.test', name: 'X' });
  run('projectCreate', { principal: kOperator, name: 'P', orgId: org.id });
  return { store, run, refused, member, owner, x, org };
}

t.test('an organisation holds at most kMaxPendingInvitations pending; expired ones free their slot', async (t) => {
  const { store, run, refused, owner, org } = setUp(t);
  for (let i = 0; i < kMaxPendingInvitations; i++)
    run('orgInvite', { orgId: org.id, email: `p${i}@x.test`, role: 'viewer', principal: principalOf(owner.id), consoleUrl: kConsoleUrl });
  const full = refused('orgInvite', {
    orgId: org.id,
    email: 'one-more@x.test',
    role: 'viewer',
    principal: principalOf(owner.id),
    consoleUrl: kConsoleUrl,
  });
  t.equal(full.code, 'INVALID_REQUEST');
  t.match(full.message, `already has ${kMaxPendingInvitations} pending invitations`);
  const again = run('orgInvite', {
    orgId: org.id,
    email: 'P0@x.test',
    role: 'editor',
    principal: principalOf(owner.id),
    consoleUrl: kConsoleUrl,
  });
  t.equal(listOrgInvitations(store, org.id).length, kMaxPendingInvitations, 'inviting an address again replaces its invitation');
  t.equal(
    listEmailInvitations(store, 'p0@x.test')
      .map((i) => i.id)
      .join(),
    again.id,
  );
  const later = at + kInvitationLifetimeMs;
  run(
    'orgInvite',
    { orgId: org.id, email: 'after@x.test', role: 'viewer', principal: principalOf(owner.id), consoleUrl: kConsoleUrl },
    later,
  );
  t.equal(listOrgInvitations(store, org.id).length, 1, 'expired invitations are dropped when the next one is made');
});

t.test('only the addressee answers an invitation, once, while it lives', async (t) => {
  const { store, run, refused, member, owner, x, org } = setUp(t);
  const invitation = run('orgInvite', {
    orgId: org.id,
    email: 'x@other.test',
    role: 'editor',
    principal: principalOf(owner.id),
    consoleUrl: kConsoleUrl,
  });
  t.equal(
    refused('invitationAccept', { invitationId: invitation.id, principal: principalOf(owner.id) }).code,
    'NOT_FOUND',
    'someone else cannot accept it',
  );
  t.equal(
    refused('invitationAccept', { invitationId: invitation.id, principal: principalOf(x.id) }, invitation.expiresAt).code,
    'NOT_FOUND',
    'an expired one cannot be accepted',
  );
  t.equal(
    refused('orgAddMember', { orgId: org.id, userId: x.id, role: 'viewer', principal: principalOf(owner.id) }).code,
    'INVALID_REQUEST',
    'nor made a member by id from the web console',
  );
  t.equal(getRole(store, org.id, x.id), undefined);
  t.same(run('invitationAccept', { invitationId: invitation.id, principal: principalOf(x.id) }), {
    orgId: org.id,
    userId: x.id,
    role: 'editor',
  });
  t.equal(getRole(store, org.id, x.id), 'editor');
  t.equal(refused('invitationAccept', { invitationId: invitation.id, principal: principalOf(x.id) }).code, 'NOT_FOUND', 'accepted once');
  t.equal(
    refused('orgInvite', {
      orgId: org.id,
      email: 'x@other.test',
      role: 'viewer',
      principal: principalOf(owner.id),
      consoleUrl: kConsoleUrl,
    }).code,
    'INVALID_REQUEST',
    'a member is not invited',
  );
  const viewer = member(org.id, 'viewer', 'v@a.test');
  t.equal(
    refused('orgInvite', { orgId: org.id, email: 'y@x.test', role: 'viewer', principal: principalOf(viewer.id), consoleUrl: kConsoleUrl })
      .code,
    'FORBIDDEN',
    'a viewer may not invite',
  );
  const admin = member(org.id, 'admin', 'adm@a.test');
  t.equal(
    refused('orgInvite', { orgId: org.id, email: 'y@x.test', role: 'owner', principal: principalOf(admin.id), consoleUrl: kConsoleUrl })
      .code,
    'FORBIDDEN',
    'only an Owner invites an Owner',
  );
  const actions = store.listAudit(listProjects(store)[0]!.id, { limit: 10, before: null }).map((e) => `${e.actor}|${e.action}`);
  t.same(actions.slice(0, 2), [`user:${x.id}|member.accept`, `user:${owner.id}|member.invite`], 'invitation and acceptance are audited');
});

t.test('a declined invitation makes no member', async (t) => {
  const { store, run, owner, x, org } = setUp(t);
  const invitation = run('orgInvite', {
    orgId: org.id,
    email: 'x@other.test',
    role: 'viewer',
    principal: principalOf(owner.id),
    consoleUrl: kConsoleUrl,
  });
  t.same(run('invitationDecline', { invitationId: invitation.id, principal: principalOf(x.id) }), { declined: true });
  t.equal(getRole(store, org.id, x.id), undefined);
  t.same(listOrgInvitations(store, org.id), []);
  t.equal(store.listAudit(listProjects(store)[0]!.id, { limit: 1, before: null })[0]!.action, 'member.decline');
});

t.test('mail is read by its addressee, about an organisation they belong to now', async (t) => {
  const { store, run, owner, x, org } = setUp(t);
  const other = run('orgCreate', { principal: kOperator, name: 'B', plan: 'teams' });
  run('orgAddMember', { principal: kOperator, orgId: other.id, userId: x.id, role: 'owner' });
  const message = (to: string, orgId: string | undefined, subject: string) => ({
    at,
    to,
    orgId,
    subject,
    text: subject,
    sentAt: null,
    attempts: 0,
    nextAttemptAt: at,
    lastError: null,
    failedAt: null,
  });
  store.transact((w) => {
    appendMail(w, message('x@other.test', other.id, 'x about B'));
    appendMail(w, message('x@other.test', org.id, 'x about A'));
    appendMail(w, message('x@other.test', undefined, 'x, before messages named their organisation'));
    appendMail(w, message('owner@a.test', org.id, 'owner about A'));
  });
  const subjects = (user: User) => readableMail(store, user).map((m) => m.subject);
  t.same(subjects(x), ['x about B'], 'X: only about B, the organisation X belongs to');
  t.same(subjects(owner), ['owner about A'], "A's owner: their own, never X's");
  run('orgAddMember', { principal: kOperator, orgId: org.id, userId: x.id, role: 'viewer' });
  t.same(subjects(x), ['x about A', 'x about B'], "X joins A (the operator's add): X reads X's mail about A");
  t.same(subjects(owner), ['owner about A'], "and A's owner still reads none of X's");
});

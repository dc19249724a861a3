// Where only a person may act (src/actor/audit-actor.ts, personActor), in-process against a real store:
// a token, a release plan and (where the operator has no say) the operator are refused by every such
// command, and nothing is written; a person still acts, audited as `user:<id>` with their name, and the
// operator still makes organisations, members and projects.
import t from 'tap';
import { kOperator, type Principal, principalOf } from '../../src/actor/audit-actor.js';
import { commandStore } from '../helpers/command-store.js';

const at = Date.UTC(2030, 0, 1);
const kConsoleUrl = 'http://flagwire.test/console/';

t.test('a token, a release plan and the operator never change tokens, invitations or their answers', async (t) => {
  const { store, run, refused, member } = commandStore(t, 'flagwire-person-', at);
  const org = run('orgCreate', { principal: kOperator, name: 'A', plan: 'teams' });
  const owner = member(org.id, 'owner', 'owner@a.test', 'Olive');
  const x = run('userCreate', { email: 'x@other.test', name: 'X' });
  const project = run('projectCreate', { principal: kOperator, name: 'P', orgId: org.id });
  const token = run('tokenCreate', { principal: principalOf(owner.id), projectId: project.id, name: 'ci', permission: 'write' });
  const invitation = run('orgInvite', {
    principal: principalOf(owner.id),
    orgId: org.id,
    email: x.email,
    role: 'viewer',
    consoleUrl: kConsoleUrl,
  });
  t.match(
    store.listAudit(project.id, { limit: 2, before: null }).map((e) => [e.action, e.actor, e.actorName]),
    [
      ['member.invite', `user:${owner.id}`, 'Olive'],
      ['token.create', `user:${owner.id}`, 'Olive'],
    ],
    'a person acts as themselves',
  );

  const others: [string, Principal][] = [
    ['a token', { kind: 'token', tokenId: token.id }],
    ['a release plan', { kind: 'plan', planId: 'sch_1', what: 'scheduled change' }],
    ['the operator', kOperator],
  ];
  for (const [who, principal] of others) {
    const cases = [
      ['create a token', refused('tokenCreate', { principal, projectId: project.id, name: 'more', permission: 'read' })],
      ['rotate a token', refused('tokenRotate', { principal, tokenId: token.id })],
      ['revoke a token', refused('tokenRevoke', { principal, tokenId: token.id })],
      ['invite a member', refused('orgInvite', { principal, orgId: org.id, email: 'y@x.test', role: 'viewer', consoleUrl: kConsoleUrl })],
      ['answer an invitation', refused('invitationAccept', { principal, invitationId: invitation.id })],
      ['answer an invitation', refused('invitationDecline', { principal, invitationId: invitation.id })],
    ] as const;
    for (const [doing, err] of cases) {
      t.match(
        err,
        { code: 'FORBIDDEN', message: `Only a person may ${doing} (the web console's user, or --as USER_ID on the command line).` },
        `${who} may not ${doing}`,
      );
    }
  }
});

t.test('a token and a release plan never make an organisation, a member or a project; the operator does', async (t) => {
  const { run, refused } = commandStore(t, 'flagwire-person-', at);
  const org = run('orgCreate', { principal: kOperator, name: 'A', plan: 'teams' });
  const user = run('userCreate', { email: 'u@a.test' });
  const project = run('projectCreate', { principal: kOperator, name: 'P', orgId: org.id });
  const token = run('tokenCreate', {
    principal: principalOf(run('orgAddMember', { principal: kOperator, orgId: org.id, userId: user.id, role: 'owner' }).userId),
    projectId: project.id,
    name: 'ci',
    permission: 'write',
  });
  const others: [string, Principal][] = [
    ['a token', { kind: 'token', tokenId: token.id }],
    ['a release plan', { kind: 'plan', planId: 'ro_1', what: 'rollout' }],
  ];
  for (const [who, principal] of others) {
    const cases = [
      ['create an organisation', refused('orgCreate', { principal, name: 'B' })],
      ["change a member's role", refused('orgAddMember', { principal, orgId: org.id, userId: user.id, role: 'admin' })],
      ['create a project', refused('projectCreate', { principal, name: 'Q', orgId: org.id })],
    ] as const;
    for (const [doing, err] of cases) {
      t.match(err, { code: 'FORBIDDEN', message: `Only a person may ${doing} (` }, `${who} may not ${doing}`);
    }
  }
});

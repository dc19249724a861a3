// Who a verified sign-in signs in, in process (src/sso/sso-commands.ts ssoSignIn): the subject seen
// before, else the organisation's member of that address; never an account of another organisation;
// a new member only where createMembers is on and SCIM is off; roles from mapped groups, never the
// break-glass Owner's nor the last Owner's; a sign-in's state good once, its sealed cookie its own.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { hashPassword } from '../../src/model/passwords.js';
import { jsonBody } from '../../src/model/request-body.js';
import { flowOrgId, openFlow, sealFlow } from '../../src/sso/flow-cookie.js';
import { kSsoFlowRecords, kSsoIdentityRecords } from '../../src/sso/records.js';
import { commandStore } from '../helpers/command-store.js';
import { deleteMember, getRole } from '../../src/model/records/member-records.js';
import { getCredential, getSession } from '../../src/model/records/session-records.js';

const at = Date.UTC(2030, 0, 1);
const kIssuer = 'https://idp.acme.test';

t.test('the person a sign-in reaches, and the role it gives', async (t) => {
  const { store, run, refused, member } = commandStore(t, 'flagwire-sso-rules-', at);
  const org = run('orgCreate', { name: 'Acme', plan: 'teams', principal: kOperator });
  const other = run('orgCreate', { name: 'Other', plan: 'teams', principal: kOperator });
  const owner = member(org.id, 'owner', 'owner@acme.test');
  const outsider = member(other.id, 'owner', 'boss@other.test');
  const set = (body: unknown) => run('ssoSet', { orgId: org.id, principal: kOperator, received: jsonBody(JSON.stringify(body)) });
  set({ issuer: kIssuer, clientId: 'flagwire', clientSecret: 'secret', groupRoles: { Admins: 'admin', Owners: 'owner' } });
  let n = 0;
  const signIn = (subject: string, email: string | null, groups: string[]) => ({
    orgId: org.id,
    issuer: kIssuer,
    subject,
    email,
    name: null,
    groups,
    session: { idHash: (n++).toString(16).padStart(64, '0'), csrfToken: 'c', expiresAt: at + 3_600_000 },
  });

  t.match(refused('ssoSignIn', signIn('s-boss', 'boss@other.test', [])), { code: 'FORBIDDEN', message: /not a member of organisation/ });
  t.match(refused('ssoSignIn', signIn('s-new', 'new@acme.test', [])), { code: 'FORBIDDEN', message: /turns on createMembers/ });
  t.match(refused('ssoSignIn', signIn('s-none', null, [])), { code: 'SIGN_IN_FAILED', message: /no e-mail address/ });
  t.match(refused('ssoSignIn', { ...signIn('s-owner', 'owner@acme.test', []), issuer: 'https://elsewhere.test' }), {
    code: 'SIGN_IN_FAILED',
  });
  t.equal(getRole(store, other.id, outsider.id), 'owner', "the other organisation's Owner untouched");

  // The only Owner signs in with no mapped group: keeps the role (the last Owner), linked by subject.
  t.equal(run('ssoSignIn', signIn('s-owner', 'owner@acme.test', ['Nobody'])).user.id, owner.id);
  t.equal(getRole(store, org.id, owner.id), 'owner', 'the last Owner keeps the role');
  t.equal(store.getKeyed(kSsoIdentityRecords, `${org.id}/${kIssuer} s-owner`)?.userId, owner.id, 'the subject recorded');
  // The subject is who they are from now on, whatever address the token names.
  t.equal(run('ssoSignIn', signIn('s-owner', 'renamed@acme.test', ['Owners'])).user.id, owner.id);

  set({ createMembers: true });
  const made = run('ssoSignIn', signIn('s-new', 'new@acme.test', ['admins'])).user;
  t.equal(getRole(store, org.id, made.id), 'admin', 'made a member with the role of their group (matched without case)');
  t.equal(getCredential(store, made.id), undefined, 'no password');
  run('ssoSignIn', signIn('s-new', 'new@acme.test', ['Owners', 'Admins']));
  t.equal(getRole(store, org.id, made.id), 'owner', 'the highest of their groups');
  run('ssoSignIn', signIn('s-owner', 'owner@acme.test', []));
  t.equal(getRole(store, org.id, owner.id), 'viewer', 'with another Owner, no mapped group is Viewer');

  // The break-glass Owner's role is never a sign-in's to change.
  run('userPassword', { userId: made.id, passwordHash: await hashPassword('a long enough password') });
  set({ ssoOnly: true, breakGlassUserId: made.id });
  run('ssoSignIn', signIn('s-new', 'new@acme.test', []));
  t.equal(getRole(store, org.id, made.id), 'owner', 'the break-glass Owner keeps the role');

  // While SCIM provisions the organisation, single sign-on makes no one and moves no role.
  run('scimEnable', { orgId: org.id, principal: kOperator });
  t.match(refused('ssoSignIn', signIn('s-third', 'third@acme.test', ['Admins'])), {
    code: 'FORBIDDEN',
    message: /SCIM provisioning adds members/,
  });
  run('ssoSignIn', signIn('s-owner', 'owner@acme.test', ['Admins']));
  t.equal(getRole(store, org.id, owner.id), 'viewer', "SCIM's groups give the roles");
});

t.test("a sign-in's state is good once, in its time; its cookie opens only under its organisation's secret", async (t) => {
  const { store, run, refused } = commandStore(t, 'flagwire-sso-flow-', at);
  const org = run('orgCreate', { name: 'Acme', plan: 'teams', principal: kOperator });
  const used = { stateHash: 'a'.repeat(64), orgId: org.id, expiresAt: at + 600_000 };
  t.match(refused('ssoStateUse', { ...used, expiresAt: at }), { message: /too long/ });
  t.same(run('ssoStateUse', used), { used: true });
  t.match(refused('ssoStateUse', used), { code: 'SIGN_IN_FAILED', message: /used already/ });
  // The organisation's expired marks go at its next sign-in.
  run('ssoStateUse', { ...used, stateHash: 'b'.repeat(64) }, at + 600_000 - 1);
  t.equal(store.getKeyed(kSsoFlowRecords, used.stateHash)?.orgId, org.id, 'kept until it expires');
  run('ssoStateUse', { ...used, stateHash: 'c'.repeat(64), expiresAt: at + 1_300_000 }, at + 600_000);
  t.equal(store.getKeyed(kSsoFlowRecords, used.stateHash), undefined, 'an expired mark dropped');

  const settings = { orgId: org.id, clientSecret: 'the client secret' };
  const flow = { stateHash: 'd'.repeat(64), nonce: 'n', codeVerifier: 'v', expiresAt: at + 600_000 };
  const cookie = sealFlow(settings, flow);
  t.equal(flowOrgId(cookie), org.id);
  t.same(openFlow(settings, cookie), { orgId: org.id, ...flow }, 'opened under its secret');
  t.equal(openFlow({ ...settings, clientSecret: 'rotated' }, cookie), null, 'a rotated secret ends it');
  t.equal(openFlow({ ...settings, orgId: 'org_other' }, cookie), null, "another organisation's key does not open it");
  const altered = `${cookie.slice(0, -2)}${cookie.at(-2) === 'A' ? 'B' : 'A'}${cookie.slice(-1)}`;
  t.equal(openFlow(settings, altered), null, 'an altered cookie does not open');
  t.equal(openFlow(settings, 'x.y'), null, 'nor a value of no such shape');
});

t.test('a recorded subject signs in only a member; its session and its changes reach that organisation alone', async (t) => {
  const { store, run, refused, member } = commandStore(t, 'flagwire-sso-scope-', at);
  const org = run('orgCreate', { name: 'Acme', plan: 'teams', principal: kOperator });
  const other = run('orgCreate', { name: 'Other', plan: 'teams', principal: kOperator });
  member(org.id, 'owner', 'owner@acme.test');
  const vera = member(other.id, 'owner', 'vera@other.test');
  run('orgAddMember', { principal: kOperator, orgId: org.id, userId: vera.id, role: 'editor' });
  const project = run('projectCreate', { name: 'Theirs', orgId: other.id, principal: kOperator });
  run('ssoSet', {
    orgId: org.id,
    principal: kOperator,
    received: jsonBody(JSON.stringify({ issuer: kIssuer, clientId: 'flagwire', clientSecret: 'secret' })),
  });
  const signIn = (idHash: string) => ({
    orgId: org.id,
    issuer: kIssuer,
    subject: 's-vera',
    email: 'vera@other.test',
    name: null,
    groups: [],
    session: { idHash, csrfToken: 'c', expiresAt: at + 3_600_000 },
  });

  t.equal(run('ssoSignIn', signIn('1'.repeat(64))).user.id, vera.id);
  t.equal(getSession(store, '1'.repeat(64))?.orgId, org.id, 'the session names the organisation whose identity provider made it');

  // The same person and command: through Acme's identity provider, Other's project is out of reach.
  const token = { projectId: project.id, name: 'mine', permission: 'write' };
  t.match(refused('tokenCreate', { ...token, principal: { kind: 'user', userId: vera.id, viaOrgId: org.id } }), {
    code: 'FORBIDDEN',
    message: /is not a member/,
  });
  t.match(
    run('tokenCreate', { ...token, principal: { kind: 'user', userId: vera.id } }),
    { name: 'mine' },
    'signed in with a password, it is hers',
  );

  // Removed from the organisation, the subject its identity provider still vouches for signs in no more.
  store.transact((w) => deleteMember(w, { orgId: org.id, userId: vera.id }));
  t.match(refused('ssoSignIn', signIn('2'.repeat(64))), { code: 'FORBIDDEN', message: /is not a member of organisation .* any more/ });
  t.equal(getSession(store, '2'.repeat(64)), undefined, 'no session');
});

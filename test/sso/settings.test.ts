// Single sign-on's settings and lock-out rule in process (src/sso/sso-commands.ts, lockout.ts): only an
// Owner (a person, the operator, or a token whose creator is one) changes them, every change audited
// without the client secret; SSO only needs a break-glass Owner with a password, and no later change
// (a demotion, a removal, SCIM's deprovisioning, naming another, another organisation of theirs turned SSO
// only) takes that Owner's sign-in away;
// password sign-in is refused to the other members; createMembers stays off while SCIM provisions.
import t from 'tap';
import { kOperator, principalOf, type Principal } from '../../src/actor/audit-actor.js';
import { hashPassword } from '../../src/model/passwords.js';
import { jsonBody } from '../../src/model/request-body.js';
import { kScimSettingsRecords } from '../../src/scim/records.js';
import { passwordSignInRefusal } from '../../src/sso/lockout.js';
import { kSsoSettingsRecords } from '../../src/sso/records.js';
import { commandStore } from '../helpers/command-store.js';
import { getRole } from '../../src/model/records/member-records.js';

const at = Date.UTC(2030, 0, 1);
const kIdp = { issuer: 'https://idp.acme.test', clientId: 'flagwire', clientSecret: 'very-secret-value' };

t.test('settings: who may change them, what is checked, what is audited', async (t) => {
  const { store, run, refused, member } = commandStore(t, 'flagwire-sso-', at);
  const org = run('orgCreate', { name: 'Acme', plan: 'teams', principal: kOperator });
  const owner = member(org.id, 'owner', 'owner@acme.test');
  const admin = member(org.id, 'admin', 'admin@acme.test');
  const project = run('projectCreate', { orgId: org.id, name: 'Web', principal: kOperator });
  const set = (principal: Principal, body: unknown) => ({ orgId: org.id, principal, received: jsonBody(JSON.stringify(body)) });

  t.match(refused('ssoSet', set(principalOf(admin.id), kIdp)), { code: 'FORBIDDEN', message: /Only an Owner/ });
  t.match(refused('ssoSet', set(principalOf(owner.id), { issuer: kIdp.issuer })), {
    code: 'INVALID_REQUEST',
    message: /send clientId, clientSecret too/,
  });
  t.match(refused('ssoSet', set(principalOf(owner.id), { ...kIdp, issuer: 'http://idp.acme.test' })), {
    code: 'INVALID_REQUEST',
    message: /issuer must be an https URL/,
  });
  t.match(refused('ssoSet', set(principalOf(owner.id), { ...kIdp, scopes: 'email', extra: 1 })), {
    code: 'INVALID_REQUEST',
    message: /unknown field "extra"; scopes must be an array/,
  });
  const view = run('ssoSet', set(principalOf(owner.id), { ...kIdp, groupRoles: { 'Flagwire Admins': 'admin' } }));
  t.match(view, { enabled: true, issuer: kIdp.issuer, clientSecretSet: true, scopes: ['email', 'profile'], groupsClaim: 'groups' });
  t.notOk(JSON.stringify(view).includes(kIdp.clientSecret), 'the answer never shows the client secret');
  t.equal(store.getKeyed(kSsoSettingsRecords, org.id)?.clientSecret, kIdp.clientSecret, 'kept, to send to the identity provider');
  const audit = store.listAudit(project.id, { before: null, limit: 100 }).filter((e) => e.action === 'sso.configure');
  t.equal(audit.length, 1, 'audited');
  t.match(audit[0], {
    actor: `user:${owner.id}`,
    changes: { clientSecret: { before: null, after: 'changed' }, issuer: { after: kIdp.issuer } },
  });
  t.notOk(JSON.stringify(audit).includes(kIdp.clientSecret), 'the audit log never holds the client secret');

  // A token acts for its creator: an Owner's write token may, an Admin's may not.
  const ownerToken = run('tokenCreate', { principal: principalOf(owner.id), projectId: project.id, name: 'ci', permission: 'write' });
  run('ssoSet', set({ kind: 'token', tokenId: ownerToken.id }, { scopes: ['email'] }));
  t.same(store.getKeyed(kSsoSettingsRecords, org.id)?.scopes, ['email']);
  // Another Owner first: the last Owner is never demoted (src/orgs/owners.ts).
  run('orgAddMember', { principal: kOperator, orgId: org.id, userId: admin.id, role: 'owner' });
  run('orgAddMember', { principal: kOperator, orgId: org.id, userId: owner.id, role: 'admin' });
  t.match(refused('ssoSet', set({ kind: 'token', tokenId: ownerToken.id }, { scopes: [] })), {
    code: 'FORBIDDEN',
    message: /creator .* is not an Owner/,
  });
});

t.test('SSO only: a break-glass Owner with a password, whom no change locks out', async (t) => {
  const { store, run, refused, member } = commandStore(t, 'flagwire-sso-lock-', at);
  const passwordHash = await hashPassword('a long enough password');
  const org = run('orgCreate', { name: 'Acme', plan: 'teams', principal: kOperator });
  const owner = member(org.id, 'owner', 'owner@acme.test');
  const second = member(org.id, 'owner', 'second@acme.test');
  const editor = member(org.id, 'editor', 'editor@acme.test');
  const set = (body: unknown) => ({ orgId: org.id, principal: principalOf(owner.id), received: jsonBody(JSON.stringify(body)) });
  run('ssoSet', set(kIdp));

  t.match(refused('ssoSet', set({ ssoOnly: true })), { code: 'INVALID_REQUEST', message: /needs a break-glass Owner/ });
  t.match(refused('ssoSet', set({ breakGlassUserId: editor.id })), { message: /must be an Owner/ });
  t.match(refused('ssoSet', set({ ssoOnly: true, breakGlassUserId: owner.id })), { message: /has no password/ });
  run('userPassword', { userId: owner.id, passwordHash });
  run('ssoSet', set({ ssoOnly: true, breakGlassUserId: owner.id }));
  t.equal(passwordSignInRefusal(store, owner.id), null, 'the break-glass Owner signs in with a password');
  t.match(passwordSignInRefusal(store, editor.id), /signs in with single sign-on only/, 'the others may not');

  t.match(refused('orgAddMember', { principal: principalOf(second.id), orgId: org.id, userId: owner.id, role: 'admin' }), {
    code: 'INVALID_REQUEST',
    message: /locked out: the break-glass Owner .* must stay an Owner/,
  });
  t.match(refused('ssoSet', set({ breakGlassUserId: null })), { message: /needs a break-glass Owner/ });
  t.match(refused('ssoSet', set({ breakGlassUserId: second.id })), { message: /has no password/ });

  // The break-glass Owner joins another organisation that is SSO only and names someone else: refused.
  const other = run('orgCreate', { name: 'Other', plan: 'teams', principal: kOperator });
  const otherOwner = member(other.id, 'owner', 'owner@other.test');
  run('userPassword', { userId: otherOwner.id, passwordHash });
  run('ssoSet', {
    orgId: other.id,
    principal: kOperator,
    received: jsonBody(JSON.stringify({ ...kIdp, ssoOnly: true, breakGlassUserId: otherOwner.id })),
  });
  t.match(refused('orgAddMember', { principal: kOperator, orgId: other.id, userId: owner.id, role: 'viewer' }), {
    message: /could not sign in with a password: Organisation .* signs in with single sign-on only/,
  });
  // The other order: an organisation the break-glass Owner belongs to already turns SSO only, naming someone else.
  const third = run('orgCreate', { name: 'Third', plan: 'teams', principal: kOperator });
  const thirdOwner = member(third.id, 'owner', 'owner@third.test');
  run('userPassword', { userId: thirdOwner.id, passwordHash });
  run('orgAddMember', { principal: kOperator, orgId: third.id, userId: owner.id, role: 'viewer' });
  const setThird = (body: unknown) => ({ orgId: third.id, principal: kOperator, received: jsonBody(JSON.stringify(body)) });
  run('ssoSet', setThird(kIdp));
  t.match(refused('ssoSet', setThird({ ssoOnly: true, breakGlassUserId: thirdOwner.id })), {
    message: new RegExp(`locked out: the break-glass Owner of organisation ${org.id} .* signs in with single sign-on only`),
  });
  t.equal(passwordSignInRefusal(store, owner.id), null, 'and the break-glass Owner still signs in with a password');

  // SCIM's deprovisioning of the break-glass Owner ends their membership: refused too.
  const scim = run('scimEnable', { orgId: org.id, principal: kOperator });
  const secretHash = store.getKeyed(kScimSettingsRecords, org.id)!.secretHash;
  const write = { orgId: org.id, secretHash, base: 'http://flagwire.test/scim/v2' };
  run('scimUserWrite', { ...write, verb: 'create', body: { userName: 'owner@acme.test' } });
  t.ok(scim.secret, 'SCIM on');
  t.match(
    refused('scimUserWrite', {
      ...write,
      verb: 'patch',
      id: owner.id,
      body: { Operations: [{ op: 'replace', value: { active: false } }] },
    }),
    { message: /locked out/ },
  );
  t.equal(getRole(store, org.id, owner.id), 'owner');

  // While SCIM provisions, single sign-on makes no members.
  t.match(refused('ssoSet', set({ createMembers: true })), { message: /SCIM provisions/ });
  // Turning SSO only off, then on naming the second Owner once they have a password.
  run('userPassword', { userId: second.id, passwordHash });
  run('ssoSet', set({ breakGlassUserId: second.id }));
  run('orgAddMember', { principal: principalOf(second.id), orgId: org.id, userId: owner.id, role: 'admin' });
  t.equal(getRole(store, org.id, owner.id), 'admin', 'the former break-glass Owner may be demoted now');
  t.match(passwordSignInRefusal(store, owner.id), /single sign-on only/);
  run('ssoRemove', { orgId: org.id, principal: principalOf(second.id) });
  t.equal(passwordSignInRefusal(store, owner.id), null, 'password sign-in again once single sign-on is removed');
});

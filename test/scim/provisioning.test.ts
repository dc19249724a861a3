// SCIM's writer rules in process (src/scim/provisioning.ts, scim-commands.ts): a write is authorised when
// it is applied (a secret rotated meanwhile is refused and nothing is written), and no path demotes the
// last Owner: neither a group's change nor the Owner's own mapping of a group to a lower role.
import t from 'tap';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { orgAddMember, orgCreate, userCreate } from '../../src/orgs/org-commands.js';
import type { FlagwireError } from '../../src/errors.js';
import { hashSecret } from '../../src/model/ids.js';
import { secretStatus } from '../../src/model/permissions.js';
import { projectCreate } from '../../src/projects/project-commands.js';
import { tokenCreate, tokenRotate } from '../../src/tokens/token-commands.js';
import { kMaxScimUsers } from '../../src/scim/provisioning.js';
import { kScimSettingsRecords, kScimUserRecords } from '../../src/scim/records.js';
import { scimEnable, scimGroupRole, scimGroupWrite, scimUserWrite } from '../../src/scim/scim-commands.js';
import { Store } from '../helpers/store.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { getToken } from '../../src/model/records/token-records.js';
import { findUserByEmail } from '../../src/model/records/org-records.js';
import { getRole } from '../../src/model/records/member-records.js';

const at = Date.UTC(2030, 0, 1);

/** The error `fn` throws; the test fails where it throws none. */
function refusal(fn: () => unknown): FlagwireError | null {
  try {
    fn();
  } catch (err) {
    return err as FlagwireError;
  }
  return null;
}
const base = 'http://flagwire.test/scim/v2';

t.test('a write with a secret rotated meanwhile is refused; the last Owner is never demoted by a mapping', async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-scim-'));
  t.teardown(() => store.close());
  const { org, owner } = store.transact((w) => {
    const org = orgCreate(w, { name: 'Acme', plan: 'teams', principal: kOperator }, at);
    const owner = userCreate(w, { email: 'owner@acme.test' }, at);
    orgAddMember(w, { orgId: org.id, userId: owner.id, role: 'owner', principal: kOperator }, at);
    return { org, owner };
  });
  const first = store.transact((w) => scimEnable(w, { orgId: org.id, principal: principalOf(owner.id) }, at));
  store.transact((w) => scimEnable(w, { orgId: org.id, principal: kOperator }, at + 1));
  const write = { orgId: org.id, secretHash: hashSecret(first.secret), base, verb: 'create' as const, body: { userName: 'a@acme.test' } };
  t.match(
    refusal(() => store.transact((w) => scimUserWrite(w, write, at + 2))),
    { code: 'UNKNOWN_TOKEN', detail: /^scim:unauthorized: / },
  );
  t.equal(findUserByEmail(store, 'a@acme.test'), undefined, 'nothing written');

  const secretHash = store.getKeyed(kScimSettingsRecords, org.id)!.secretHash;
  const linked = store.transact((w) => scimUserWrite(w, { ...write, secretHash, body: { userName: 'owner@acme.test' } }, at + 3))!;
  t.equal(linked.id, owner.id, 'the owner, linked');
  store.transact((w) =>
    scimGroupWrite(
      w,
      { orgId: org.id, secretHash, base, verb: 'create', body: { displayName: 'Leads', members: [{ value: owner.id }] } },
      at + 4,
    ),
  );
  t.equal(getRole(store, org.id, owner.id), 'owner', 'an unmapped group changes no role');
  const before = store.getKeyed(kScimSettingsRecords, org.id);
  t.match(
    refusal(() => store.transact((w) => scimGroupRole(w, { orgId: org.id, principal: kOperator, group: 'leads', role: 'admin' }, at + 5))),
    { detail: /^scim:mutability: .*last Owner/ },
    'mapping the last Owner’s group to Admin is refused',
  );
  t.same(store.getKeyed(kScimSettingsRecords, org.id), before, 'the mapping is unchanged');
  t.equal(getRole(store, org.id, owner.id), 'owner');
  store.transact((w) => scimGroupRole(w, { orgId: org.id, principal: kOperator, group: 'Leads', role: 'owner' }, at + 6));
  t.equal(getRole(store, org.id, owner.id), 'owner', 'mapped to Owner: still the Owner');
  t.match(
    refusal(() => store.transact((w) => scimGroupRole(w, { orgId: org.id, principal: kOperator, group: 'Leads', role: null }, at + 7))),
    { detail: /last Owner/ },
    'unmapping it (the Owner would be a Viewer) is refused too',
  );
});

t.test("deprovisioning stops a rotated token's old secret still in its grace period, and the replacement", async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-scim-'));
  t.teardown(() => store.close());
  const { org, person, project } = store.transact((w) => {
    const org = orgCreate(w, { name: 'Acme', plan: 'teams', principal: kOperator }, at);
    const owner = userCreate(w, { email: 'owner@acme.test' }, at);
    orgAddMember(w, { orgId: org.id, userId: owner.id, role: 'owner', principal: kOperator }, at);
    const person = userCreate(w, { email: 'dev@acme.test' }, at);
    orgAddMember(w, { orgId: org.id, userId: person.id, role: 'editor', principal: kOperator }, at);
    const project = projectCreate(w, { name: 'App', orgId: org.id, kind: 'single', principal: kOperator }, at);
    return { org, person, project };
  });
  const enabled = store.transact((w) => scimEnable(w, { orgId: org.id, principal: kOperator }, at));
  const write = { orgId: org.id, secretHash: hashSecret(enabled.secret), base };
  store.transact((w) => scimUserWrite(w, { ...write, verb: 'create', body: { userName: 'dev@acme.test' } }, at));
  const token = store.transact((w) =>
    tokenCreate(w, { projectId: project.id, principal: principalOf(person.id), name: 'ci', permission: 'read' }, at),
  );
  const rotated = store.transact((w) =>
    tokenRotate(w, { tokenId: token.id, principal: principalOf(person.id), gracePeriodSeconds: 3600 }, at),
  );
  t.equal(secretStatus(getToken(store, token.id)!, at + 10), 'active', 'the old secret is in its grace');
  store.transact((w) =>
    scimUserWrite(
      w,
      { ...write, verb: 'patch', id: person.id, body: { Operations: [{ op: 'replace', value: { active: false } }] } },
      at + 10,
    ),
  );
  for (const id of [token.id, rotated.id]) {
    const now = getToken(store, id)!;
    t.equal(secretStatus(now, at + 11), 'revoked', `${id}: refused from then on`);
    t.match(now.revokedReason, /dev@acme\.test was deprovisioned/, `${id}: with the reason`);
  }
});

t.test('userName and externalId are unique in an organisation through their lookups; it holds at most kMaxScimUsers', async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-scim-'));
  t.teardown(() => store.close());
  const orgs = store.transact((w) => [
    orgCreate(w, { name: 'Acme', plan: 'teams', principal: kOperator }, at),
    orgCreate(w, { name: 'Beta', plan: 'teams', principal: kOperator }, at),
  ]);
  const scim = orgs.map((org) => {
    store.transact((w) => scimEnable(w, { orgId: org.id, principal: kOperator }, at));
    return { orgId: org.id, secretHash: store.getKeyed(kScimSettingsRecords, org.id)!.secretHash, base };
  });
  const acme = scim[0]!;
  const write = (to: typeof acme, verb: 'create' | 'replace' | 'delete', body: Record<string, unknown>, id?: string) =>
    store.transact((w) => scimUserWrite(w, { ...to, verb, body, ...(id === undefined ? {} : { id }) }, at + 1));
  const alice = write(acme, 'create', { userName: 'Alice@acme.test', externalId: 'ext-1' })!;
  const bob = write(acme, 'create', { userName: 'bob', emails: [{ value: 'bob@acme.test' }] })!;

  t.match(
    refusal(() => write(acme, 'create', { userName: 'ALICE@ACME.TEST' })),
    {
      detail: `scim:uniqueness: A user with userName "ALICE@ACME.TEST" already exists here (${alice.id}).`,
    },
  );
  t.match(
    refusal(() => write(acme, 'create', { userName: 'carol@acme.test', externalId: 'ext-1' })),
    {
      detail: `scim:uniqueness: A user with externalId "ext-1" already exists here (${alice.id}).`,
    },
  );
  t.match(
    refusal(() => write(acme, 'replace', { userName: 'alice@acme.test' }, bob.id)),
    { detail: /userName "alice@acme.test" already exists/ },
  );
  t.equal(
    write(acme, 'replace', { userName: 'ALICE@acme.test', externalId: 'ext-1' }, alice.id)!.userName,
    'ALICE@acme.test',
    'its own name, in another case',
  );
  t.equal(write(acme, 'create', { userName: 'dave@acme.test', externalId: 'EXT-1' })!.externalId, 'EXT-1', 'externalId is caseExact');
  // Alice's account is Acme's member's: Beta's SCIM links her only once she has joined Beta herself.
  t.match(
    refusal(() => write(scim[1]!, 'create', { userName: 'alice@acme.test', externalId: 'ext-1' })),
    { detail: /^scim:uniqueness: alice@acme\.test is a Flagwire account that is not a member of this organisation/ },
  );
  t.equal(getRole(store, scim[1]!.orgId, alice.id), undefined, 'no membership in Beta');
  store.transact((w) => orgAddMember(w, { orgId: scim[1]!.orgId, userId: alice.id, role: 'viewer', principal: kOperator }, at));
  t.equal(
    write(scim[1]!, 'create', { userName: 'alice@acme.test', externalId: 'ext-1' })!.id,
    alice.id,
    "another organisation's names are its own",
  );
  write(acme, 'replace', { userName: 'robert', emails: [{ value: 'bob@acme.test' }] }, bob.id);
  t.equal(
    write(acme, 'create', { userName: 'bob', emails: [{ value: 'bob2@acme.test' }] })!.userName,
    'bob',
    'a name given up is free again',
  );

  // The cap counts the organisation's users from the lookup's tally: filled up to it beside the four made above.
  store.transact((w) => {
    for (let i = 4; i < kMaxScimUsers; i++) {
      const id = `usr_filler${i}`;
      w.putKeyed(kScimUserRecords, {
        orgId: acme.orgId,
        id,
        externalId: null,
        created: at,
        lastModified: at,
        version: 1,
        userName: `${id}@acme.test`,
        name: null,
        displayName: null,
        emails: [],
        active: true,
      });
    }
  });
  t.match(
    refusal(() => write(acme, 'create', { userName: 'one-more@acme.test' })),
    {
      detail: `scim:tooMany: An organisation holds at most ${kMaxScimUsers} SCIM users.`,
    },
  );
  t.ok(write(scim[1]!, 'create', { userName: 'one-more@beta.test' }), "another organisation's count is its own");
  store.transact((w) => w.deleteKeyed(kScimUserRecords, store.getKeyed(kScimUserRecords, `${acme.orgId}/usr_filler4`)!));
  t.ok(write(acme, 'create', { userName: 'one-more@acme.test' }), 'one deleted: room for one');
});

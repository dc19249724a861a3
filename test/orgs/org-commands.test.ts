// A role given in the web console (with the acting user) is an audit entry as that user in every
// project of the organisation, and only there; a role set to what it already was writes none.
import t from 'tap';
import type { Org, User } from '../../src/model/accounts.js';
import type { Project } from '../../src/model/projects.js';
import { Store } from '../helpers/store.js';
import { orgAddMember } from '../../src/orgs/org-commands.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { principalOf } from '../../src/actor/audit-actor.js';
import { putOrg, putUser } from '../../src/model/records/org-records.js';
import { putProject } from '../../src/model/records/project-records.js';
import { getRole, putMember } from '../../src/model/records/member-records.js';

const at = Date.UTC(2030, 0, 1);
const org = (id: string): Org => ({ id, name: id, plan: 'teams', trialEndsAt: null, standing: 'good', createdAt: at });
const user = (id: string, name: string): User => ({ id, email: `${id}@acme.test`, name, createdAt: at });
const project = (id: string, orgId: string): Project => ({
  id,
  name: id,
  kind: 'single',
  orgId,
  ownerUserId: null,
  environments: [],
  createdAt: at,
});

t.test("a role change made in the web console is audited in each of the organisation's projects", async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-org-'));
  t.teardown(() => store.close());
  store.transact((w) => {
    putOrg(w, org('org_a'));
    putOrg(w, org('org_b'));
    putUser(w, user('usr_owner', 'Olive'));
    putUser(w, user('usr_ed', 'Ed'));
    putMember(w, { orgId: 'org_a', userId: 'usr_owner', role: 'owner' });
    putMember(w, { orgId: 'org_a', userId: 'usr_ed', role: 'viewer' });
    for (const p of [project('prj_1', 'org_a'), project('prj_2', 'org_a'), project('prj_other', 'org_b')]) putProject(w, p);
  });
  const set = (role: string, actingUserId?: string) =>
    store.transact((w) =>
      orgAddMember(w, { principal: principalOf(actingUserId), orgId: 'org_a', userId: 'usr_ed', role: role as never }, at),
    );

  t.same(set('editor', 'usr_owner'), { orgId: 'org_a', userId: 'usr_ed', role: 'editor' });
  for (const projectId of ['prj_1', 'prj_2']) {
    t.match(
      store.listAudit(projectId, { limit: 10, before: null }),
      [
        {
          actor: 'user:usr_owner',
          actorName: 'Olive',
          action: 'member.role',
          flagId: null,
          changes: { 'role of user:usr_ed': { before: 'viewer', after: 'editor' } },
        },
      ],
      `audited in ${projectId}`,
    );
  }
  t.same(store.listAudit('prj_other', { limit: 10, before: null }), [], "not in another organisation's project");

  set('editor', 'usr_owner');
  t.equal(store.listAudit('prj_1', { limit: 10, before: null }).length, 1, 'the same role again changes nothing and writes nothing');
  set('admin');
  t.equal(store.listAudit('prj_1', { limit: 10, before: null }).length, 1, 'the command line (no acting user) is not audited, as before');
  t.equal(getRole(store, 'org_a', 'usr_ed'), 'admin');
});

t.test('the last Owner keeps the role, whoever asks; a permission refusal still comes first', async (t) => {
  const store = Store.open(tempDir(t, 'flagwire-org-'));
  t.teardown(() => store.close());
  store.transact((w) => {
    putOrg(w, org('org_a'));
    putUser(w, user('usr_owner', 'Olive'));
    putUser(w, user('usr_admin', 'Ada'));
    putMember(w, { orgId: 'org_a', userId: 'usr_owner', role: 'owner' });
    putMember(w, { orgId: 'org_a', userId: 'usr_admin', role: 'admin' });
  });
  const demote = (actingUserId?: string) => () =>
    store.transact((w) =>
      orgAddMember(w, { principal: principalOf(actingUserId), orgId: 'org_a', userId: 'usr_owner', role: 'admin' }, at),
    );
  const lastOwner = /keeps at least one Owner.*usr_owner is the last Owner of organisation org_a, and this would make them an admin/;
  t.throws(demote('usr_owner'), { code: 'INVALID_REQUEST', detail: lastOwner }, 'the console: the Owner demoting themselves');
  t.throws(demote(), { code: 'INVALID_REQUEST', detail: lastOwner }, 'the operator (no acting user)');
  t.throws(demote('usr_admin'), { code: 'FORBIDDEN' }, 'an Admin may not take the Owner role at all');
  t.equal(getRole(store, 'org_a', 'usr_owner'), 'owner', 'nothing written');
});

// Roles SCIM's groups give and take follow a guarded approvals policy (issue 61 item 2; docs/scim.md,
// docs/approvals.md "Approvals are judged when the request is applied"), in process through the
// writer's commands: a person a mapped group makes Admin may approve where the policy names Admin, and
// not before; an approval whose approver a group change then demotes, or SCIM deprovisions, lapses when
// the request would be applied, saying why, so the request waits for others; the approvals that still
// count apply it.
import t from 'tap';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import type { FlagwireError } from '../../src/errors.js';
import { kScimSettingsRecords } from '../../src/scim/records.js';
import { effectiveState } from '../../src/flags/records/flag-state.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import { guardedWorld, held } from '../helpers/guarded-world.js';
import { getRole } from '../../src/model/records/member-records.js';

const kPatch = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const base = 'http://flagwire.test/scim/v2';

t.test('roles from SCIM groups decide who may approve, and lapse approvals when taken away', async (t) => {
  const { world, ids, t0, editor, admin, owner } = guardedWorld('flagwire-scim-approvals-', 2);
  t.teardown(() => world.store.close());
  // Only Owners and Admins approve production's changes, two of them.
  world.run('approvalsSet', { projectId: ids.multi, env: 'production', required: 2, roles: ['owner', 'admin'], principal: admin }, t0);
  world.run('scimEnable', { orgId: ids.orgA, principal: kOperator }, t0);
  world.run('scimGroupRole', { orgId: ids.orgA, principal: kOperator, group: 'Flagwire Admins', role: 'admin' }, t0);
  const secretHash = world.store.getKeyed(kScimSettingsRecords, ids.orgA)!.secretHash;
  const write = { orgId: ids.orgA, secretHash, base };
  const user = (body: unknown) => world.run('scimUserWrite', { ...write, verb: 'create', body }, t0)!.id;
  // The Viewer and the Admin linked by address (each keeps their role); Carol made by SCIM.
  t.equal(user({ userName: 'viewer@a.test' }), ids.viewer);
  t.equal(user({ userName: 'admin@a.test' }), ids.admin);
  const carol = user({ userName: 'carol@a.test' });
  t.equal(getRole(world.store, ids.orgA, carol), 'viewer', 'a new person is a Viewer');

  const opened = world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: editor, patch: { enabled: true } }, t0);
  const requestId = held(opened);
  const approve = (userId: string, at: number) =>
    world.run('requestApprove', { requestId, principal: principalOf(userId), ifVersion: 1 }, at);
  const refusal = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return err as FlagwireError;
    }
    return null;
  };

  // ---- a Viewer may not approve; once the mapped group holds them, they are Admin and may ----
  t.match(
    refusal(() => approve(ids.viewer, t0 + 1)),
    { code: 'FORBIDDEN', detail: /needs the owner, admin role .* is viewer/ },
  );
  const group = world.run(
    'scimGroupWrite',
    { ...write, verb: 'create', body: { displayName: 'flagwire admins', members: [{ value: ids.viewer }, { value: carol }] } },
    t0 + 2,
  )!;
  t.equal(getRole(world.store, ids.orgA, ids.viewer), 'admin', "the group's role, matched without case");
  t.equal(getRole(world.store, ids.orgA, carol), 'admin');
  t.match(approve(ids.viewer, t0 + 3), { status: 'pending', approvals: [{ id: `user:${ids.viewer}` }], lapsed: [] }, 'one of two');

  // ---- the group drops them (Okta's remove): their approval lapses; the Admin's alone does not apply it ----
  world.run(
    'scimGroupWrite',
    {
      ...write,
      verb: 'patch',
      id: group.id,
      body: { schemas: [kPatch], Operations: [{ op: 'remove', path: `members[value eq "${ids.viewer}"]` }] },
    },
    t0 + 4,
  );
  t.equal(getRole(world.store, ids.orgA, ids.viewer), 'viewer', 'back to Viewer');
  t.match(
    approve(ids.admin, t0 + 5),
    { status: 'pending', lapsed: [{ id: `user:${ids.viewer}`, why: /needs the owner, admin role .* is viewer/ }] },
    "the demoted approver's approval does not count",
  );
  t.equal(effectiveState(getFlag(world.store, ids.groupFlag)!, 'production').enabled, false, 'not applied');

  // ---- the Admin deprovisioned (active false): their approval lapses too; Carol's alone does not apply it ----
  world.run(
    'scimUserWrite',
    { ...write, verb: 'patch', id: ids.admin, body: { schemas: [kPatch], Operations: [{ op: 'replace', value: { active: false } }] } },
    t0 + 6,
  );
  t.equal(getRole(world.store, ids.orgA, ids.admin), undefined, 'no longer a member');
  t.match(
    approve(carol, t0 + 7),
    {
      status: 'pending',
      lapsed: [
        { id: `user:${ids.viewer}`, why: /is viewer/ },
        { id: `user:${ids.admin}`, why: /is not a member/ },
      ],
    },
    'the deprovisioned approver does not count',
  );
  t.equal(effectiveState(getFlag(world.store, ids.groupFlag)!, 'production').enabled, false, 'still not applied');

  // ---- the Owner's approval is the second that counts: applied, the lapsed ones named ----
  const applied = world.run('requestApprove', { requestId, principal: owner, ifVersion: 1 }, t0 + 8);
  t.match(applied, {
    status: 'applied',
    approvals: [{ id: `user:${carol}` }, { id: `user:${ids.owner}` }],
    lapsed: [{ id: `user:${ids.viewer}` }, { id: `user:${ids.admin}` }],
  });
  t.equal(applied.approvals.length, 2, 'only the approvals that counted');
  t.equal(effectiveState(getFlag(world.store, ids.groupFlag)!, 'production').enabled, true, 'applied');
});

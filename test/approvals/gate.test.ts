// The approvals gate's rules, in process through the writer's own commands (docs/approvals.md): what
// is guarded and what is not, a request edited by its author, applied field by field (a change since
// to another field kept, one to its own field refusing it), audited with its approvers, and release
// plans approved when made.
import t from 'tap';
import { kOperator, principalOf } from '../../src/actor/audit-actor.js';
import { FlagwireError } from '../../src/errors.js';
import { kApprovedPlanRecords } from '../../src/approvals/records.js';
import { requestView } from '../../src/approvals/request-view.js';
import { requireRequest } from '../../src/approvals/requests.js';
import type { GroupFlag } from '../../src/model/flags.js';
import { guardedWorld, held } from '../helpers/guarded-world.js';
import { listRollouts, listSchedules } from '../../src/release-plans/records.js';
import { findFlagByName, getFlag } from '../../src/flags/records/flag-store.js';

const { world, ids, t0, editor, admin, owner, bypass } = guardedWorld('flagwire-approvals-gate-', 2);

function production(): GroupFlag['environments'][string] | undefined {
  world.store.resetReadTxn();
  const flag = getFlag(world.store, ids.groupFlag) as GroupFlag;
  return flag.environments.production;
}

function refusal(fn: () => unknown): FlagwireError {
  try {
    fn();
  } catch (err) {
    if (err instanceof FlagwireError) return err;
    throw err;
  }
  throw new Error('not refused');
}

t.test('what is guarded: a flag made off there is not, made on it is; another environment and a description are not', async (t) => {
  const off = world.outcome('flagCreate', { projectId: ids.multi, principal: editor, body: { name: 'starts-off' } }, t0);
  t.ok(off.applied, 'a flag at production defaults is made at once');
  const on = world.outcome(
    'flagCreate',
    { projectId: ids.multi, principal: editor, body: { name: 'starts-on', environments: { production: { enabled: true } } } },
    t0,
  );
  t.notOk(on.applied, 'one made on in production is held');
  world.store.resetReadTxn();
  t.equal(findFlagByName(world.store, ids.multi, 'starts-on'), undefined, 'and not made');
  t.ok(
    world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'staging', principal: editor, patch: { trafficPercentage: 10 } }, t0).applied,
    'staging: at once',
  );
  t.ok(world.outcome('flagDescribe', { flagId: ids.groupFlag, principal: editor, text: 'guarded?' }, t0).applied, 'a description: at once');
  t.ok(
    world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: bypass, patch: { trafficPercentage: 15 } }, t0)
      .applied,
    'a bypass token: at once',
  );
  t.equal(production()?.trafficPercentage, 15);
});

t.test("the author's next change to the same flag edits the request and voids its approvals", async (t) => {
  const first = held(
    world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: editor, patch: { enabled: true } }, t0 + 1),
  );
  world.run('requestApprove', { requestId: first, principal: admin }, t0 + 2);
  world.store.resetReadTxn();
  t.equal(requireRequest(world.store, first, null).approvals.length, 1, 'one approval of two');
  const again = held(
    world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: editor, patch: { trafficPercentage: 60 } }, t0 + 3),
  );
  t.equal(again, first, 'the same request');
  world.store.resetReadTxn();
  const request = requireRequest(world.store, first, null);
  t.same(request.approvals, [], 'its approval voided');
  const view = requestView(world.store, request);
  const fields = Object.fromEntries(view.diff.map((d) => [d.field, d.proposed]));
  t.equal(fields['environments.production.enabled'], true, 'the first change kept');
  t.equal(fields['environments.production.trafficPercentage'], 60, 'the second on top of it');
  const same = held(
    world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: editor, patch: { trafficPercentage: 60 } }, t0 + 4),
  );
  t.equal(same, first);
  world.store.resetReadTxn();
  t.equal(requireRequest(world.store, first, null).updatedAt, t0 + 3, 'a change that adds nothing leaves it as it was');
  const someoneElse = held(
    world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: owner, patch: { trafficPercentage: 61 } }, t0 + 5),
  );
  t.not(someoneElse, first, "another person's change is a request of their own");
  world.run('requestWithdraw', { requestId: someoneElse, principal: owner }, t0 + 6);
});

t.test('applied field by field: a change since to another field is kept, one to its own field refuses it', async (t) => {
  const request = requireRequest(
    world.store,
    held(
      world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: editor, patch: { trafficPercentage: 60 } }, t0 + 7),
    ),
    null,
  );
  // Meanwhile: staging changed, and production's audience.
  world.run('flagPatch', { flagId: ids.groupFlag, env: 'staging', principal: editor, patch: { trafficPercentage: 33 } }, t0 + 8);
  world.run('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: bypass, patch: { audienceId: ids.multiAudience } }, t0 + 9);
  world.run('requestApprove', { requestId: request.id, principal: admin }, t0 + 10);
  const revision = world.store.revision();
  const applied = world.run('requestApprove', { requestId: request.id, principal: owner, text: 'ship it' }, t0 + 11);
  t.equal(applied.status, 'applied');
  t.equal(world.store.revision(), revision + 1, 'one revision');
  world.store.resetReadTxn();
  const flag = getFlag(world.store, ids.groupFlag) as GroupFlag;
  t.equal(flag.environments.production?.enabled, true);
  t.equal(flag.environments.production?.trafficPercentage, 60);
  t.equal(flag.environments.production?.audienceId, ids.multiAudience, "production's audience, set since, kept");
  t.equal(flag.environments.staging?.trafficPercentage, 33, 'staging, changed since, kept');
  t.equal(flag.updatedAt, t0 + 11, 'updatedAt: when it was applied');
  const audit = world.store.listAudit(ids.multi, { limit: 10, before: null });
  const patch = audit.find((e) => e.action === 'flag.patch' && e.request?.id === request.id);
  t.equal(patch?.actor, `user:${ids.editor}`, "audited as its author's change");
  t.same(
    patch?.request?.approvedBy.map((a) => a.id),
    [`user:${ids.admin}`, `user:${ids.owner}`],
    'naming every approver',
  );
  t.ok(
    audit.some((e) => e.action === 'request.apply'),
    'request.apply audited',
  );

  const stale = held(
    world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: editor, patch: { trafficPercentage: 70 } }, t0 + 12),
  );
  world.run('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: bypass, patch: { trafficPercentage: 65 } }, t0 + 13);
  world.run('requestApprove', { requestId: stale, principal: admin }, t0 + 14);
  const before = world.snapshot();
  const err = refusal(() => world.run('requestApprove', { requestId: stale, principal: owner }, t0 + 15));
  t.equal(err.code, 'REQUEST_CONFLICT');
  t.match(err.detail, /environments\.production\.trafficPercentage/, 'naming the field that moved');
  t.equal(world.snapshot(), before, 'nothing written, the approval neither');
  world.store.resetReadTxn();
  const view = requestView(world.store, requireRequest(world.store, stale, null));
  t.equal(view.status, 'pending');
  t.equal(view.stale, true, 'shown stale');
  t.equal(production()?.trafficPercentage, 65, 'the change made since stands');
  world.run('requestWithdraw', { requestId: stale, principal: editor }, t0 + 16);
});

t.test('who approves: a person of the roles, not the author unless allowed, once each', async (t) => {
  const id = held(
    world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: editor, patch: { trafficPercentage: 80 } }, t0 + 20),
  );
  t.match(refusal(() => world.run('requestApprove', { requestId: id, principal: editor }, t0)).detail, /author/);
  t.match(refusal(() => world.run('requestApprove', { requestId: id, principal: principalOf(ids.viewer) }, t0)).detail, /role/);
  t.equal(refusal(() => world.run('requestApprove', { requestId: id, principal: kOperator }, t0)).code, 'FORBIDDEN');
  t.equal(refusal(() => world.run('requestApprove', { requestId: id, principal: bypass }, t0)).code, 'FORBIDDEN');
  t.equal(
    refusal(() => world.run('requestApprove', { requestId: id, principal: principalOf(ids.ownerB) }, t0)).code,
    'NOT_FOUND',
    'a stranger learns nothing',
  );
  world.run('requestApprove', { requestId: id, principal: admin }, t0 + 21);
  t.match(refusal(() => world.run('requestApprove', { requestId: id, principal: admin }, t0 + 22)).detail, /already/);
  const rejected = world.run('requestReject', { requestId: id, principal: owner, text: 'not today' }, t0 + 23);
  t.equal(rejected.status, 'rejected');
  t.equal(
    refusal(() => world.run('requestApprove', { requestId: id, principal: owner }, t0 + 24)).code,
    'REQUEST_CONFLICT',
    'a decided request stays decided',
  );
  world.run('approvalsSet', { projectId: ids.multi, env: 'production', required: 1, allowSelf: true, principal: admin }, t0 + 25);
  const self = held(
    world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: editor, patch: { trafficPercentage: 81 } }, t0 + 26),
  );
  t.equal(world.run('requestApprove', { requestId: self, principal: editor }, t0 + 27).status, 'applied', 'allowSelf: the author counts');
  world.run('approvalsSet', { projectId: ids.multi, env: 'production', required: 1, principal: admin }, t0 + 28);
});

t.test('release plans are approved when made: the plan runs without another request', async (t) => {
  const id = held(
    world.outcome(
      'scheduleCreate',
      { principal: editor, flagId: ids.groupFlag, env: 'production', body: { at: t0 + 60_000, patch: { trafficPercentage: 42 } } },
      t0 + 30,
    ),
  );
  world.store.resetReadTxn();
  t.same(
    listSchedules(world.store, ids.multi, { limit: 10, maxBytes: 1 << 20, after: null, pendingOnly: true }).items,
    [],
    'no schedule until approved',
  );
  world.run('requestApprove', { requestId: id, principal: admin }, t0 + 31);
  world.store.resetReadTxn();
  const [schedule] = listSchedules(world.store, ids.multi, { limit: 10, maxBytes: 1 << 20, after: null, pendingOnly: true }).items;
  t.ok(schedule, 'made when approved');
  t.ok(world.store.getKeyed(kApprovedPlanRecords, schedule!.id), 'as an approved plan');
  const ran = world.outcome('scheduleRun', { scheduleId: schedule!.id }, t0 + 60_000);
  t.ok(ran.applied, 'it runs when due');
  t.equal(production()?.trafficPercentage, 42);

  const steps = [{ trafficPercentage: 50, holdMs: 10_000 }, { trafficPercentage: 100 }];
  const rollout = held(
    world.outcome(
      'rolloutStart',
      { principal: editor, flagId: ids.groupFlag, env: 'production', body: { steps }, guardMetrics: null },
      t0 + 40,
    ),
  );
  world.run('requestApprove', { requestId: rollout, principal: admin }, t0 + 100_040);
  world.store.resetReadTxn();
  const plan = listRollouts(world.store, ids.multi, { limit: 10, maxBytes: 1 << 20, after: null }).items.find(
    (r) => r.status === 'running',
  );
  t.equal(plan?.nextAt, t0 + 100_040 + 10_000, 'approved 100 s late: its clock starts when applied');
  t.equal(production()?.trafficPercentage, 50, 'its first step applied with it');
});

t.test("an edit is checked on top of its author's pending request, not only the flag as it is", async (t) => {
  const flagId = world.run('flagCreate', { projectId: ids.multi, principal: kOperator, body: { name: 'typed-later' } }).id;
  const variants = { variants: { on: true, off: false }, defaultVariant: 'on', enabled: true };
  const id = held(world.outcome('flagPatch', { flagId, env: 'production', principal: editor, patch: variants }, t0 + 50));
  // The flag has no variants in production yet: on its own, this is refused; on top of the request, it is an edit.
  const alone = refusal(() =>
    world.run('flagPatch', { flagId, env: 'production', principal: owner, patch: { defaultVariant: 'off' } }, t0 + 51),
  );
  t.match(alone.detail, /no variants/, "another person's is refused on the flag as it is");
  const edited = held(
    world.outcome('flagPatch', { flagId, env: 'production', principal: editor, patch: { defaultVariant: 'off' } }, t0 + 52),
  );
  t.equal(edited, id, "the author's edits the request");
  world.store.resetReadTxn();
  const fields = Object.fromEntries(requestView(world.store, requireRequest(world.store, id, null)).diff.map((d) => [d.field, d.proposed]));
  t.match(fields['environments.production'], { enabled: true, typed: { defaultVariant: 'off', variants: { on: true, off: false } } });
  const wrong = refusal(() =>
    world.outcome('flagPatch', { flagId, env: 'production', principal: editor, patch: { defaultVariant: 'nope' } }, t0 + 53),
  );
  t.equal(wrong.code, 'INVALID_REQUEST', "one wrong on top of the request too is refused with the flag's words");
});

t.test('an experiment in a guarded environment is held, even on a flag that is off there; in another it is not', async (t) => {
  const off = world.outcome('flagCreate', { projectId: ids.multi, principal: editor, body: { name: 'exp-off-flag' } }, t0);
  t.ok(off.applied);
  const flagId = findFlagByName(world.store, ids.multi, 'exp-off-flag')!.id;
  const patch = (env: string) =>
    world.outcome('flagPatch', { flagId, env, principal: editor, patch: { experiment: 'guarded-test' } } as never, t0);
  held(patch('production'));
  t.equal((getFlag(world.store, flagId) as GroupFlag).environments.production?.experiment, undefined, 'not applied');
  t.ok(patch('staging').applied, 'staging is not guarded');
});

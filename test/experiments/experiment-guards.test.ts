// Experiments under approvals and the running-allocation rule, in process through the writer's own
// commands (issue 59, item 1; docs/approvals.md, docs/decisions.md: Experiments): in a guarded
// environment a start or stop is a change request holding the flag's change and the experiment's as one,
// applied when another person approves it (its start the approval's time, audited naming the approver)
// and never when it is rejected; a change to the plan a pending start will run is held too, naming that
// request. While an experiment runs, nothing may change who gets which variant of its flag there (a
// patch, an audience, a shared fragment, a delete; an approved change request included), and what does
// not (a description, tags, another environment, ending it on the flag) passes.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { requireRequest } from '../../src/approvals/requests.js';
import { getExperiment } from '../../src/experiments/records.js';
import { effectiveState } from '../../src/flags/records/flag-state.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import { jsonBody } from '../../src/model/request-body.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { refusedCommand } from '../helpers/refused.js';
import { guardedWorld, held } from '../helpers/guarded-world.js';

const { world, ids, t0, editor, admin, owner, bypass } = guardedWorld('flagwire-experiment-guards-', 1);
const production = { projectId: ids.multi, env: 'production' };
const key = 'prod-exp';

world.run('experimentCreate', {
  principal: editor,
  ...production,
  received: jsonBody(JSON.stringify({ ...experimentPlan(ids.groupFlag, 1000), key })),
});

const experiment = () => {
  world.store.resetReadTxn();
  return getExperiment(world.store, ids.multi, 'production', key)!;
};
const flagKey = (flagId: string, env: string | null) => {
  world.store.resetReadTxn();
  return effectiveState(getFlag(world.store, flagId)!, env).experiment;
};
const status = (id: string) => {
  world.store.resetReadTxn();
  return requireRequest(world.store, id, null).status;
};

t.test('a start in a guarded environment is a change request; rejected, nothing changes', async (t) => {
  const id = held(world.outcome('experimentStart', { principal: editor, ...production, key }, t0 + 1));
  world.store.resetReadTxn();
  const request = requireRequest(world.store, id, null);
  t.same(request.changes.map((c) => c.kind).sort(), ['experiment', 'flag'], "the flag's change and the experiment's, as one");
  t.match(request.summary, /experiment\.start/);
  t.equal(experiment().startedAt, null, 'not started');
  t.equal(flagKey(ids.groupFlag, 'production'), undefined, 'the flag carries no key');
  world.run('requestReject', { requestId: id, principal: admin }, t0 + 2);
  t.equal(status(id), 'rejected');
  t.equal(experiment().startedAt, null, 'rejected: still not started');
  t.equal(flagKey(ids.groupFlag, 'production'), undefined);
});

t.test(
  'approved by another person, the start is applied at the approval and audited naming them; a plan change meanwhile is held',
  async (t) => {
    const id = held(world.outcome('experimentStart', { principal: editor, ...production, key }, t0 + 3));
    // Someone else changing the plan the pending start will run: held too, naming the start's request.
    const change = world.outcome(
      'experimentUpdate',
      { principal: owner, ...production, key, received: jsonBody('{"plannedSubjects": 5000}') },
      t0 + 4,
    );
    t.notOk(change.applied, 'a change to the plan a pending start will run is held');
    if (!change.applied) t.same(change.request.alters, [id], 'naming the start it would alter');
    t.equal(experiment().plannedSubjects, 1000, 'the plan is unchanged');
    world.run('requestWithdraw', { requestId: held(change), principal: owner }, t0 + 5);

    t.match(
      refusedCommand(t, world, 'FORBIDDEN', () => world.run('requestApprove', { requestId: id, principal: editor }, t0 + 6)),
      /author/,
    );
    world.run('requestApprove', { requestId: id, principal: admin }, t0 + 10);
    t.equal(status(id), 'applied');
    t.match(experiment(), { startedAt: t0 + 10, stoppedAt: null }, 'running, started when approved');
    t.equal(flagKey(ids.groupFlag, 'production'), key, "the flag's state carries the key");
    world.store.resetReadTxn();
    const entries = world.store.listAudit(ids.multi, { limit: 50, before: null });
    const start = entries.find((e) => e.action === 'experiment.start');
    t.match(
      start,
      { actor: `user:${ids.editor}`, request: { id, approvedBy: [{ id: `user:${ids.admin}` }] } },
      'audited as the author, approved by the admin',
    );
  },
);

t.test('while it runs, a change to who gets which variant is refused on every path, held or not; others pass', async (t) => {
  // Asked for before it would run: a pending change request to the flag's percentage in production.
  world.run('experimentStop', { principal: bypass, ...production, key }, t0 + 12);
  const pending = held(
    world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: editor, patch: { trafficPercentage: 30 } }, t0 + 13),
  );
  t.ok(world.outcome('experimentStart', { principal: bypass, ...production, key }, t0 + 14).applied, 'a bypass token starts it at once');

  const names =
    /Flag search runs experiment "prod-exp" in production, and this change would alter who gets which variant there.*nothing was changed/;
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () => world.run('requestApprove', { requestId: pending, principal: admin }, t0 + 15)),
    names,
    'an approved change request that would alter it is refused at the approval',
  );
  t.equal(status(pending), 'pending', 'the request stays pending');
  t.match(
    refusedCommand(t, world, 'INVALID_REQUEST', () =>
      world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: owner, patch: { trafficPercentage: 40 } }, t0 + 16),
    ),
    names,
    'refused, not held as a request',
  );
  refusedCommand(t, world, 'INVALID_REQUEST', () =>
    world.run('flagPatch', { flagId: ids.groupFlag, env: 'production', principal: bypass, patch: { cohorts: ['qa', 'more'] } }, t0 + 17),
  );
  t.ok(
    world.outcome('flagDescribe', { flagId: ids.groupFlag, principal: editor, text: 'still running' }, t0 + 18).applied,
    'a description passes',
  );
  t.ok(world.outcome('flagTags', { flagId: ids.groupFlag, principal: editor, tags: ['exp'] }, t0 + 19).applied, 'tags pass');
  t.ok(
    world.outcome('flagPatch', { flagId: ids.groupFlag, env: 'staging', principal: editor, patch: { trafficPercentage: 20 } }, t0 + 20)
      .applied,
    'another environment passes',
  );
  world.run('requestWithdraw', { requestId: pending, principal: editor }, t0 + 21);

  // The stop is held as the start was, and applied when approved: the flag drops the key.
  const stop = held(world.outcome('experimentStop', { principal: editor, ...production, key }, t0 + 22));
  t.equal(flagKey(ids.groupFlag, 'production'), key, 'still running while the stop is pending');
  world.run('requestApprove', { requestId: stop, principal: owner }, t0 + 23);
  t.match(experiment(), { stoppedAt: t0 + 23 });
  t.equal(flagKey(ids.groupFlag, 'production'), undefined);
});

t.test(
  'in a project with no policy: an audience, a shared fragment, a delete or dropping its key is refused; stopping it passes',
  async (t) => {
    const single = { principal: kOperator, projectId: ids.single, env: null };
    world.run('flagPatch', { flagId: ids.flag, env: null, principal: kOperator, patch: { audienceId: ids.audience } });
    world.run('experimentCreate', {
      ...single,
      received: jsonBody(JSON.stringify({ ...experimentPlan(ids.flag, 1000), key: 'single-exp' })),
    });
    world.run('experimentStart', { ...single, key: 'single-exp' });
    const names = /Flag checkout runs experiment "single-exp", and this change would alter who gets which variant/;
    t.match(
      refusedCommand(t, world, 'INVALID_REQUEST', () =>
        world.run('flagPatch', { flagId: ids.flag, env: null, principal: kOperator, patch: { trafficPercentage: 80 } }),
      ),
      names,
    );
    t.match(
      refusedCommand(t, world, 'INVALID_REQUEST', () =>
        world.run('audienceUpdate', { principal: kOperator, audienceId: ids.audience, rules: [{ attribute: 'plan', values: ['gold'] }] }),
      ),
      names,
      'its audience',
    );
    t.match(
      refusedCommand(t, world, 'INVALID_REQUEST', () => world.run('flagDelete', { principal: kOperator, flagId: ids.flag })),
      /Flag checkout runs experiment "single-exp": it cannot be deleted while the experiment runs/,
    );

    // A typed flag whose rule names a shared fragment.
    world.run('fragmentCreate', {
      principal: kOperator,
      projectId: ids.single,
      received: jsonBody(JSON.stringify({ name: 'paying', rule: { '==': [{ var: 'plan' }, 'pro'] } })),
    });
    const typed = world.run('flagCreate', {
      projectId: ids.single,
      principal: kOperator,
      body: {
        name: 'typed',
        enabled: true,
        variants: { on: true, off: false },
        defaultVariant: 'off',
        targeting: { if: [{ $ref: 'paying' }, 'on', 'off'] },
      },
    }).id;
    world.run('experimentCreate', { ...single, received: jsonBody(JSON.stringify({ ...experimentPlan(typed, 1000), key: 'typed-exp' })) });
    world.run('experimentStart', { ...single, key: 'typed-exp' });
    t.match(
      refusedCommand(t, world, 'INVALID_REQUEST', () =>
        world.run('fragmentUpdate', {
          principal: kOperator,
          projectId: ids.single,
          name: 'paying',
          received: jsonBody('{"rule": {"==": [{"var": "plan"}, "gold"]}}'),
        }),
      ),
      /Flag typed runs experiment "typed-exp", and this change would alter/,
      'a shared fragment its rule names',
    );
    t.match(
      refusedCommand(t, world, 'INVALID_REQUEST', () =>
        world.run('flagPatch', { flagId: typed, env: null, principal: kOperator, patch: { variants: { on: true, off: true } } }),
      ),
      /typed-exp/,
      "a variant's value",
    );

    // Its key is not ended on the flag while it runs (running-keys.ts); stopped, the flag is free.
    t.match(
      refusedCommand(t, world, 'INVALID_REQUEST', () =>
        world.run('flagPatch', { flagId: ids.flag, env: null, principal: kOperator, patch: { experiment: null } }),
      ),
      /cannot be changed or dropped while the experiment runs/,
      'the key dropped',
    );
    world.run('experimentStop', { ...single, key: 'single-exp' });
    t.equal(world.run('flagPatch', { flagId: ids.flag, env: null, principal: kOperator, patch: { trafficPercentage: 80 } }).changed, true);
  },
);

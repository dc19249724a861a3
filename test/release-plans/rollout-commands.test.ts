// Progressive rollouts (issue 27, item 2) through the writer's own commands, in process: the first step
// at once, each next one when its hold ends (never before, never twice), pause, resume, skip, roll back;
// one rollout per flag (environment); a change made by hand to the percentage pauses it, saying who.
// Rollouts by variant weights: rollout-weights.test.ts.
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { kHour, kSteps, rolloutWorld } from '../helpers/rollout-world.js';
import { getRollout, listDueRollouts } from '../../src/release-plans/records.js';
import { getFlag } from '../../src/flags/records/flag-store.js';

const { world, ids, t0, read, percentage, audit, start, advance, act, refused } = rolloutWorld(t);

t.test('steps taken in order, each when its hold ends, once, audited as plan:<id>; then completed', async (t) => {
  const flag = world.run('flagCreate', {
    projectId: ids.single,
    principal: kOperator,
    body: { name: 'ramp', enabled: true, trafficPercentage: 0 },
  });
  const plan = start(flag.id, kSteps);
  t.match(plan, { status: 'running', current: 0, nextAt: t0 + kHour, initialPercentage: 0, createdBy: 'console' });
  t.same(plan.appliedAt, [t0], 'when each step was applied');
  t.equal(percentage(flag.id), 10, 'the first step at once');
  t.match(audit(ids.single)[0], {
    action: 'flag.patch',
    actor: `plan:${plan.id}`,
    changes: { trafficPercentage: { before: 0, after: 10 } },
  });
  t.match(audit(ids.single)[1], { action: 'rollout.start', actor: 'console' });

  t.equal(advance(plan.id, t0 + kHour - 1), null, 'not before its hold ends');
  t.same(
    listDueRollouts(read(), t0 + kHour, 10).map((p) => p.id),
    [plan.id],
  );
  t.match(advance(plan.id, t0 + kHour), { current: 1, status: 'running', nextAt: t0 + 2 * kHour });
  t.equal(percentage(flag.id), 50);
  const entries = audit(ids.single).length;
  t.equal(advance(plan.id, t0 + kHour + 1), null, 'a second ask (another node) does nothing');
  t.equal(audit(ids.single).length, entries, 'and writes nothing');
  t.same(advance(plan.id, t0 + 2 * kHour)?.appliedAt, [t0, t0 + kHour, t0 + 2 * kHour]);
  t.match(getRollout(read(), plan.id), { current: 2, status: 'completed', nextAt: null });
  t.equal(percentage(flag.id), 100);
  t.same(listDueRollouts(read(), t0 + 10 * kHour, 10), [], 'a completed rollout is due no more');

  // Rolled back after completing: the percentage before the first step.
  t.match(act(plan.id, 'rollback', t0 + 3 * kHour), { status: 'rolled-back' });
  t.equal(percentage(flag.id), 0);
  t.match(
    refused(t, 'INVALID_REQUEST', () => act(plan.id, 'resume', t0 + 3 * kHour)),
    /is rolled-back: it cannot resume now/,
  );
});

t.test('pause holds the step; resume sets it again; skip takes the next now; one rollout per flag', async (t) => {
  const flag = world.run('flagCreate', {
    projectId: ids.single,
    principal: kOperator,
    body: { name: 'ramp-2', enabled: true, trafficPercentage: 5 },
  });
  const plan = start(flag.id, kSteps);
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(flag.id, kSteps)),
    /already has a running rollout/,
  );
  t.match(act(plan.id, 'pause', t0 + 10), { status: 'paused', nextAt: null, pausedReason: 'paused by console' });
  t.equal(advance(plan.id, t0 + 5 * kHour), null, 'a paused rollout takes no step');
  t.equal(percentage(flag.id), 10);
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(flag.id, kSteps)),
    /already has a paused rollout/,
  );
  t.match(
    act(plan.id, 'resume', t0 + 5 * kHour),
    { status: 'running', current: 0, nextAt: t0 + 6 * kHour, pausedReason: null, appliedAt: [t0 + 5 * kHour] },
    'the step set again: applied anew',
  );
  t.match(act(plan.id, 'skip', t0 + 5 * kHour + 1), {
    current: 1,
    nextAt: t0 + 6 * kHour + 1,
    appliedAt: [t0 + 5 * kHour, t0 + 5 * kHour + 1],
  });
  t.equal(percentage(flag.id), 50);
  t.match(act(plan.id, 'rollback', t0 + 5 * kHour + 2), { status: 'rolled-back' });
  t.equal(percentage(flag.id), 5, 'back to the percentage before the first step');
  t.match(start(flag.id, kSteps, null, t0 + 6 * kHour), { status: 'running' }, 'a new rollout once the last ended');
});

t.test('a change made by hand pauses the rollout at its next step, naming who, and is not overwritten', async (t) => {
  const flag = world.run('flagCreate', { projectId: ids.single, principal: kOperator, body: { name: 'ramp-3', enabled: true } });
  const plan = start(flag.id, kSteps);
  world.run('flagPatch', {
    flagId: flag.id,
    env: null,
    principal: { kind: 'token', tokenId: world.tokenIds.write! },
    patch: { trafficPercentage: 30 },
  });
  const paused = advance(plan.id, t0 + kHour);
  t.match(paused, {
    status: 'paused',
    current: 0,
    pausedReason: /changed by hand to 30 \(step 1 set 10\) by ci-write \(token:/,
  });
  t.equal(percentage(flag.id), 30, "the hand's change stands");
  t.match(audit(ids.single)[0], { action: 'rollout.pause', actor: `plan:${plan.id}` });
  t.match(act(plan.id, 'resume', t0 + kHour + 1), { status: 'running' });
  t.equal(percentage(flag.id), 10, 'resume sets its step again');
});

t.test('per environment on a group flag, and a token limited to staging acts on staging only', async (t) => {
  const principal = { kind: 'token', tokenId: world.tokenIds.stagingWrite! } as const;
  const begin = (env: string) =>
    world.run('rolloutStart', { principal, flagId: ids.groupFlag, env, body: { steps: kSteps }, guardMetrics: null }, t0);
  const staging = begin('staging');
  t.match(staging, { env: 'staging', status: 'running', createdBy: `token:${world.tokenIds.stagingWrite}` });
  t.match(getFlag(read(), ids.groupFlag), { environments: { staging: { trafficPercentage: 10 } } });
  refused(t, 'ENVIRONMENT_NOT_PERMITTED', () => begin('production'));
  const production = start(ids.groupFlag, kSteps, 'production');
  refused(t, 'ENVIRONMENT_NOT_PERMITTED', () => world.run('rolloutAct', { rolloutId: production.id, action: 'pause', principal }, t0));
  const otherProject = { kind: 'token', tokenId: world.tokenIds.write! } as const;
  t.match(
    refused(t, 'NOT_FOUND', () => world.run('rolloutAct', { rolloutId: production.id, action: 'pause', principal: otherProject }, t0)),
    /^No rollout with this id exists in this project\.$/,
  );
});

t.test('steps are checked: holds, the order, the bounds; nothing written when refused', async (t) => {
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.flag2, [{ trafficPercentage: 10 }, { trafficPercentage: 50 }])),
    /steps\[0\]\.holdMs is required/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.flag2, [{ trafficPercentage: 50, holdMs: kHour }, { trafficPercentage: 10 }])),
    /steps\[1\]\.trafficPercentage goes down \(50 to 10\)/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.flag2, [{ trafficPercentage: 100, holdMs: kHour }])),
    /the last step is held for good/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.flag2, [{ trafficPercentage: 101 }])),
    /^steps\[0\]\.trafficPercentage must be a whole number between 0 and 100$/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.flag2, [])),
    /steps must be a non-empty array/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(ids.groupFlag, kSteps)),
    /add the "env" query parameter/,
  );
  refused(t, 'NOT_FOUND', () => start('flg_nope', kSteps));
});

t.test("a flag in Unleash's model takes no rollout: its strategies decide, not the percentage", async (t) => {
  const flag = world.run('flagCreate', {
    projectId: ids.single,
    principal: kOperator,
    body: { name: 'ramp-unleash', enabled: true, trafficPercentage: 0, unleash: { strategies: [{ name: 'default' }] } },
  });
  t.match(
    refused(t, 'INVALID_REQUEST', () => start(flag.id, kSteps)),
    /is in Unleash's model/,
  );
  t.equal(percentage(flag.id), 0, 'nothing changed');
});

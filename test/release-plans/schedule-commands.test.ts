// Scheduled changes (issue 27, item 1) through the writer's own commands, in process: a change is checked
// as the PATCH it will be when it is made, applied once when due (audited as plan:<id>), never before,
// never twice; a cancelled one never; one the flag no longer accepts is recorded as failed, with why.
import t, { type Test } from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { kMaxPendingSchedules } from '../../src/release-plans/schedule-commands.js';
import { tempDataDir } from '../helpers/server.js';
import { refusedCommand } from '../helpers/refused.js';
import { buildWorld } from '../helpers/world.js';
import { kEveryChange } from '../helpers/store-pages.js';
import { listDueSchedules, listSchedules, putSchedule } from '../../src/release-plans/records.js';
import { getFlag } from '../../src/flags/records/flag-store.js';

const world = buildWorld(tempDataDir());
t.teardown(() => world.store.close());
const { ids } = world;
const kHour = 3_600_000;
const t0 = Date.now();

const schedule = (flagId: string, env: string | null, at: number, patch: Record<string, unknown>, now = t0) =>
  world.run('scheduleCreate', { principal: kOperator, flagId, env, body: { at, patch } }, now);
const run = (scheduleId: string, now: number) => world.run('scheduleRun', { scheduleId }, now);
const read = () => {
  world.store.resetReadTxn();
  return world.store;
};
const audit = (projectId: string) => read().listAudit(projectId, { limit: 1000, before: null });

const refused = (t: Test, code: string, fn: () => unknown) => refusedCommand(t, world, code, fn);

t.test('made: recorded pending, audited, listed by due time; applied once when due, as plan:<id>', async (t) => {
  const later = schedule(ids.flag, null, t0 + 2 * kHour, { enabled: false });
  const sooner = schedule(ids.flag, null, t0 + kHour, { trafficPercentage: 80 });
  t.match(sooner, { status: 'pending', flagId: ids.flag, env: null, patch: { trafficPercentage: 80 }, createdBy: 'console', doneAt: null });
  t.same(
    listSchedules(read(), ids.single, kEveryChange).items.map((s) => s.id),
    [sooner.id, later.id],
    'by due time',
  );
  t.match(audit(ids.single)[0], { action: 'schedule.create', actor: 'console', flagId: ids.flag });

  t.equal(run(sooner.id, t0 + kHour - 1), null, 'not before its time');
  t.match(getFlag(read(), ids.flag), { state: { trafficPercentage: 50 } }, 'the flag as it was');
  t.same(
    listDueSchedules(read(), t0 + kHour, 10).map((s) => s.id),
    [sooner.id],
    'due at its time, the later one not yet',
  );

  const done = run(sooner.id, t0 + kHour + 5);
  t.match(done, { status: 'applied', outcome: 'changed', doneAt: t0 + kHour + 5 });
  t.match(getFlag(read(), ids.flag), { state: { trafficPercentage: 80 } });
  t.match(audit(ids.single)[0], {
    action: 'flag.patch',
    actor: `plan:${sooner.id}`,
    actorName: `scheduled change ${sooner.id}`,
    changes: { trafficPercentage: { before: 50, after: 80 } },
  });
  const entries = audit(ids.single).length;
  t.equal(run(sooner.id, t0 + kHour + 10), null, 'a second run (another node, a retry) does nothing');
  t.equal(audit(ids.single).length, entries, 'and writes nothing');
  t.same(
    listDueSchedules(read(), t0 + 3 * kHour, 10).map((s) => s.id),
    [later.id],
    'an applied change is due no more',
  );
  t.match(run(later.id, t0 + 3 * kHour), { status: 'applied', outcome: 'changed' }, 'a late run applies it');
  t.match(run(schedule(ids.flag, null, t0 + 4 * kHour, { enabled: false }).id, t0 + 4 * kHour), {
    status: 'applied',
    outcome: 'no change',
  });
});

t.test('per environment on a group flag, with typed variants, checked as the PATCH it will be', async (t) => {
  const change = schedule(ids.groupFlag, 'production', t0 + kHour, {
    enabled: true,
    trafficPercentage: 100,
    variants: { a: 'x', b: 'y' },
    defaultVariant: 'b',
  });
  t.match(run(change.id, t0 + kHour), { status: 'applied', outcome: 'changed' });
  t.match(getFlag(read(), ids.groupFlag), { environments: { production: { enabled: true, typed: { defaultVariant: 'b' } } } });

  t.match(
    refused(t, 'INVALID_REQUEST', () => schedule(ids.groupFlag, null, t0 + kHour, { enabled: true })),
    /add the "env" query parameter/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => schedule(ids.flag, null, t0 + kHour, { enabled: 'yes', nope: 1 })),
    /patch: unknown field "nope"; patch: "enabled" must be true or false/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => schedule(ids.groupFlag, 'production', t0 + kHour, { defaultVariant: 'zzz' })),
    /patch: "defaultVariant": default variant "zzz" is not one of the variants/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => schedule(ids.flag, null, t0 + kHour, {})),
    /patch has no fields/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => schedule(ids.flag, null, t0, { enabled: true })),
    /at must be in the future/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => schedule(ids.flag, null, t0 + 6 * 366 * 24 * kHour, { enabled: true })),
    /at most five years/,
  );
  t.match(
    refused(t, 'INVALID_REQUEST', () => schedule(ids.flag, null, t0 + kHour, { audienceId: 'aud_nope' })),
    /Audience "aud_nope" does not exist/,
  );
  refused(t, 'NOT_FOUND', () => schedule('flg_nope', null, t0 + kHour, { enabled: true }));
});

t.test(
  "a token limited to staging schedules and cancels staging, not production; another project's change is not found; a Viewer schedules nothing",
  async (t) => {
    const principal = { kind: 'token', tokenId: world.tokenIds.stagingWrite! } as const;
    const make = (env: string) =>
      world.run('scheduleCreate', { principal, flagId: ids.groupFlag, env, body: { at: t0 + kHour, patch: { enabled: true } } }, t0);
    const staging = make('staging');
    t.match(staging, {
      status: 'pending',
      env: 'staging',
      createdBy: `token:${world.tokenIds.stagingWrite}`,
      createdByName: 'staging-only',
    });
    t.match(
      refused(t, 'ENVIRONMENT_NOT_PERMITTED', () => make('production')),
      /limited to: staging/,
    );
    const production = schedule(ids.groupFlag, 'production', t0 + kHour, { enabled: true });
    const cancel = (scheduleId: string) => world.run('scheduleCancel', { scheduleId, principal }, t0);
    t.match(
      refused(t, 'ENVIRONMENT_NOT_PERMITTED', () => cancel(production.id)),
      /environment "production"/,
    );
    t.match(cancel(staging.id), { status: 'cancelled', outcome: 'cancelled by staging-only' });
    const otherProject = { kind: 'token', tokenId: world.tokenIds.write! } as const;
    t.match(
      refused(t, 'NOT_FOUND', () => world.run('scheduleCancel', { scheduleId: production.id, principal: otherProject }, t0)),
      /^No scheduled change with this id exists in this project\.$/,
    );
    refused(t, 'FORBIDDEN', () =>
      world.run(
        'scheduleCreate',
        {
          flagId: ids.flag,
          env: null,
          body: { at: t0 + kHour, patch: { enabled: true } },
          principal: { kind: 'user', userId: ids.viewer },
        },
        t0,
      ),
    );
  },
);

t.test('cancelled: never applied; only a pending change can be cancelled', async (t) => {
  const change = schedule(ids.flag2, null, t0 + kHour, { enabled: true });
  const cancelled = world.run('scheduleCancel', { scheduleId: change.id, principal: kOperator }, t0 + 10);
  t.match(cancelled, { status: 'cancelled', outcome: 'cancelled by console', doneAt: t0 + 10 });
  t.match(audit(ids.single)[0], { action: 'schedule.cancel', actor: 'console' });
  t.equal(run(change.id, t0 + 2 * kHour), null, 'never applied');
  t.match(getFlag(read(), ids.flag2), { state: { enabled: false } });
  t.match(
    refused(t, 'INVALID_REQUEST', () => world.run('scheduleCancel', { scheduleId: change.id, principal: kOperator }, t0 + 20)),
    /is cancelled .* only a pending one/,
  );
  refused(t, 'NOT_FOUND', () => world.run('scheduleCancel', { scheduleId: 'sch_nope', principal: kOperator }, t0));
});

t.test('a change the flag no longer accepts when due is recorded as failed, with why, and audited', async (t) => {
  const flag = world.run('flagCreate', { projectId: ids.single, principal: kOperator, body: { name: 'doomed' } });
  const change = schedule(flag.id, null, t0 + kHour, { enabled: true });
  world.run('flagDelete', { principal: kOperator, flagId: flag.id });
  const done = run(change.id, t0 + kHour);
  t.match(done, { status: 'failed', outcome: /^Not found: / });
  t.match(audit(ids.single)[0], { action: 'schedule.fail', actor: `plan:${change.id}` });
  t.equal(run(change.id, t0 + kHour + 1), null, 'a failed change is not tried again');
});

t.test(`a project holds at most ${kMaxPendingSchedules} pending changes`, async (t) => {
  const project = world.run('projectCreate', { principal: kOperator, name: 'Busy', orgId: ids.orgA, kind: 'single' });
  const flag = world.run('flagCreate', { projectId: project.id, principal: kOperator, body: { name: 'f' } });
  world.store.transact((w) => {
    for (let i = 0; i < kMaxPendingSchedules; i++) {
      putSchedule(w, {
        id: `sch_busy${i}`,
        projectId: project.id,
        flagId: flag.id,
        env: null,
        patch: { enabled: true },
        at: t0 + kHour,
        createdAt: t0,
        createdBy: 'console',
        createdByName: 'console',
        status: 'pending',
        doneAt: null,
        outcome: null,
      });
    }
  });
  t.match(
    refused(t, 'INVALID_REQUEST', () => schedule(flag.id, null, t0 + kHour, { enabled: true })),
    /already has 1000 pending/,
  );
  world.run('scheduleCancel', { scheduleId: 'sch_busy0', principal: kOperator }, t0);
  t.match(schedule(flag.id, null, t0 + kHour, { enabled: true }), { status: 'pending' }, 'room again after a cancel');
});

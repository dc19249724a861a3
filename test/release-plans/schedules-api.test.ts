// Scheduled changes (issue 27, item 1) over the Management API, against the real server: a change
// scheduled an hour ahead is listed pending, and once the service clock (moved by the test hook, not
// slept through) passes its time the scheduler applies it: the Evaluation API and the Management API
// serve it, the record says applied, and the audit names actor plan:<id>. Typed variants, targeting and a
// group flag's environment too; a cancelled change is never applied; every refusal is the spec's envelope
// and writes nothing; a change the flag no longer accepts when due is recorded as failed, with why, and
// audited, and the server goes on serving.
import t, { type Test } from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { advanceClock } from '../helpers/test-hooks.js';
import { startWorldServer } from '../helpers/world-server.js';
import { kEveryChange } from '../helpers/store-pages.js';
import { listSchedules as storedSchedules } from '../../src/release-plans/records.js';

const { server, world } = await startWorldServer(t, { FLAGWIRE_TEST_HOOKS: '1' });
const { ids, secrets, tokenIds } = world;
const kHourMs = 3_600_000;
const kScheduleKeys = ['id', 'flagId', 'env', 'patch', 'at', 'createdAt', 'createdBy', 'createdByName', 'status', 'doneAt', 'outcome'];

/** The server's clock (the test hook moves it; an advance of 0 only reads it). */
const serverNow = () => advanceClock(server, 0);
const schedule = (flagId: string, body: unknown, { token = secrets.write, query = '' } = {}) =>
  call(server.baseUrl, 'POST', `/api/v1/flags/${flagId}/schedules${query}`, { token, body });
const cancel = (id: string, token = secrets.write) => call(server.baseUrl, 'POST', `/api/v1/schedules/${id}/cancel`, { token });
const listSchedules = async (token = secrets.read): Promise<any[]> => {
  const r = await call(server.baseUrl, 'GET', '/api/v1/schedules', { token });
  if (r.status !== 200) throw new Error(`GET /api/v1/schedules: ${r.status} ${r.text}`);
  return r.json.schedules;
};
const scheduleOf = async (id: string, token = secrets.read) => (await listSchedules(token)).find((s) => s.id === id);
const evaluate = (path: string) => call(server.baseUrl, 'GET', `/v1/flags/${path}`);
const getFlag = (id: string, query = '', token = secrets.read) => call(server.baseUrl, 'GET', `/api/v1/flags/${id}${query}`, { token });

async function createFlag(body: Record<string, unknown>, token = secrets.write): Promise<string> {
  const r = await call(server.baseUrl, 'POST', '/api/v1/flags', { token, body });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.json.id;
}

/** A project's audit (the console's `audit`, newest first). */
async function audit(projectId: string): Promise<any[]> {
  const r = await cli(server.dataDir, ['audit', projectId, '--limit', '1000']);
  if (r.code !== 0) throw new Error(`audit: ${r.stdout} ${r.stderr}`);
  return r.json.entries;
}

/**
 * Polls until `done` answers true. The bound only catches a hang: the scheduler polls every 500 ms, and a
 * loaded 2-core machine may take seconds more, so it is far above anything a working server needs.
 */
async function until(t: Test, what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await done())) {
    if (Date.now() > deadline) {
      t.fail(`not within 60 s: ${what}`);
      throw new Error(`not within 60 s: ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A refused request: the status, the spec's envelope, and not one record changed. */
async function refused(t: Test, status: number, error: string, request: () => Promise<{ status: number; json: any }>): Promise<string> {
  const before = world.snapshot();
  const schedulesBefore =
    JSON.stringify(storedSchedules(world.store, ids.single, kEveryChange)) +
    JSON.stringify(storedSchedules(world.store, ids.multi, kEveryChange));
  const r = await request();
  t.equal(r.status, status, `${status} ${error}`);
  t.strictSame(Object.keys(r.json).sort(), ['detail', 'docs', 'error'], 'the error envelope');
  t.equal(r.json.error, error);
  t.match(r.json.docs, /#[a-z-]+$/);
  t.equal(world.snapshot(), before, 'nothing changed');
  world.store.resetReadTxn();
  t.equal(
    JSON.stringify(storedSchedules(world.store, ids.single, kEveryChange)) +
      JSON.stringify(storedSchedules(world.store, ids.multi, kEveryChange)),
    schedulesBefore,
    'no scheduled change recorded or changed',
  );
  return r.json.detail;
}

t.test('scheduled an hour ahead: pending until the clock passes it, then applied once, served and audited as plan:<id>', async (t) => {
  const flagId = await createFlag({ name: 'sch-launch', enabled: false, trafficPercentage: 100 });
  t.equal((await evaluate(flagId)).json.enabled, false);
  const at = (await serverNow()) + kHourMs;
  const created = await schedule(flagId, { at, patch: { enabled: true } });
  t.equal(created.status, 201, created.text);
  t.strictSame(Object.keys(created.json), kScheduleKeys, "the record's fields, without its project");
  t.match(created.json, {
    id: /^sch_/,
    flagId,
    env: null,
    patch: { enabled: true },
    at,
    createdBy: `token:${tokenIds.write}`,
    createdByName: 'ci-write',
    status: 'pending',
    doneAt: null,
    outcome: null,
  });
  const id = created.json.id as string;
  t.strictSame(await scheduleOf(id), created.json, 'GET /api/v1/schedules lists it pending, as created (a read token)');
  const [made] = await audit(ids.single);
  t.match(made, {
    actor: `token:${tokenIds.write}`,
    action: 'schedule.create',
    flagId,
    changes: { schedule: { before: null, after: { id, at, patch: { enabled: true } } } },
  });

  // Not yet due: a minute short of it, nothing happens (the scheduler polls every 500 ms; give it a few).
  await advanceClock(server, 3540);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal((await evaluate(flagId)).json.enabled, false, 'not applied before its time');
  t.equal((await scheduleOf(id)).status, 'pending');

  await advanceClock(server, 61);
  await until(t, 'the Evaluation API serves the change', async () => (await evaluate(flagId)).json.enabled === true);
  t.equal((await getFlag(flagId)).json.enabled, true, 'the Management API shows it');
  const done = await scheduleOf(id);
  t.match(done, { status: 'applied', outcome: 'changed' });
  t.ok(done.doneAt >= at, 'done at or after its time');
  const patches = (await audit(ids.single)).filter((e) => e.actor === `plan:${id}`);
  t.equal(patches.length, 1, 'one audit entry by the scheduled change');
  t.match(patches[0], {
    action: 'flag.patch',
    actorName: `scheduled change ${id}`,
    flagId,
    env: null,
    changes: { enabled: { before: false, after: true } },
  });

  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal((await audit(ids.single)).filter((e) => e.actor === `plan:${id}`).length, 1, 'still once, polls later');
  t.equal(
    (await refused(t, 400, 'Invalid request', () => cancel(id))).replace(id, 'ID'),
    'Scheduled change ID is applied (changed); only a pending one can be cancelled.',
  );
});

t.test('a change that is already the flag state is applied as "no change", with no flag.patch', async (t) => {
  const flagId = await createFlag({ name: 'sch-same', enabled: true, trafficPercentage: 30 });
  const created = await schedule(flagId, { at: (await serverNow()) + kHourMs, patch: { trafficPercentage: 30 } });
  t.equal(created.status, 201, created.text);
  await advanceClock(server, 3601);
  await until(t, 'the change is done', async () => (await scheduleOf(created.json.id)).status !== 'pending');
  t.match(await scheduleOf(created.json.id), { status: 'applied', outcome: 'no change' });
  t.equal((await audit(ids.single)).filter((e) => e.actor === `plan:${created.json.id}`).length, 0, 'nothing to audit');
});

t.test("typed variants, targeting, defaultVariant, and a group flag's environment; in due order", async (t) => {
  const colours = { red: '#f00', green: '#0f0', blue: '#00f' };
  const colour = await createFlag({ name: 'sch-colour', enabled: true, trafficPercentage: 100, variants: colours, defaultVariant: 'red' });
  const rule = { if: [{ ends_with: [{ var: 'email' }, '@example.com'] }, 'blue', null] };
  const now = await serverNow();
  const typed = await schedule(colour, { at: now + kHourMs, patch: { defaultVariant: 'green', targeting: rule } });
  t.equal(typed.status, 201, typed.text);
  const production = await schedule(
    ids.groupFlag,
    { at: now + kHourMs, patch: { enabled: true, trafficPercentage: 100 } },
    { token: secrets.multiWrite, query: '?env=production' },
  );
  t.equal(production.status, 201, production.text);
  t.match(production.json, { env: 'production', createdByName: 'platform-write' });
  // Two changes of one flag: the later one wins, whatever order they were made in.
  const banner = await createFlag({ name: 'sch-ramp', enabled: true, trafficPercentage: 0 });
  const second = await schedule(banner, { at: now + 2 * kHourMs, patch: { trafficPercentage: 50 } });
  const first = await schedule(banner, { at: now + kHourMs, patch: { trafficPercentage: 10 } });
  t.equal(second.status, 201);
  t.equal(first.status, 201);
  t.strictSame(
    (await listSchedules()).filter((s) => s.flagId === banner).map((s) => s.id),
    [first.json.id, second.json.id],
    'listed by due time',
  );
  t.equal((await evaluate(`${colour}`)).json.variant, 'red');
  t.equal((await evaluate(`${ids.groupFlag}?env=production&cohort=nobody`)).json.enabled, false);

  await advanceClock(server, 2 * 3600 + 1);
  await until(t, 'all four applied', async () => {
    const mine = [typed, production, first, second].map((r) => r.json.id);
    const all = [...(await listSchedules()), ...(await listSchedules(secrets.multiRead))];
    return all.filter((s) => mine.includes(s.id) && s.status === 'applied').length === 4;
  });
  t.match(await evaluate(`${colour}`), { status: 200, json: { enabled: true, variant: 'green', value: '#0f0' } });
  t.match(await evaluate(`${colour}?email=ada%40example.com`), { json: { variant: 'blue', value: '#00f' } });
  t.match((await getFlag(colour)).json, { variants: colours, defaultVariant: 'green', targeting: rule });
  t.equal((await evaluate(`${ids.groupFlag}?env=production&cohort=nobody`)).json.enabled, true);
  const group = await getFlag(ids.groupFlag, '', secrets.multiRead);
  t.match(group.json.environments, {
    production: { enabled: true, trafficPercentage: 100 },
    staging: { enabled: true, trafficPercentage: 100 },
  });
  t.match(
    (await audit(ids.multi)).find((e) => e.actor === `plan:${production.json.id}`),
    {
      action: 'flag.patch',
      env: 'production',
      changes: { enabled: { before: false, after: true } },
    },
  );
  t.equal((await getFlag(banner)).json.trafficPercentage, 50, 'the later change last');
  const ramp = (await audit(ids.single)).filter((e) => e.flagId === banner && e.action === 'flag.patch').reverse();
  t.strictSame(
    ramp.map((e) => [e.actor, e.changes.trafficPercentage]),
    [
      [`plan:${first.json.id}`, { before: 0, after: 10 }],
      [`plan:${second.json.id}`, { before: 10, after: 50 }],
    ],
    'applied in due order, each once',
  );
});

t.test('cancel: a cancelled change is never applied; cancelling again is a 400', async (t) => {
  const flagId = await createFlag({ name: 'sch-cancelled', enabled: false, trafficPercentage: 100 });
  const created = await schedule(flagId, { at: (await serverNow()) + kHourMs, patch: { enabled: true } });
  const id = created.json.id as string;
  const cancelled = await cancel(id);
  t.equal(cancelled.status, 200, cancelled.text);
  t.strictSame(Object.keys(cancelled.json), kScheduleKeys);
  t.match(cancelled.json, { id, status: 'cancelled', outcome: 'cancelled by ci-write', patch: { enabled: true } });
  t.type(cancelled.json.doneAt, 'number');
  t.strictSame(await scheduleOf(id), cancelled.json, 'listed as cancelled');
  t.match((await audit(ids.single))[0], {
    actor: `token:${tokenIds.write}`,
    action: 'schedule.cancel',
    flagId,
    changes: { schedule: { before: 'pending', after: 'cancelled' } },
  });
  t.equal(
    (await refused(t, 400, 'Invalid request', () => cancel(id))).replace(id, 'ID'),
    'Scheduled change ID is cancelled (cancelled by ci-write); only a pending one can be cancelled.',
  );

  // A change due at the same time, not cancelled: once it is applied, the scheduler has been past both.
  const witness = await createFlag({ name: 'sch-witness', enabled: false, trafficPercentage: 100 });
  const other = await schedule(witness, { at: created.json.at, patch: { enabled: true } });
  t.equal(other.status, 201);
  await advanceClock(server, 3601);
  await until(t, 'the witness change is applied', async () => (await scheduleOf(other.json.id)).status === 'applied');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal((await evaluate(flagId)).json.enabled, false, 'the cancelled change was not applied');
  t.strictSame(await scheduleOf(id), cancelled.json, 'still cancelled, as it was');
  t.equal((await audit(ids.single)).filter((e) => e.actor === `plan:${id}`).length, 0);
});

t.test('refusals: the envelope, the reason, and nothing written', async (t) => {
  const now = await serverNow();
  const at = now + kHourMs;
  t.match(
    await refused(t, 400, 'Invalid request', () => schedule(ids.flag, { at: now - 1000, patch: { enabled: false } })),
    /^at must be in the future \(now is \d+\)$/,
  );
  const badPatch = { trafficPercentage: 101, colour: 'red' };
  const patchSays = await refused(t, 400, 'Invalid request', () =>
    call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flag}`, { token: secrets.write, body: badPatch }),
  );
  t.equal(
    await refused(t, 400, 'Invalid request', () => schedule(ids.flag, { at, patch: badPatch })),
    'patch: unknown field "colour"; patch: "trafficPercentage" must be a whole number between 0 and 100',
  );
  t.equal(
    patchSays,
    'unknown field "colour"; "trafficPercentage" must be a whole number between 0 and 100',
    "PATCH's own problems, the same",
  );
  t.match(
    await refused(t, 400, 'Invalid request', () => schedule(ids.flag, { at, patch: { audienceId: ids.audienceB } })),
    /^patch: Audience "aud_\w+" does not exist on this project\.$/,
    "another project's audience",
  );
  t.equal(
    await refused(t, 400, 'Invalid request', () => schedule(ids.flag, { at, patch: {} })),
    'patch has no fields: send at least one key PATCH accepts',
  );
  t.equal(
    await refused(t, 400, 'Invalid request', () => schedule(ids.flag, { at: 'tomorrow', patch: { enabled: true } })),
    'at must be a time in Unix milliseconds',
  );
  t.equal(
    await refused(t, 400, 'Invalid request', () => schedule(ids.flag, { at: at + 0.5, patch: { enabled: true } })),
    'at must be a time in Unix milliseconds',
  );
  t.equal(
    await refused(t, 400, 'Invalid request', () => schedule(ids.flag, { at, patch: [] })),
    'patch must be a PATCH body (a JSON object)',
  );
  t.equal(
    await refused(t, 400, 'Invalid request', () => schedule(ids.flag, { at, patch: { enabled: true }, extra: 1 })),
    'unknown field "extra"',
  );
  t.equal(await refused(t, 400, 'Invalid request', () => schedule(ids.flag, { patch: { enabled: true } })), 'at is required');
  t.equal(
    await refused(t, 400, 'Invalid request', () =>
      schedule(ids.groupFlag, { at, patch: { enabled: true } }, { token: secrets.multiWrite }),
    ),
    'This flag belongs to a multi-environment project: add the "env" query parameter (valid environments: staging, production).',
    'a group flag without ?env=',
  );
  const unknown = 'No flag with that id exists in this project.';
  t.equal(await refused(t, 404, 'Not found', () => schedule('flg_nope', { at, patch: { enabled: true } })), unknown, 'an unknown flag');
  t.equal(
    await refused(t, 404, 'Not found', () => schedule(ids.flagB, { at, patch: { enabled: true } })),
    unknown,
    "another project's flag",
  );
  const notProduction = 'This token may not access environment "production"; it is limited to: staging.';
  t.equal(
    await refused(t, 403, 'Environment not permitted', () =>
      schedule(ids.groupFlag, { at, patch: { enabled: true } }, { token: secrets.stagingWrite, query: '?env=production' }),
    ),
    notProduction,
  );
  const readOnly = 'This token has read permission; this endpoint needs write permission.';
  t.equal(
    await refused(t, 403, 'Insufficient permission', () => schedule(ids.flag, { at, patch: { enabled: true } }, { token: secrets.read })),
    readOnly,
  );
  await refused(t, 401, 'Missing bearer token', () =>
    call(server.baseUrl, 'POST', `/api/v1/flags/${ids.flag}/schedules`, { body: { at, patch: { enabled: true } } }),
  );

  // Cancel: unknown, another project's, a read token, an environment the token may not touch.
  const production = await schedule(
    ids.groupFlag,
    { at, patch: { cohorts: ['x'] } },
    { token: secrets.multiWrite, query: '?env=production' },
  );
  t.equal(production.status, 201, production.text);
  const noChange = 'No scheduled change with this id exists in this project.';
  t.equal(await refused(t, 404, 'Not found', () => cancel('sch_nope')), noChange);
  t.equal(await refused(t, 404, 'Not found', () => cancel(production.json.id, secrets.writeB)), noChange);
  t.equal(await refused(t, 403, 'Insufficient permission', () => cancel(production.json.id, secrets.multiRead)), readOnly);
  t.equal(await refused(t, 403, 'Environment not permitted', () => cancel(production.json.id, secrets.stagingWrite)), notProduction);
  // The staging-only token may schedule and cancel in staging.
  const staging = await schedule(ids.groupFlag, { at, patch: { cohorts: ['y'] } }, { token: secrets.stagingWrite, query: '?env=staging' });
  t.equal(staging.status, 201, staging.text);
  t.match(await cancel(staging.json.id, secrets.stagingWrite), {
    status: 200,
    json: { status: 'cancelled', outcome: 'cancelled by staging-only' },
  });
  t.equal((await cancel(production.json.id, secrets.multiWrite)).status, 200);
  t.strictSame(await listSchedules(secrets.writeB), [], "another project's token lists none of them");
});

t.test('a change the flag no longer accepts when due: failed, with why, audited; the server goes on', async (t) => {
  const deleted = await createFlag({ name: 'sch-deleted', enabled: false });
  const colours = { red: '#f00', green: '#0f0' };
  const typed = await createFlag({ name: 'sch-orphan', enabled: true, trafficPercentage: 100, variants: colours, defaultVariant: 'red' });
  const now = await serverNow();
  const onDeleted = await schedule(deleted, { at: now + kHourMs, patch: { enabled: true } });
  const onTyped = await schedule(typed, { at: now + kHourMs, patch: { defaultVariant: 'green' } });
  t.equal(onDeleted.status, 201, onDeleted.text);
  t.equal(onTyped.status, 201, onTyped.text);
  // Meanwhile: the flag is deleted from the console; the variant the change names is removed.
  t.equal((await cli(server.dataDir, ['flag', 'delete', deleted])).code, 0);
  const dropped = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${typed}`, {
    token: secrets.write,
    body: { variants: { red: '#f00', blue: '#00f' } },
  });
  t.equal(dropped.status, 200, dropped.text);

  await advanceClock(server, 3601);
  await until(t, 'both done', async () => {
    const all = await listSchedules();
    return [onDeleted, onTyped].every((r) => all.find((s) => s.id === r.json.id)?.status !== 'pending');
  });
  const gone = await scheduleOf(onDeleted.json.id);
  t.match(gone, { status: 'failed', outcome: /^Not found: .*flag/i });
  t.type(gone.doneAt, 'number');
  const orphan = await scheduleOf(onTyped.json.id);
  t.match(orphan, { status: 'failed', outcome: /^Invalid request: .*green/ });
  const entries = await audit(ids.single);
  for (const [change, flagId] of [
    [gone, deleted],
    [orphan, typed],
  ] as const) {
    const mine = entries.filter((e) => e.actor === `plan:${change.id}`);
    t.equal(mine.length, 1, `${change.id}: one audit entry`);
    t.match(mine[0], {
      action: 'schedule.fail',
      actorName: `scheduled change ${change.id}`,
      flagId,
      changes: { schedule: { before: 'pending', after: change.outcome } },
    });
  }
  t.match((await getFlag(typed)).json, { variants: { red: '#f00', blue: '#00f' }, defaultVariant: 'red' }, 'the flag untouched');
  t.match(await evaluate(typed), { status: 200, json: { variant: 'red' } }, 'the server still serves');
  t.equal((await call(server.baseUrl, 'GET', '/health')).status, 200);
  t.equal(server.proc.exitCode, null, 'still running');
  t.match(server.logs(), /scheduled change failed/, 'logged at warn');
});

t.test('OpenAPI: the three routes', async (t) => {
  const doc = (await call(server.baseUrl, 'GET', '/api/v1/openapi.json')).json;
  t.match(doc.paths['/api/v1/flags/{flag_id}/schedules'], {
    post: { operationId: 'scheduleFlagChange', responses: { '201': {}, '400': {}, '403': {}, '404': {} } },
  });
  t.match(doc.paths['/api/v1/schedules'], { get: { operationId: 'listSchedules', responses: { '200': {} } } });
  t.match(doc.paths['/api/v1/schedules/{schedule_id}/cancel'], {
    post: { operationId: 'cancelSchedule', responses: { '200': {}, '400': {}, '404': {} } },
  });
  t.ok(doc.components.schemas.ScheduleCreate && doc.components.schemas.ScheduledChange && doc.components.schemas.ScheduleList);
});

// What an approved release plan will read is guarded from its approval (issue 54, items 1 and 5; docs/approvals.md:
// Release plans), against the real server, the plans falling due on its clock (the test hook moves it on):
// a shared fragment or an audience that an approved scheduled change will make production read is not
// changed by a write token or the operator while nothing reads it yet: the change is held as a request
// naming the plan, and when the plan falls due production serves what was approved. A renamed guarded
// environment takes its approved plans with it. A bypass token's scheduled change and rollout are
// approved as they are made, and apply when due.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { advanceClock } from '../helpers/test-hooks.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t, { FLAGWIRE_TEST_HOOKS: '1' });
const { ids, secrets } = world;
const base = server.baseUrl;
const files = tempDir(t);
const api = (method: string, path: string, body?: unknown, token = secrets.multiWrite) => call(base, method, path, { token, body });

async function ok(args: string[]): Promise<any> {
  const r = await cli(server.dataDir, args);
  if (r.code !== 0) throw new Error(`flagwire ${args.join(' ')}: exit ${r.code} ${r.stdout} ${r.stderr}`);
  return r.json;
}

/** The flag's value in production for a caller on `plan`, as OFREP serves it. */
async function served(flagId: string, plan: string): Promise<unknown> {
  const r = await call(base, 'POST', `/ofrep/v1/evaluate/flags/${flagId}`, {
    body: { context: { env: 'production', targetingKey: 'u1', plan } },
  });
  if (r.status !== 200) throw new Error(`ofrep: ${r.status} ${r.text}`);
  return r.json.value;
}

let flags = 0;
async function newFlag(production: Record<string, unknown>, token = secrets.multiWrite): Promise<string> {
  const r = await api('POST', '/api/v1/flags', { name: `dep-${++flags}`, environments: { production } }, token);
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.json.id;
}

/** A scheduled change for production asked for by the editor and approved by the admin: the approved plan. */
async function approvedSchedule(flagId: string, patch: Record<string, unknown>, env = 'production'): Promise<string> {
  const at = (await advanceClock(server, 0)) + 3_600_000;
  const asked = await cli(server.dataDir, [
    'flag',
    'schedule',
    flagId,
    '--at',
    new Date(at).toISOString(),
    '--patch',
    JSON.stringify(patch),
    '--env',
    env,
    '--as',
    ids.editor,
  ]);
  if (asked.code !== 3) throw new Error(`schedule: exit ${asked.code} ${asked.stdout} ${asked.stderr}`);
  await ok(['request', 'approve', asked.json.changeRequest.id, '--version', String(asked.json.changeRequest.version), '--as', ids.admin]);
  const [made] = (await ok(['schedule', 'list', ids.multi])).schedules.filter((s: any) => s.flagId === flagId);
  return made.id;
}

/** Moves the clock past every plan made, and waits for the schedule to run. */
async function due(scheduleId: string): Promise<any> {
  await advanceClock(server, 3601);
  return pollUntil(
    'the scheduled change due',
    async () => (await ok(['schedule', 'list', ids.multi])).schedules.find((s: any) => s.id === scheduleId),
    (s) => s.status !== 'pending',
  );
}

const pendingAbout = async (id: string): Promise<any[]> =>
  (await ok(['request', 'list', ids.multi, '--status', 'pending'])).changeRequests.filter((q: any) =>
    q.diff.some((d: any) => d.id === id || d.name === id),
  );

const kPro = { '==': [{ var: 'plan' }, 'pro'] };
const kFree = { '==': [{ var: 'plan' }, 'free'] };

// Before the policy: a flag off in production whose rule names a shared fragment, so editing the fragment moves nothing served.
const fragment = await api('POST', '/api/v1/fragments', { name: 'paying', rule: kPro });
const refers = await newFlag({
  variants: { on: true, off: false },
  defaultVariant: 'off',
  targeting: { if: [{ $ref: 'paying' }, 'on', 'off'] },
});
const beta = await ok(['audience', 'create', ids.multi, '--name', 'Paying customers', '--rule', 'plan=pro']);
const plain = await newFlag({});
await ok(['approvals', 'set', ids.multi, '--env', 'production', '--required', '1', '--as', ids.admin]);

t.test(
  'a fragment an approved schedule will read is held when edited, naming the plan; when due, the approved rule is served',
  async (t) => {
    t.equal(fragment.status, 201, fragment.text);
    const planId = await approvedSchedule(refers, { enabled: true, trafficPercentage: 100 });
    t.not(await served(refers, 'pro'), true, 'off until due');

    const edited = await api('PATCH', '/api/v1/fragments/paying', { rule: kFree });
    t.equal(edited.status, 202, `held, not applied: ${edited.text}`);
    t.match(edited.json.changeRequest, { environments: ['production'], diff: [{ record: 'fragments' }] });
    t.ok(edited.json.changeRequest.alters.includes(planId), 'the request names the plan it would alter');
    t.same((await api('GET', '/api/v1/fragments', undefined, secrets.multiRead)).json.fragments[0].rule, kPro, 'the rule unchanged');

    const done = await due(planId);
    t.equal(done.status, 'applied', done.outcome ?? '');
    t.equal(await served(refers, 'pro'), true, 'the approved rule is served');
    t.equal(await served(refers, 'free'), false, 'the unapproved rule is not');
    const pending = (await ok(['request', 'list', ids.multi, '--status', 'pending'])).changeRequests;
    t.ok(
      pending.some((q: any) => q.id === edited.json.changeRequest.id),
      'the edit waits for approval, as any change production reads',
    );
  },
);

t.test(
  'an audience an approved schedule will use is held when edited, naming the plan; when due, the approved rules are served',
  async (t) => {
    const planId = await approvedSchedule(plain, { enabled: true, trafficPercentage: 100, audienceId: beta.id });
    const edited = await cli(server.dataDir, ['audience', 'update', beta.id, '--rule', 'plan=free']);
    t.equal(edited.code, 3, `held, not applied: ${edited.stdout} ${edited.stderr}`);
    t.ok(edited.json.changeRequest.alters.includes(planId), 'the request names the plan it would alter');
    t.match(edited.json.changeRequest.diff, [{ record: 'audience', id: beta.id }]);

    const done = await due(planId);
    t.equal(done.status, 'applied', done.outcome ?? '');
    t.equal(await served(plain, 'pro'), true, 'the approved audience is served');
    t.equal(await served(plain, 'free'), false, 'the unapproved rules are not');
  },
);

/** What production serves a caller on the pro plan under the flag name `name` (OFREP by key, in project multi): status and value. */
async function servedAs(name: string): Promise<{ status: number; value: unknown }> {
  const r = await call(base, 'POST', `/ofrep/v1/evaluate/flags/${encodeURIComponent(name)}`, {
    headers: { 'x-flagwire-project': ids.multi },
    body: { context: { env: 'production', targetingKey: 'u1', plan: 'pro' } },
  });
  return { status: r.status, value: r.json?.value };
}

const nameOf = async (flagId: string): Promise<string> =>
  (await api('GET', `/api/v1/flags/${flagId}`, undefined, secrets.multiRead)).json.name;

t.test(
  'a flag an approved schedule will turn on keeps the key it was approved under: renaming or deleting it is held, naming the plan; when due, it is served under that key',
  async (t) => {
    const flagId = await newFlag({});
    const name = await nameOf(flagId);
    const planId = await approvedSchedule(flagId, { enabled: true, trafficPercentage: 100 });

    const renamed = await cli(server.dataDir, ['flag', 'rename', flagId, `${name}-renamed`]);
    t.equal(renamed.code, 3, `held, not applied: ${renamed.stdout} ${renamed.stderr}`);
    t.match(renamed.json.changeRequest, {
      environments: ['production'],
      diff: [{ id: flagId, field: 'name', proposed: `${name}-renamed` }],
    });
    t.ok(renamed.json.changeRequest.alters.includes(planId), 'the request names the plan it would alter');
    const deleted = await cli(server.dataDir, ['flag', 'delete', flagId, '--as', ids.editor]);
    t.equal(deleted.code, 3, `held, not applied: ${deleted.stdout} ${deleted.stderr}`);
    t.ok(deleted.json.changeRequest.alters.includes(planId), 'the request names the plan it would alter');
    t.equal(await nameOf(flagId), name, 'the flag as it was');

    const done = await due(planId);
    t.equal(done.status, 'applied', done.outcome ?? '');
    t.same(await servedAs(name), { status: 200, value: true }, 'served under the key the plan was approved for');
    t.equal((await servedAs(`${name}-renamed`)).status, 404, 'not under the unapproved one');
  },
);

t.test('a flag a pending request will turn on: renaming it is held, naming the request; approved, it is on under its key', async (t) => {
  const flagId = await newFlag({});
  const name = await nameOf(flagId);
  const asked = await api('PATCH', `/api/v1/flags/${flagId}?env=production`, { enabled: true, trafficPercentage: 100 });
  t.equal(asked.status, 202, asked.text);
  const requestId = asked.json.changeRequest.id;
  const renamed = await cli(server.dataDir, ['flag', 'rename', flagId, `${name}-renamed`, '--as', ids.editor]);
  t.equal(renamed.code, 3, `held, not applied: ${renamed.stdout} ${renamed.stderr}`);
  t.strictSame(renamed.json.changeRequest.alters, [requestId], 'the request names the request it would alter');
  t.equal(await nameOf(flagId), name, 'the flag as it was');
  const approved = await ok(['request', 'approve', requestId, '--version', String(asked.json.changeRequest.version), '--as', ids.admin]);
  t.equal(approved.status, 'applied');
  t.same(await servedAs(name), { status: 200, value: true }, 'on under the key it was asked for');
});

t.test(
  'flags as code: a file that changes the key of a flag an approved schedule will turn on (apply --prune) is held, naming the plan',
  async (t) => {
    const flagId = await newFlag({});
    const name = await nameOf(flagId);
    const planId = await approvedSchedule(flagId, { enabled: true, trafficPercentage: 100 });
    const { flagwire, kind, environments, audiences, flags: inFile, $evaluators } = await ok(['export', ids.multi]);
    const { [name]: keyed, ...others } = inFile;
    const path = join(files, 'rekeyed.json');
    writeFileSync(
      path,
      JSON.stringify({ flagwire, kind, environments, audiences, $evaluators, flags: { ...others, [`${name}-rekeyed`]: keyed } }),
    );
    const applied = await cli(server.dataDir, ['apply', ids.multi, '--file', path, '--prune']);
    t.equal(applied.code, 3, `held, not applied: ${applied.stdout} ${applied.stderr}`);
    t.ok(applied.json.changeRequest.alters.includes(planId), 'the request names the plan it would alter');
    t.equal(await nameOf(flagId), name, 'the flag as it was');
    t.equal(
      (await api('GET', '/api/v1/flags', undefined, secrets.multiRead)).json.flags.filter((f: any) => f.name === `${name}-rekeyed`).length,
      0,
    );
    const done = await due(planId);
    t.equal(done.status, 'applied', done.outcome ?? '');
    t.same(await servedAs(name), { status: 200, value: true }, 'served under the key the plan was approved for');
  },
);

t.test('a renamed guarded environment takes its approved plan with it: it runs there when due', async (t) => {
  await ok(['env', 'add', ids.multi, 'eu']);
  await ok(['approvals', 'set', ids.multi, '--env', 'eu', '--required', '1', '--as', ids.admin]);
  const flagId = await newFlag({});
  const planId = await approvedSchedule(flagId, { enabled: true, trafficPercentage: 100 }, 'eu');
  await ok(['env', 'rename', ids.multi, 'eu', 'emea']);
  const [moved] = (await ok(['schedule', 'list', ids.multi])).schedules.filter((s: any) => s.id === planId);
  t.equal(moved.env, 'emea', 'the plan is for the environment under its new name');
  t.match((await ok(['approvals', 'show', ids.multi])).approvals, [{ env: 'production' }, { env: 'emea' }]);
  const done = await due(planId);
  t.equal(done.status, 'applied', done.outcome ?? '');
  const flag = await api('GET', `/api/v1/flags/${flagId}?env=emea`, undefined, secrets.multiRead);
  t.match(flag.json, { enabled: true, trafficPercentage: 100 });
});

t.test("a bypass token's scheduled change and rollout are approved as made: each applies when due", async (t) => {
  const pipeline = world.run('tokenCreate', {
    projectId: ids.multi,
    principal: { kind: 'user', userId: ids.owner },
    name: 'pipeline',
    permission: 'write',
  });
  await ok(['approvals', 'set', ids.multi, '--env', 'production', '--required', '1', '--bypass-token', pipeline.id, '--as', ids.admin]);
  const scheduled = await newFlag({});
  const at = (await advanceClock(server, 0)) + 3_600_000;
  const made = await api(
    'POST',
    `/api/v1/flags/${scheduled}/schedules?env=production`,
    { at, patch: { enabled: true, trafficPercentage: 100 } },
    pipeline.secret,
  );
  t.equal(made.status, 201, made.text);
  const ramped = await newFlag({ enabled: true }, pipeline.secret);
  const steps = [{ trafficPercentage: 10, holdMs: 3_600_000 }, { trafficPercentage: 100 }];
  const started = await api('POST', `/api/v1/flags/${ramped}/rollouts?env=production`, { steps }, pipeline.secret);
  t.equal(started.status, 201, started.text);

  const done = await due(made.json.id);
  t.equal(done.status, 'applied', `applied when due, not refused: ${done.outcome}`);
  t.equal(await served(scheduled, 'pro'), true);
  const rollout = await pollUntil(
    'the rollout step due',
    async () => (await ok(['rollout', 'list', ids.multi])).rollouts.find((r: any) => r.id === started.json.id),
    (r) => r.status !== 'running' || r.current > 0,
  );
  t.match(rollout, { status: 'completed', current: 1 }, rollout.pausedReason ?? '');
  t.equal((await api('GET', `/api/v1/flags/${ramped}?env=production`, undefined, secrets.multiRead)).json.trafficPercentage, 100);
  t.equal((await pendingAbout(scheduled)).length + (await pendingAbout(ramped)).length, 0, 'no request for either');
});

// Approvals and release plans against the real server, in real time (docs/approvals.md: Release plans):
// a scheduled change for a guarded environment made by an editor is a change request; approved, the
// server runs it when it falls due without another request. One made before the policy was set was
// never approved: when due it fails with the approval reason, and nothing changes. A rollout approved
// later than it was asked for starts its clock when it is applied, then steps on without another request.
// The bounds only catch a hang: the scheduler polls every 500 ms, a loaded machine may take seconds more.
import t, { type Test } from 'tap';
import { principalOf } from '../../src/actor/audit-actor.js';
import { cli } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { advanceClock } from '../helpers/test-hooks.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t, { FLAGWIRE_TEST_HOOKS: '1' });
const { ids, secrets, tokenIds } = world;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function ok(args: string[]): Promise<any> {
  const r = await cli(server.dataDir, args);
  if (r.code !== 0) throw new Error(`flagwire ${args.join(' ')}: exit ${r.code} ${r.stdout} ${r.stderr}`);
  return r.json;
}

let flags = 0;
async function newFlag(): Promise<string> {
  const r = await call(server.baseUrl, 'POST', '/api/v1/flags', {
    token: secrets.multiWrite,
    body: { name: `plan-${++flags}`, environments: { production: {} } },
  });
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
  return r.json.id;
}

const production = async (flagId: string) =>
  (await call(server.baseUrl, 'GET', `/api/v1/flags/${flagId}?env=production`, { token: secrets.multiRead })).json;
const schedules = async (): Promise<any[]> => (await ok(['schedule', 'list', ids.multi])).schedules;
const rollouts = async (): Promise<any[]> => (await ok(['rollout', 'list', ids.multi])).rollouts;
const audit = async (): Promise<any[]> => (await ok(['audit', ids.multi, '--limit', '1000'])).entries;
const guard = () => ok(['approvals', 'set', ids.multi, '--env', 'production', '--required', '1', '--as', ids.admin]);

t.test('a scheduled change for production is a request; approved, it runs when due without another', async (t) => {
  await guard();
  const flagId = await newFlag();
  const asked = await cli(server.dataDir, [
    'flag',
    'schedule',
    flagId,
    '--at',
    '+4s',
    '--patch',
    '{"enabled": true}',
    '--env',
    'production',
    '--as',
    ids.editor,
  ]);
  t.equal(asked.code, 3, 'a change request');
  const request = asked.json.changeRequest;
  t.match(request.diff, [
    { record: 'schedule', field: '', current: null, proposed: { flagId, env: 'production', patch: { enabled: true } } },
  ]);
  t.equal((await schedules()).filter((s) => s.flagId === flagId).length, 0, 'no schedule made');
  t.equal((await ok(['request', 'approve', request.id, '--version', String(request.version), '--as', ids.admin])).status, 'applied');
  const [made] = (await schedules()).filter((s) => s.flagId === flagId);
  t.match(made, { status: 'pending', env: 'production', patch: { enabled: true } });
  const done = await pollUntil(
    'the scheduled change run',
    async () => (await schedules()).find((s) => s.id === made.id),
    (s) => s.status !== 'pending',
  );
  t.equal(done.status, 'applied', done.outcome ?? '');
  t.equal((await production(flagId)).enabled, true, 'applied when due');
  const pending = (await ok(['request', 'list', ids.multi, '--status', 'pending'])).changeRequests;
  t.equal(pending.filter((q: any) => q.diff.some((d: any) => d.id === flagId)).length, 0, 'no second request');
  t.match(
    (await audit()).find((e) => e.flagId === flagId && e.action === 'flag.patch'),
    { actor: `plan:${made.id}` },
  );
});

t.test('a rollout approved later starts its clock when applied, and steps on without another request', async (t: Test) => {
  await guard();
  const flagId = await newFlag();
  const asked = await cli(server.dataDir, ['flag', 'rollout', flagId, '--steps', '10:4s,100', '--env', 'production', '--as', ids.editor]);
  t.equal(asked.code, 3, `a change request: ${asked.stdout}`);
  const request = asked.json.changeRequest;
  t.strictSame(request.environments, ['production'], 'production once, though the rollout and its first step both change it');
  t.match(request.author, { id: `user:${ids.editor}` }, "the rollout's first step is its maker's change");
  t.equal((await rollouts()).filter((r) => r.flagId === flagId).length, 0, 'no rollout made');
  t.equal((await production(flagId)).trafficPercentage, 0);
  // Longer than the first step's hold: a rollout whose clock started when it was asked for would step on at once.
  await sleep(5000);
  const applied = await ok(['request', 'approve', request.id, '--version', String(request.version), '--as', ids.owner]);
  t.equal(applied.status, 'applied');
  const [rollout] = (await rollouts()).filter((r) => r.flagId === flagId);
  t.equal(rollout.appliedAt[0], applied.decided.at, 'its first step applied with it');
  const first = (await audit()).find((e) => e.flagId === flagId && e.action === 'flag.patch');
  t.match(first, { actor: `plan:${rollout.id}`, changes: { trafficPercentage: { after: 10 } }, request: { id: request.id } });
  await pollUntil(
    'the next step',
    () => production(flagId),
    (f) => f.trafficPercentage === 100,
  );
  const [after] = (await rollouts()).filter((r) => r.flagId === flagId);
  // Read after the step, not before it: on a busy machine the step may come before a read could. A clock
  // started when the rollout was asked for (5 s ago, longer than the hold) would have stepped at once.
  t.ok(after.appliedAt[1] >= applied.decided.at + 4000, 'the next step came a hold after it was applied, not at once');
  const pending = (await ok(['request', 'list', ids.multi, '--status', 'pending'])).changeRequests;
  t.equal(pending.filter((q: any) => q.diff.some((d: any) => d.id === flagId)).length, 0, 'no second request');
});

t.test('over the API: a rollout for production is a request (202); a bypass token starts one at once (201)', async (t) => {
  const pipeline = world.run('tokenCreate', { projectId: ids.multi, principal: principalOf(ids.owner), name: 'ramp', permission: 'write' });
  await ok(['approvals', 'set', ids.multi, '--env', 'production', '--required', '1', '--bypass-token', pipeline.id, '--as', ids.admin]);
  const body = { steps: [{ trafficPercentage: 20, holdMs: 3_600_000 }, { trafficPercentage: 100 }] };
  const asked = await call(server.baseUrl, 'POST', `/api/v1/flags/${await newFlag()}/rollouts?env=production`, {
    token: secrets.multiWrite,
    body,
  });
  t.equal(asked.status, 202, asked.text);
  t.match(asked.json.changeRequest, { author: { id: `token:${tokenIds.multiWrite}` }, environments: ['production'] });
  const flagId = await newFlag();
  const started = await call(server.baseUrl, 'POST', `/api/v1/flags/${flagId}/rollouts?env=production`, { token: pipeline.secret, body });
  t.equal(started.status, 201, started.text);
  t.match(started.json, { status: 'running', current: 0 });
  t.equal((await production(flagId)).trafficPercentage, 20);
  const act = (action: string) =>
    call(server.baseUrl, 'POST', `/api/v1/rollouts/${started.json.id}/${action}`, { token: secrets.multiWrite });
  const paused = await act('pause');
  t.equal(paused.status, 200, 'pausing needs no approval');
  t.match(paused.json, { status: 'paused' });
  // By hand, the percentage moved from the step (the bypass token may): resuming would set it back.
  const byHand = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${flagId}?env=production`, {
    token: pipeline.secret,
    body: { trafficPercentage: 5 },
  });
  t.equal(byHand.status, 200);
  const resumed = await act('resume');
  t.equal(resumed.status, 202, 'resuming sets its step again: a guarded change');
  t.match(resumed.json.changeRequest.diff, [{ field: 'environments.production.trafficPercentage', current: 5, proposed: 20 }]);
  t.equal((await production(flagId)).trafficPercentage, 5);
  t.match(resumed.json.changeRequest, { author: { id: `token:${tokenIds.multiWrite}` }, environments: ['production'] });
  t.match(
    (await rollouts()).find((r) => r.id === started.json.id),
    { status: 'paused' },
  );
});

// Last: it moves the server's clock (the test hook) an hour on, past every plan's time.
t.test('a scheduled change made before the policy was set fails when due, with the approval reason', async (t) => {
  await ok(['approvals', 'clear', ids.multi, '--env', 'production', '--as', ids.admin]);
  const flagId = await newFlag();
  const made = await call(server.baseUrl, 'POST', `/api/v1/flags/${flagId}/schedules?env=production`, {
    token: secrets.multiWrite,
    body: { at: (await advanceClock(server, 0)) + 3_600_000, patch: { enabled: true } },
  });
  t.equal(made.status, 201, made.text);
  await guard();
  await advanceClock(server, 3601);
  const done = await pollUntil(
    'the scheduled change due',
    async () => (await schedules()).find((s) => s.id === made.json.id),
    (s) => s.status !== 'pending',
  );
  t.equal(done.status, 'failed');
  t.match(done.outcome, /was not approved, and production needs approval: nothing was changed/);
  t.equal((await production(flagId)).enabled, false, 'nothing changed');
  const pending = (await ok(['request', 'list', ids.multi, '--status', 'pending'])).changeRequests;
  t.equal(pending.filter((q: any) => q.diff.some((d: any) => d.id === flagId)).length, 0, 'no request opened for it');
});

// Progressive rollouts over the Management API, against a real server: started with a token, listed,
// stepped by the server's scheduler when a hold ends (the test moves the service clock instead of
// waiting), paused, resumed, skipped and rolled back, each answer in the spec's envelope when refused.
import t from 'tap';
import { call } from '../helpers/http.js';
import { startWorldServer } from '../helpers/world-server.js';

const { server, world } = await startWorldServer(t, { FLAGWIRE_TEST_HOOKS: '1' });
const { ids, secrets } = world;
const base = server.baseUrl;
const kHourS = 3600;

const rollouts = async () =>
  (await call(base, 'GET', '/api/v1/rollouts', { token: secrets.read })).json.rollouts as Record<string, unknown>[];
const served = async () => (await call(base, 'GET', `/api/v1/flags/${ids.flag}`, { token: secrets.read })).json.trafficPercentage as number;
const act = (id: string, action: string, token = secrets.write) => call(base, 'POST', `/api/v1/rollouts/${id}/${action}`, { token });

async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('started, stepped when the hold ends, paused, resumed, skipped, rolled back', async (t) => {
  const steps = [
    { trafficPercentage: 60, holdMs: kHourS * 1000 },
    { trafficPercentage: 80, holdMs: kHourS * 1000 },
    { trafficPercentage: 100 },
  ];
  const readOnly = await call(base, 'POST', `/api/v1/flags/${ids.flag}/rollouts`, { token: secrets.read, body: { steps } });
  t.equal(readOnly.status, 403);
  t.equal(readOnly.json.error, 'Insufficient permission');

  const started = await call(base, 'POST', `/api/v1/flags/${ids.flag}/rollouts`, { token: secrets.write, body: { steps } });
  t.equal(started.status, 201, started.text);
  t.match(started.json, {
    status: 'running',
    current: 0,
    initialPercentage: 50,
    createdBy: `token:${world.tokenIds.write}`,
    createdByName: 'ci-write',
  });
  t.notOk('projectId' in started.json, 'the project is the token’s');
  const id = started.json.id as string;
  t.equal(await served(), 60, 'the first step at once');
  t.match(await rollouts(), [{ id, status: 'running' }]);

  const again = await call(base, 'POST', `/api/v1/flags/${ids.flag}/rollouts`, { token: secrets.write, body: { steps } });
  t.equal(again.status, 400);
  t.match(again.json.detail, /already has a running rollout/);

  t.equal((await call(base, 'POST', `/__test/clock?advance=${kHourS}`)).status, 200);
  await until('the second step', async () => (await served()) === 80);
  t.match(await rollouts(), [{ id, current: 1, status: 'running' }]);

  t.match((await act(id, 'pause')).json, { status: 'paused', pausedReason: 'paused by ci-write' });
  t.equal((await call(base, 'POST', `/__test/clock?advance=${2 * kHourS}`)).status, 200);
  t.equal(await served(), 80, 'a paused rollout holds its step');
  t.match((await act(id, 'resume')).json, { status: 'running', current: 1 });
  t.match((await act(id, 'skip')).json, { status: 'completed', current: 2 });
  t.equal(await served(), 100);
  t.match((await act(id, 'rollback')).json, { status: 'rolled-back' });
  t.equal(await served(), 50, 'back to the percentage before the first step');

  const unknown = await act(id, 'explode');
  t.equal(unknown.status, 404);
  t.match(unknown.json.detail, /the actions are pause, resume, skip, rollback/);
  const readAct = await act(id, 'pause', secrets.read);
  t.equal(readAct.status, 403);
  const none = await act('rol_nope', 'pause');
  t.equal(none.status, 404);
  const bad = await call(base, 'POST', `/api/v1/flags/${ids.flag}/rollouts`, {
    token: secrets.write,
    body: { steps: [{ trafficPercentage: 10 }, { trafficPercentage: 5 }] },
  });
  t.equal(bad.status, 400);
  t.match(bad.json.detail, /steps\[0\]\.holdMs is required \(.*\); steps\[1\]\.trafficPercentage goes down \(10 to 5\)/);
});

t.test(
  'by variant weights: started (201, the steps and the targeting before), served at once, rolled back; refused in the envelope',
  async (t) => {
    const created = await call(base, 'POST', '/api/v1/flags', {
      token: secrets.write,
      body: { name: 'split', enabled: true, trafficPercentage: 100, variants: { on: 'ON', off: 'OFF' }, defaultVariant: 'off' },
    });
    t.equal(created.status, 201, created.text);
    const flagId = created.json.id as string;
    const variant = async () => (await call(base, 'GET', `/v1/flags/${flagId}?targetingKey=u1`)).json.variant as string;
    t.equal(await variant(), 'off');

    const steps = [{ variantWeights: { on: 1, off: 0 }, holdMs: kHourS * 1000 }, { variantWeights: { on: 1, off: 1 } }];
    const started = await call(base, 'POST', `/api/v1/flags/${flagId}/rollouts`, { token: secrets.write, body: { steps } });
    t.equal(started.status, 201, started.text);
    t.match(started.json, { flagId, env: null, steps, initialTargeting: {}, current: 0, status: 'running', createdByName: 'ci-write' });
    t.equal(await variant(), 'on', 'the first step at once: every caller on');
    const flag = await call(base, 'GET', `/api/v1/flags/${flagId}`, { token: secrets.read });
    t.same(flag.json.targeting, {
      fractional: [
        ['on', 1],
        ['off', 0],
      ],
    });
    t.match(await rollouts(), [{}, { id: started.json.id, initialTargeting: {} }], 'listed with the targeting before');

    t.match((await act(started.json.id, 'rollback')).json, { status: 'rolled-back' });
    t.same((await call(base, 'GET', `/api/v1/flags/${flagId}`, { token: secrets.read })).json.targeting, {});
    t.equal(await variant(), 'off');

    const bad = await call(base, 'POST', `/api/v1/flags/${flagId}/rollouts`, {
      token: secrets.write,
      body: { steps: [{ variantWeights: { on: 1, blue: 1 }, holdMs: kHourS * 1000 }, { trafficPercentage: 100 }] },
    });
    t.equal(bad.status, 400);
    t.same(bad.json, {
      error: 'Invalid request',
      docs: `${base}/docs#invalid-request`,
      detail:
        'steps[1] sets a traffic percentage but steps[0] sets variant weights: every step of a rollout is of one kind; steps[0].variantWeights: "blue" is not a variant of this flag (its variants: on, off)',
    });
    const boolean = await call(base, 'POST', `/api/v1/flags/${ids.flag}/rollouts`, {
      token: secrets.write,
      body: { steps: [{ variantWeights: { on: 1 } }] },
    });
    t.equal(boolean.status, 400);
    t.match(boolean.json.detail, /^this flag has no variants: a rollout by variant weights/);
  },
);

// Black-box (issue 96, item 9): through a real server, a plan its statistics cannot compute (alpha
// 1e-300 or 5e-324, a weight of 5e-324) is refused in the spec's envelope and nothing changes; plans at
// every bound, running with exposures and outcomes counted, answer their results 200; a running
// experiment's key is refused on a second flag, and changed or dropped on its own flag.
import t from 'tap';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { must, startExperimentServer } from '../helpers/experiment-server.js';
import { call } from '../helpers/http.js';
import { refusedRequest } from '../helpers/refused.js';

const { world, base, clientKey } = await startExperimentServer(t);
const { secrets } = world;
const api = (method: string, path: string, body?: unknown, token = secrets.write) => call(base, method, path, { token, body });
const makeFlag = async (name: string) =>
  must(await api('POST', '/api/v1/flags', { name, enabled: true, trafficPercentage: 50 }), 201).id as string;

t.test('a plan its statistics cannot compute is refused in the envelope, naming the field; nothing changes', async (t) => {
  const plan = { ...experimentPlan(await makeFlag('refused-plan'), 1000), key: 'refused-plan' };
  for (const [body, pattern] of [
    [{ ...plan, alpha: 1e-300 }, /alpha must be a number from 0\.001 to 0\.5/],
    [{ ...plan, alpha: 5e-324 }, /alpha must be a number from 0\.001 to 0\.5/],
    [{ ...plan, variants: [{ variant: 'off', weight: 5e-324 }, plan.variants[1]] }, /weight must be a positive number from 0\.000001/],
  ] as const) {
    const refused = await refusedRequest(t, world, 400, () => api('POST', '/api/v1/experiments', body));
    t.match(refused, { error: 'Invalid request', detail: pattern });
  }
});

t.test('plans at every bound, running with data, answer their results', async (t) => {
  const extremes = [
    { alpha: 0.001, plannedSubjects: 1, weights: [1e-6, 1e6] },
    { alpha: 0.5, plannedSubjects: 1e12, weights: [1e6, 1e-6] },
    { alpha: 0.001, plannedSubjects: 1e12, weights: [1, 1] },
    { alpha: 0.5, plannedSubjects: 1, weights: [1e6, 1e6] },
  ];
  const now = Date.now();
  for (const [i, { alpha, plannedSubjects, weights }] of extremes.entries()) {
    const name = `bound-${i}`;
    const even = experimentPlan(await makeFlag(name), plannedSubjects);
    const plan = { ...even, key: name, alpha, variants: even.variants.map((v, j) => ({ ...v, weight: weights[j]! })) };
    must(await api('POST', '/api/v1/experiments', plan), 201);
    must(await api('POST', `/api/v1/experiments/${name}/start`), 200);
    const events: object[] = [];
    for (let s = 0; s < 40; s++) {
      const targetingKey = `subject-${s}`;
      events.push({ kind: 'exposure', key: name, targetingKey, variant: s % 2 === 0 ? 'on' : 'off', timestamp: now });
      if (s % 3 === 0) events.push({ kind: 'track', key: 'purchase', targetingKey, timestamp: now + 1 });
      events.push({ kind: 'track', key: 'revenue', targetingKey, value: s * 1000, timestamp: now + 1 });
    }
    const sent = must(await call(base, 'POST', '/ofrep/v1/events', { token: clientKey, body: { events } }), 200);
    t.equal(sent.accepted, events.length, `${name}: every event counted`);
  }
  for (let i = 0; i < extremes.length; i++) {
    const results = await api('GET', `/api/v1/experiments/bound-${i}/results`, undefined, secrets.read);
    t.equal(results.status, 200, `bound-${i}: ${results.text}`);
    t.ok((results.json.comparisons as unknown[]).length > 0, `bound-${i} compares`);
  }
});

t.test("a running experiment's key is refused on a second flag, and changed or dropped on its own", async (t) => {
  const own = await makeFlag('own-flag');
  const second = await makeFlag('second-flag');
  must(await api('POST', '/api/v1/experiments', { ...experimentPlan(own, 1000), key: 'keyed' }), 201);
  must(await api('POST', '/api/v1/experiments/keyed/start'), 200);
  const onSecond = await refusedRequest(t, world, 400, () => api('PATCH', `/api/v1/flags/${second}`, { experiment: 'keyed' }));
  t.match(onSecond, {
    error: 'Invalid request',
    detail: /Experiment "keyed" runs on flag own-flag, so flag second-flag cannot carry its key too/,
  });
  for (const experiment of [null, 'switched']) {
    const changed = await refusedRequest(t, world, 400, () => api('PATCH', `/api/v1/flags/${own}`, { experiment }));
    t.match(changed, {
      error: 'Invalid request',
      detail: /its experiment key cannot be changed or dropped while the experiment runs.*Stop the experiment first/,
    });
  }
  must(await api('POST', '/api/v1/experiments/keyed/stop'), 200);
  must(await api('PATCH', `/api/v1/flags/${second}`, { experiment: 'keyed' }), 200);
});

// The metric names a public events key can make an environment count (issue 96, item 3; docs/events.md:
// Metrics counted), against a real server: a track of a metric an experiment of the key's environment
// declares always counts; of any other name, only the first kMaxUndeclaredMetrics names an environment
// sees count, and a track of a name past them is rejected by name and counted nowhere, so an
// experiment's statistics stay as large as its plan, however many names a client sends.
import t from 'tap';
import { kMaxUndeclaredMetrics } from '../../src/events/tally.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { must, startExperimentServer } from '../helpers/experiment-server.js';
import { call } from '../helpers/http.js';

const { world, base, clientKey, statistics } = await startExperimentServer(t);
const { secrets } = world;
const api = (method: string, path: string, body?: unknown, token = secrets.write) => call(base, method, path, { token, body });
const flagId = (must(await api('GET', '/api/v1/flags', undefined, secrets.read), 200).flags as { id: string; name: string }[]).find(
  (f) => f.name === 'new-checkout',
)!.id;
// The flag was made running an experiment by hand: ended here, so the planned experiment (declaring
// `purchase` and `revenue`) starts it.
must(await api('PATCH', `/api/v1/flags/${flagId}`, { experiment: null }), 200);
must(await api('POST', '/api/v1/experiments', experimentPlan(flagId, 1000)), 201);
must(await api('POST', '/api/v1/experiments/checkout-2026/start'), 200);

const send = (key: string, events: unknown[]) => call(base, 'POST', '/ofrep/v1/events', { token: key, body: { events } });
const track = (subject: string, metric: string) => ({ kind: 'track', key: metric, targetingKey: subject, value: 2, timestamp: Date.now() });
const exposure = (subject: string) => ({
  kind: 'exposure',
  key: 'new-checkout',
  targetingKey: subject,
  variant: 'on',
  timestamp: Date.now(),
});
/** The metric names the statistics hold, over every variant. */
const metricNames = async () =>
  new Set(((await statistics()).variants as { metrics: { metric: string }[] }[]).flatMap((v) => v.metrics.map((m) => m.metric)));

t.test('past the undeclared names an environment counts, a track is rejected by name; declared metrics always count', async (t) => {
  const extra = 5;
  const names = Array.from({ length: kMaxUndeclaredMetrics + extra }, (_, i) => `m${i}`);
  const first = await send(clientKey, [exposure('ann'), ...names.map((name) => track('ann', name)), track('ann', 'purchase')]);
  t.equal(first.status, 200, first.text);
  t.equal(first.json.accepted, 1 + kMaxUndeclaredMetrics + 1, 'the exposure, the first names, and the declared metric');
  t.strictSame(
    first.json.rejected.map((r: { index: number }) => r.index),
    names.slice(kMaxUndeclaredMetrics).map((_, i) => 1 + kMaxUndeclaredMetrics + i),
    'each track past the bound, by its index',
  );
  t.match(first.json.rejected[0].reason, `metric "m${kMaxUndeclaredMetrics}" is declared by no experiment here`);

  const second = await send(clientKey, [exposure('bob'), track('bob', 'm0'), track('bob', 'other'), track('bob', 'revenue')]);
  t.strictSame(second.json.accepted, 3, 'a name already counted, and a declared metric, still count');
  t.strictSame(
    second.json.rejected.map((r: { index: number }) => r.index),
    [2],
  );
  t.match(second.json.rejected[0].reason, 'metric "other" is declared by no experiment here');
  t.strictSame(await metricNames(), new Set([...names.slice(0, kMaxUndeclaredMetrics), 'purchase', 'revenue']));
});

t.test('a flood of new names from many subjects counts none of them: the statistics stay as they were', async (t) => {
  const before = await statistics();
  for (let batch = 0; batch < 4; batch++) {
    const events = Array.from({ length: 250 }, (_, i) => [
      exposure(`s${batch}-${i}`),
      ...[0, 1, 2].map((k) => track(`s${batch}-${i}`, `flood-${batch}-${i}-${k}`)),
    ]).flat();
    const sent = await send(clientKey, events);
    t.equal(sent.status, 200, sent.text);
    t.equal(sent.json.rejected.length, 750, 'every track of a new name rejected');
  }
  const after = await statistics();
  t.equal(
    after.variants.find((v: { variant: string }) => v.variant === 'on').subjects,
    before.variants.find((v: { variant: string }) => v.variant === 'on').subjects + 1000,
  );
  t.equal((await metricNames()).size, kMaxUndeclaredMetrics + 2, 'no metric row added');
  const declared = await send(clientKey, [track('s0-0', 'purchase')]);
  t.strictSame(declared.json, { accepted: 1, duplicates: 0, rejected: [] }, 'a declared metric still counts');
});

t.test("each environment counts its own undeclared names: another's are not taken by this one's", async (t) => {
  const staging = must(
    await call(base, 'POST', '/api/v1/client-keys', {
      token: secrets.multiWrite,
      body: { name: 'web', uses: ['events'], environment: 'staging' },
    }),
    201,
  ).secret as string;
  const sent = await send(staging, [track('cay', 'brand-new')]);
  t.strictSame(sent.json, { accepted: 1, duplicates: 0, rejected: [] });
});

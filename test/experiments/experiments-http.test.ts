// Black-box: experiments through a real server (issue 59, items 1 and 3). The Management API makes an
// experiment on a flag and starts it: the flag's answers then say inExperiment, and exposures and
// outcomes sent with a client key are counted; the results route answers what src/experiments computes
// from the statistics route's sums, and keeps the sample-ratio check's lowest p-value; stopping clears
// the flag's key and later exposures are not counted. Bad plans are refused in the spec's envelope and
// change nothing; a running plan is not changed; another project's token finds nothing.
import t from 'tap';
import { experimentResults, kDefaultAnalysis } from '../../src/experiments/results.js';
import { must, startExperimentServer } from '../helpers/experiment-server.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { refusedRequest } from '../helpers/refused.js';

const { world, base, clientKey, statistics } = await startExperimentServer(t);
const { secrets } = world;
const api = (method: string, path: string, body?: unknown, token = secrets.write) => call(base, method, path, { token, body });
const flagId = (must(await api('GET', '/api/v1/flags', undefined, secrets.read), 200).flags as { id: string; name: string }[]).find(
  (f) => f.name === 'new-checkout',
)!.id;
// The flag was made running issue 58's experiment by hand: ended here, so this experiment starts it.
must(await api('PATCH', `/api/v1/flags/${flagId}`, { experiment: null }), 200);
const evaluated = async () => (await call(base, 'GET', `/v1/flags/${flagId}?targetingKey=user-1`)).json;

const plan = experimentPlan(flagId, 1000);
const pick = ({ estimate, lower, upper }: { estimate: number; lower: number | null; upper: number | null }) => ({ estimate, lower, upper });

const now = Date.now();
const send = (events: object[]) => call(base, 'POST', '/ofrep/v1/events', { token: clientKey, body: { events } });
/** Subjects 0..n-1 exposed, 60% on and 40% off (a split the check can find skewed), each converting on a pattern of its own. */
function eventsOf(n: number, at: number): object[] {
  const events: object[] = [];
  for (let i = 0; i < n; i++) {
    const targetingKey = `subject-${i}`;
    const variant = i % 5 < 3 ? 'on' : 'off';
    events.push({ kind: 'exposure', key: 'new-checkout', targetingKey, variant, timestamp: at });
    if (i % (variant === 'on' ? 2 : 3) === 0) events.push({ kind: 'track', key: 'purchase', targetingKey, timestamp: at + 1 });
    events.push({ kind: 'track', key: 'revenue', targetingKey, value: (i % 7) * 2.5, timestamp: at + 1 });
  }
  return events;
}

t.test('bad plans are refused in the envelope, naming the field, and nothing changes', async (t) => {
  for (const [body, pattern] of [
    [{ ...plan, alpha: 1.5 }, /alpha/],
    [{ ...plan, variants: [{ variant: 'off', weight: -1 }, plan.variants[1]] }, /weight/],
    [{ ...plan, plannedSubjects: 0 }, /plannedSubjects/],
    [{ ...plan, control: 'nobody' }, /control: "nobody" must be one of variants/],
    [{ ...plan, flagId: 'flg_none' }, /flagId: no flag with id "flg_none"/],
  ] as const) {
    const refused = await refusedRequest(t, world, 400, () => api('POST', '/api/v1/experiments', body));
    t.match(refused, { error: 'Invalid request', detail: pattern });
  }
  await refusedRequest(t, world, 403, () => api('POST', '/api/v1/experiments', plan, secrets.read));
});

t.test('made, started: the answers say inExperiment, exposures count; results as src/experiments computes them; stopped', async (t) => {
  const made = await api('POST', '/api/v1/experiments', plan);
  t.equal(made.status, 201, made.text);
  t.match(made.json, { key: 'checkout-2026', environment: null, status: 'draft', alpha: 0.05, flagId });
  t.notOk('experimentKey' in (await evaluated()), 'not started: the answers name no experiment');
  const exposure = (targetingKey: string) => ({
    kind: 'exposure',
    key: 'new-checkout',
    targetingKey,
    variant: 'on',
    timestamp: Date.now(),
  });
  const early = must(await send([exposure('early')]), 200);
  t.match(early, { accepted: 0, rejected: [{ index: 0 }] }, 'an exposure before the start is not counted');

  const started = await api('POST', '/api/v1/experiments/checkout-2026/start');
  t.equal(started.status, 200, started.text);
  t.match(started.json, { status: 'running', stoppedAt: null });
  t.equal(must(await api('GET', `/api/v1/flags/${flagId}`, undefined, secrets.read), 200).experiment, 'checkout-2026');
  const answer = await pollUntil('the answers name the experiment', evaluated, (a) => a.experimentKey === 'checkout-2026');
  t.equal(answer.inExperiment, true, 'the split is an exposure');

  const running = await refusedRequest(t, world, 400, () => api('PATCH', '/api/v1/experiments/checkout-2026', { control: 'on' }));
  t.match(running.detail, /Experiment "checkout-2026" is running: its plan .* cannot change while it runs/);

  const events = eventsOf(200, now);
  for (let i = 0; i < events.length; i += 1000) must(await send(events.slice(i, i + 1000)), 200);
  const stats = await statistics();
  t.same(
    stats.variants.map((v: { variant: string; subjects: number }) => [v.variant, v.subjects]),
    [
      ['off', 80],
      ['on', 120],
    ],
  );

  const results = await api('GET', '/api/v1/experiments/checkout-2026/results', undefined, secrets.read);
  t.equal(results.status, 200, results.text);
  const expected = experimentResults(
    stats,
    { control: 'off', allocation: plan.variants, metrics: plan.metrics, plannedSubjects: plan.plannedSubjects },
    { ...kDefaultAnalysis, alpha: 0.05, previousSrmPValue: 1 },
    { primaryMetric: plan.primaryMetric, status: 'running', flag: { id: flagId, environment: null, typed: false } },
  );
  const got = results.json;
  t.equal(got.srm.pValue, expected.srm.pValue, "the sample-ratio check's p-value");
  t.equal(got.srm.verdict, expected.srm.verdict);
  t.same(got.srm.variants, ['off', 'on']);
  t.ok(got.srm.pValue < 1, 'a 60/40 split against 50/50 lowers it');
  t.equal(got.comparisons.length, 2, 'one treatment, two metrics');
  for (const [i, want] of expected.comparisons.entries()) {
    const c = got.comparisons[i];
    t.match(c, { metric: want.metric, variant: 'on', kind: want.kind, decision: want.decision, verdict: want.verdict });
    t.same(c.control, want.control);
    t.same(c.treatment, want.treatment);
    t.equal(c.absolute.estimate, want.absolute.estimate, `${want.metric}: the difference`);
    t.equal(c.absolute.lower, want.absolute.lower, `${want.metric}: its always-valid interval`);
    t.equal(c.absolute.upper, want.absolute.upper);
    t.equal(c.absolute.pValue, want.absolute.pValue);
    t.equal(c.relative?.estimate, want.relative?.estimate, `${want.metric}: the lift`);
    t.equal(c.bayes?.chanceToBeatControl, want.bayes?.chanceToBeatControl, `${want.metric}: the chance to beat control`);
  }
  t.same(
    got.primary.map((c: { metric: string }) => c.metric),
    ['purchase'],
    'the primary metric',
  );
  t.equal(got.comparisons[0].control.mean, 27 / 80, "purchase: the control's rate, counted exactly");

  const shown = must(await api('GET', '/api/v1/experiments/checkout-2026', undefined, secrets.read), 200);
  t.equal(shown.lowestSrmPValue, got.srm.pValue, 'the look kept its p-value, the lowest yet');
  const primary = got.primary[0];
  t.same(got.history, [], 'no day kept before the first look');
  const again = must(await api('GET', '/api/v1/experiments/checkout-2026/results', undefined, secrets.read), 200);
  t.same(
    again.history.map((p: { metric: string; comparisons: unknown[] }) => [p.metric, p.comparisons]),
    [['purchase', [{ variant: 'on', scale: 'relative', ...pick(primary.relative) }]]],
    "the day's first look kept as the primary metric's interval point",
  );
  const third = must(await api('GET', '/api/v1/experiments/checkout-2026/results', undefined, secrets.read), 200);
  t.equal(third.history.length, 1, 'one point a day');

  const stopped = await api('POST', '/api/v1/experiments/checkout-2026/stop');
  t.equal(stopped.status, 200, stopped.text);
  t.match(stopped.json, { status: 'stopped' });
  t.notOk('experiment' in must(await api('GET', `/api/v1/flags/${flagId}`, undefined, secrets.read), 200), "the flag's key is cleared");
  const late = must(await send([exposure('late')]), 200);
  t.match(late, { accepted: 0, rejected: [{ index: 0 }] }, 'an exposure after the stop is not counted');
  const listed = must(await api('GET', '/api/v1/experiments', undefined, secrets.read), 200);
  t.same(
    listed.experiments.map((e: { key: string; status: string }) => [e.key, e.status]),
    [['checkout-2026', 'stopped']],
  );
});

t.test("another project's token finds nothing: 404 on every route", async (t) => {
  for (const [method, path] of [
    ['GET', '/api/v1/experiments/checkout-2026'],
    ['GET', '/api/v1/experiments/checkout-2026/results'],
    ['POST', '/api/v1/experiments/checkout-2026/start'],
    ['POST', '/api/v1/experiments/checkout-2026/delete'],
  ] as const) {
    const r = await refusedRequest(t, world, 404, () => api(method, path, undefined, secrets.writeB));
    t.match(r, { error: 'Not found', detail: /No experiment "checkout-2026"/ }, `${method} ${path}`);
  }
  t.same(must(await api('GET', '/api/v1/experiments', undefined, secrets.writeB), 200), { experiments: [] });
});

t.test('deleted once stopped', async (t) => {
  t.same(must(await api('POST', '/api/v1/experiments/checkout-2026/delete'), 200), { key: 'checkout-2026', deleted: true });
  t.equal((await api('GET', '/api/v1/experiments/checkout-2026', undefined, secrets.read)).status, 404);
});

// Experiment guards through a real server (issue 59, item 4): a rollout guarded by an experiment's metric
// (rolled back where the treatment is worse with confidence) or by its sample-ratio check (paused on a
// mismatch), read by the server's scheduler from the statistics the events sent were counted into; the
// breach's audit entry carries the figures, which are those src/experiments computes from the statistics
// route's sums. Guards that do not fit the experiment are refused in the spec's envelope and change nothing.
import t from 'tap';
import { experimentResults, kDefaultAnalysis } from '../../src/experiments/results.js';
import { experimentPlan } from '../helpers/experiment-plan.js';
import { must, startExperimentServer } from '../helpers/experiment-server.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { refusedRequest } from '../helpers/refused.js';

const { world, base, clientKey, statistics } = await startExperimentServer(t);
const { secrets, ids } = world;
const api = (method: string, path: string, body?: unknown, token = secrets.write) => call(base, method, path, { token, body });
const flagId = (must(await api('GET', '/api/v1/flags', undefined, secrets.read), 200).flags as { id: string; name: string }[]).find(
  (f) => f.name === 'new-checkout',
)!.id;
// The flag was made running issue 58's experiment by hand: ended here, so this experiment starts it.
must(await api('PATCH', `/api/v1/flags/${flagId}`, { experiment: null, trafficPercentage: 10 }), 200);
const plan = experimentPlan(flagId, 1000);
must(await api('POST', '/api/v1/experiments', plan), 201);
must(await api('POST', '/api/v1/experiments/checkout-2026/start'), 200);

const kHourMs = 3_600_000;
const steps = [{ trafficPercentage: 50, holdMs: kHourMs }, { trafficPercentage: 100 }];
const rollout = async (id: string) =>
  (must(await api('GET', '/api/v1/rollouts', undefined, secrets.read), 200).rollouts as Record<string, any>[]).find((r) => r.id === id)!;
const served = async () => must(await api('GET', `/api/v1/flags/${flagId}`, undefined, secrets.read), 200).trafficPercentage as number;
const audit = () => {
  world.store.resetReadTxn();
  return world.store.listAudit(ids.single, { limit: 100, before: null });
};
const start = (guard: object) => api('POST', `/api/v1/flags/${flagId}/rollouts`, { steps, guard });

t.test('guards that do not fit the experiment are refused, naming the field; nothing changes', async (t) => {
  const metric = { experiment: 'checkout-2026', metric: 'purchase', worse: 'lower' };
  for (const [guard, pattern] of [
    [{ ...metric, experiment: 'nope' }, /guard.experiment: no experiment "nope" in this project/],
    [{ ...metric, metric: 'refund' }, /guard.metric: "refund" is not a metric of experiment "checkout-2026" \(purchase, revenue\)/],
    [{ experiment: 'checkout-2026', metric: 'purchase' }, /guard.worse is required with a metric/],
    [{ ...metric, worse: 'worse' }, /guard.worse must be "lower" or "higher"/],
    [{ ...metric, sampleRatio: true }, /give metric \(with worse\) or sampleRatio: true, not both/],
    [{ experiment: 'checkout-2026' }, /give metric \(with worse\) or sampleRatio: true/],
    [{ ...metric, max: 0 }, /an experiment guard has no max or min/],
    [{ ...metric, prometheus: 'up' }, /exactly one of prometheus/],
    [{ metric: 'purchase', worse: 'lower', max: 1, flagwire: 'up' }, /metric, worse and sampleRatio read an experiment/],
  ] as const) {
    const refused = await refusedRequest(t, world, 400, () => start(guard));
    t.match(refused, { error: 'Invalid request', detail: pattern });
  }
  // An experiment of another flag guards nothing of this one.
  const refused = await refusedRequest(t, world, 400, () =>
    api('POST', `/api/v1/flags/${ids.flag2}/rollouts`, { steps, guard: { experiment: 'checkout-2026', sampleRatio: true } }),
  );
  t.match(
    refused.detail,
    new RegExp(`guard.experiment: experiment "checkout-2026" runs on flag ${flagId}, not on the flag this rollout drives`),
  );
});

t.test('a metric guard rolls back a treatment worse with confidence; the audit holds the figures', async (t) => {
  const guard = { experiment: 'checkout-2026', metric: 'purchase', worse: 'lower', intervalMs: 1000, onBreach: 'rollback' };
  const started = await start(guard);
  t.equal(started.status, 201, started.text);
  t.match(started.json, { guard: { ...guard, max: null, min: null } });
  const id = started.json.id as string;
  t.equal(await served(), 50, 'the first step at once');
  const first = await pollUntil(
    'the first reading',
    () => rollout(id),
    (r) => r.guardReading !== null,
  );
  t.match(first, { status: 'running', guardReading: { breached: false, value: null, note: /not enough data yet/ } }, 'no data: healthy');

  // 300 subjects on and 100 off (a split the sample-ratio guard below finds wrong): 10% of on buy, 60% of off.
  const now = Date.now();
  const events: object[] = [];
  const seen = { on: 0, off: 0 };
  for (let i = 0; i < 400; i++) {
    const targetingKey = `subject-${i}`;
    const variant = i % 4 === 0 ? 'off' : 'on';
    events.push({ kind: 'exposure', key: 'new-checkout', targetingKey, variant, timestamp: now });
    if (seen[variant]++ % 10 < (variant === 'on' ? 1 : 6))
      events.push({ kind: 'track', key: 'purchase', targetingKey, timestamp: now + 1 });
  }
  must(await call(base, 'POST', '/ofrep/v1/events', { token: clientKey, body: { events } }), 200);

  const ended = await pollUntil(
    'the breach',
    () => rollout(id),
    (r) => r.status !== 'running',
  );
  t.match(ended, {
    status: 'rolled-back',
    pausedReason:
      /^guard breached: on is worse than off on purchase with confidence: lift -8\d(\.\d)?% \(.* to .*, always valid at alpha 0\.05; on 300, off 100 subjects\)$/,
    guardReading: { breached: true },
  });
  t.equal(await served(), 10, 'back to the percentage before the first step');

  // The figures are those of the analysis of the statistics route's sums, at the experiment's alpha.
  const expected = experimentResults(
    await statistics(),
    { control: 'off', allocation: plan.variants, metrics: [plan.metrics[0]!], plannedSubjects: plan.plannedSubjects },
    { ...kDefaultAnalysis, alpha: 0.05, previousSrmPValue: 1 },
  ).comparisons[0]!;
  const lift = expected.relative!;
  t.ok(lift.upper < 0, 'the always-valid interval of the lift is below 0');
  const breach = audit().find((e) => e.action === 'rollout.guard-breach' && e.flagId === flagId)!;
  t.match(breach, {
    actor: `plan:${id}`,
    changes: {
      guard: {
        before: 'experiment: checkout-2026, purchase worse when lower (on breach: rollback)',
        after: { breached: true, value: lift.estimate },
      },
      rollout: { before: 'running', after: 'rolled-back' },
    },
  });
  t.same((breach.changes.guard!.after as { figures: unknown }).figures, {
    experiment: 'checkout-2026',
    metric: 'purchase',
    control: { variant: 'off', subjects: 100, mean: 0.6 },
    treatment: { variant: 'on', subjects: 300, mean: 0.1 },
    effect: 'relative',
    estimate: lift.estimate,
    lower: lift.lower,
    upper: lift.upper,
    pValue: lift.pValue,
    alpha: 0.05,
  });
  t.same(ended.guardReading.figures, (breach.changes.guard!.after as { figures: unknown }).figures, 'the rollout shows the same figures');
});

t.test('a sample-ratio guard pauses on a mismatch, with the Bayes factor and each arm', async (t) => {
  const guard = { experiment: 'checkout-2026', sampleRatio: true, intervalMs: 1000 };
  const started = await start(guard);
  t.equal(started.status, 201, started.text);
  const id = started.json.id as string;
  const ended = await pollUntil(
    'the breach',
    () => rollout(id),
    (r) => r.status !== 'running',
  );
  t.match(ended, { status: 'paused', pausedReason: /^guard breached: sample ratio mismatch in experiment checkout-2026: Bayes factor / });
  const expected = experimentResults(
    await statistics(),
    { control: 'off', allocation: plan.variants, metrics: [], plannedSubjects: plan.plannedSubjects },
    { ...kDefaultAnalysis, alpha: 0.05, previousSrmPValue: 1 },
  ).srm;
  t.ok(expected.bayesFactor >= 20, `300/100 against 50/50: Bayes factor ${expected.bayesFactor}, past 1/alpha`);
  const breach = audit().find(
    (e) => e.action === 'rollout.guard-breach' && e.changes.guard?.before === 'experiment: checkout-2026, sample ratio (on breach: pause)',
  )!;
  t.match(breach, { actor: `plan:${id}`, changes: { rollout: { before: 'running', after: 'paused' } } });
  t.same((breach.changes.guard!.after as { figures: unknown }).figures, {
    experiment: 'checkout-2026',
    bayesFactor: expected.bayesFactor,
    pValue: expected.pValue,
    alpha: 0.05,
    arms: [
      { variant: 'off', subjects: 100, planned: 0.5, observed: 0.25 },
      { variant: 'on', subjects: 300, planned: 0.5, observed: 0.75 },
    ],
  });
});

// Rollout guards (issue 27, item 3) in process: what makes a guard valid, what a reading means, and the
// writer's rolloutGuardRecord (a reading recorded once; a breach pauses or rolls back, its reading in the
// audit entry); the reader against a local HTTP server speaking Prometheus's query API and the metrics
// text. The black-box test with a real Prometheus is guards-prometheus.test.ts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { GuardReader, sampleValue } from '../../src/release-plans/guard-reader.js';
import { guardProblems, judgeReading, kGuardMaxFailures, storedGuard } from '../../src/release-plans/guards.js';
import { parseSelector, selectSamples } from '../../src/release-plans/metric-selector.js';
import { MetricAllowList, promqlMetricNames } from '../../src/release-plans/promql-metrics.js';
import { tempDataDir } from '../helpers/server.js';
import { refusedCommand } from '../helpers/refused.js';
import { buildWorld } from '../helpers/world.js';
import { listDueRollouts } from '../../src/release-plans/records.js';
import { getFlag } from '../../src/flags/records/flag-store.js';
import type { RolloutGuard } from '../../src/release-plans/rollouts.js';

const world = buildWorld(tempDataDir());
t.teardown(() => world.store.close());
const { ids } = world;
const kHour = 3_600_000;
const t0 = Date.now();
/** A reader's sources that allow every metric (the allow-list is tested on its own). */
const kMetricsAsked: string[][] = [];
const kEverySource = {
  prometheusMetrics: new MetricAllowList(['*']),
  timeoutMs: 5000,
  // The experiment guard's statistics: one arm's subjects as stored in scope `prj_a` and `staging` (any
  // other: none); the metrics each read named, in `kMetricsAsked`.
  experiment: async (scope: { projectId: string; environment: string }, key: string, metrics: readonly string[]) => {
    kMetricsAsked.push([...metrics]);
    if (scope.projectId !== 'prj_a') throw new Error('tally closed');
    return scope.environment === 'staging' && key === 'exp' ? { arms: [{ variant: 'on', subjects: 3 }], sums: [] } : { arms: [], sums: [] };
  },
};
/** What the reader is given of a rollout: its id, project, environment and guard. */
const planOf = (id: string, guard: RolloutGuard, projectId = 'prj_a', env: string | null = null) => ({ id, projectId, env, guard });
const read = () => {
  world.store.resetReadTxn();
  return world.store;
};
const percentage = (flagId: string) => (getFlag(read(), flagId) as { state: { trafficPercentage: number } }).state.trafficPercentage;
const audit = () => read().listAudit(ids.single, { limit: 1000, before: null });
const kSteps = [{ trafficPercentage: 10, holdMs: kHour }, { trafficPercentage: 50, holdMs: kHour }, { trafficPercentage: 100 }];
let flags = 0;
const newFlag = () =>
  world.run('flagCreate', { projectId: ids.single, principal: kOperator, body: { name: `guarded-${flags++}`, enabled: true } });
const start = (flagId: string, guard: unknown, now = t0) =>
  world.run('rolloutStart', { principal: kOperator, flagId, env: null, body: { steps: kSteps, guard }, guardMetrics: null }, now);
const record = (rolloutId: string, dueAt: number, reading: unknown, now: number) =>
  world.run('rolloutGuardRecord', { rolloutId, dueAt, reading: reading as never }, now);

t.test('a guard is checked when the rollout starts; nothing written when refused', async (t) => {
  const flag = newFlag();
  const before = audit().length;
  const refused = (t: Test, guard: unknown, text: RegExp) =>
    t.match(
      refusedCommand(t, world, 'INVALID_REQUEST', () => start(flag.id, guard)),
      text,
    );
  refused(t, { max: 1 }, /exactly one of prometheus .*, flagwire .* or experiment/);
  refused(t, { prometheus: 'up', flagwire: 'up', max: 1 }, /exactly one/);
  refused(t, { prometheus: 'up' }, /give max, min or both/);
  refused(t, { prometheus: 'up', min: 2, max: 1 }, /guard.min \(2\) is above guard.max \(1\)/);
  refused(t, { flagwire: 'rate(x[1m])', max: 1 }, /guard.flagwire: after rate, only \{label="value",...\} may follow/);
  refused(t, { prometheus: 'up', max: 1, intervalMs: 10 }, /intervalMs/);
  refused(t, { prometheus: 'up', max: 1, onBreach: 'explode' }, /onBreach/);
  refused(t, { prometheus: 'up', max: 1, extra: 1 }, /extra/);
  t.equal(audit().length, before, 'nothing audited');
  t.equal(percentage(flag.id), 0, 'no step taken');
  t.same(storedGuard({ prometheus: 'up', max: 1 }), { prometheus: 'up', max: 1, min: null, intervalMs: 30_000, onBreach: 'pause' });
  t.same(guardProblems({ flagwire: 'flagwire_http_requests_total{status="500", route="x"}', min: 0 }, null), []);
});

t.test('a reading is judged against its bounds; no data is healthy; failures in a row breach', async (t) => {
  const guard = storedGuard({ prometheus: 'x', max: 0.05, min: 0 });
  t.match(judgeReading(guard, { values: [0.01, 0.02], note: null }, 0, 1), { value: 0.02, breached: false, note: null });
  t.match(judgeReading(guard, { values: [0.01, 0.2], note: null }, 0, 1), { value: 0.2, breached: true, note: 'read 0.2, above max 0.05' });
  t.match(judgeReading(guard, { values: [-1], note: null }, 0, 1), { value: -1, breached: true, note: 'read -1, below min 0' });
  t.match(judgeReading(guard, { values: [], note: 'no data' }, 2, 1), { value: null, breached: false, failures: 0 });
  // Issue 42: a reading no bound admits is a breach, whichever bound the guard has.
  for (const [value, text] of [
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, '+Inf'],
    [Number.NEGATIVE_INFINITY, '-Inf'],
  ] as const) {
    for (const bounded of [guard, storedGuard({ prometheus: 'x', max: 1 }), storedGuard({ prometheus: 'x', min: 0 })])
      t.match(judgeReading(bounded, { values: [0.01, value], note: null }, 2, 1), {
        value: null,
        breached: true,
        note: `read ${text}, which no bound admits`,
        failures: 0,
      });
  }
  t.equal(sampleValue('+Inf'), Number.POSITIVE_INFINITY);
  t.equal(sampleValue('-Inf'), Number.NEGATIVE_INFINITY);
  t.ok(Number.isNaN(sampleValue('NaN')));
  t.equal(sampleValue('0.25'), 0.25);
  t.ok(Number.isNaN(sampleValue(undefined)), 'a sample without a value');
  const down = { error: 'Prometheus could not be read: connection refused', invalid: false };
  t.match(judgeReading(guard, down, 0, 1), { breached: false, failures: 1 });
  t.match(judgeReading(guard, down, kGuardMaxFailures - 1, 1), {
    breached: true,
    failures: kGuardMaxFailures,
    note: /3 readings in a row/,
  });
  t.match(judgeReading(guard, { error: 'parse error', invalid: true }, 0, 1), {
    breached: true,
    note: 'the guard cannot be read: parse error',
  });
});

t.test('the metrics a PromQL expression reads, and the allow-list', async (t) => {
  const names = (expression: string) => promqlMetricNames(expression);
  const cases: [string, string[]][] = [
    ['up', ['up']],
    ['sum(rate(http_requests_total{code=~"5.."}[5m])) / sum(rate(http_requests_total[5m]))', ['http_requests_total']],
    ['histogram_quantile(0.99, sum by (le, job) (rate(req_seconds_bucket[5m])))', ['req_seconds_bucket']],
    ['sum without (instance) (a) and on(job) group_left(team) b:recorded offset 5m', ['a', 'b:recorded']],
    ['max_over_time(x[1h:5m]) > bool 0.5 unless y @ start()', ['x', 'y']],
    ['label_replace(z, "dst", "$1 up", "src", "(.*)") or vector(0)', ['z']],
    ['count_values("value", w) # a comment naming secret_total', ['w']],
    ['-Inf < q * 1e3 + 0x1f - NaN', ['q']],
  ];
  for (const [expression, expected] of cases) t.same(names(expression), { names: expected }, expression);
  t.match(names('{job="x"}'), { problem: /name its metric/ });
  t.match(names('sum({__name__=~".+"})'), { problem: /name its metric/ });
  t.match(names('x{__name__!="y"}'), { problem: /__name__/ });
  t.match(names('vector(1)'), { problem: /reads no metric/ });
  t.match(names('x{a="1"'), { problem: /unclosed/ });

  const list = new MetricAllowList(['http_requests_total', 'checkout_*']);
  t.equal(list.problem('sum(rate(http_requests_total[5m])) / max(checkout_error_ratio)'), null);
  t.match(list.problem('up + checkout_x + node_load1'), /^up, node_load1 are not among the metrics/);
  t.match(new MetricAllowList([]).problem('up'), /allows no Prometheus metrics/);
  t.equal(new MetricAllowList(['*']).problem('anything_at_all'), null);
  t.match(new MetricAllowList(['*']).problem('{job="x"}'), /name its metric/, 'even * names its metrics');
  t.same(guardProblems({ prometheus: 'up', max: 1 }, list), [
    "guard.prometheus: up is not among the metrics this server's guards may read (FLAGWIRE_PROMETHEUS_METRICS: http_requests_total, checkout_*)",
  ]);
  t.same(guardProblems({ prometheus: 'up', max: 1 }, null), [], 'the command line (the operator) is not held to it');
});

t.test('readings recorded once; a breach pauses, its reading in the audit entry; resume reads again', async (t) => {
  const flag = newFlag();
  const plan = start(flag.id, { prometheus: 'sum(rate(errors_total[1m]))', max: 0.05, intervalMs: 10_000 });
  t.match(plan, { guardNextAt: t0, guardReading: null, guard: { onBreach: 'pause', min: null } });
  t.same(
    listDueRollouts(read(), t0, 10).map((p) => p.id),
    [plan.id],
    'due for its first reading at once, before its step',
  );
  const healthy = record(plan.id, t0, { values: [0.01], note: null }, t0 + 5);
  t.match(healthy, { status: 'running', guardNextAt: t0 + 10_005, guardReading: { value: 0.01, breached: false } });
  t.equal(record(plan.id, t0, { values: [0.9], note: null }, t0 + 6), null, 'the same reading taken by another node: nothing');
  const paused = record(plan.id, t0 + 10_005, { values: [0.2], note: null }, t0 + 10_010);
  t.match(paused, { status: 'paused', nextAt: null, guardNextAt: null, pausedReason: 'guard breached: read 0.2, above max 0.05' });
  t.equal(percentage(flag.id), 10, 'paused: the step stays');
  t.match(audit()[0], {
    action: 'rollout.guard-breach',
    actor: `plan:${plan.id}`,
    flagId: flag.id,
    changes: {
      guard: { before: 'prometheus: sum(rate(errors_total[1m])) (max 0.05; on breach: pause)', after: { value: 0.2, breached: true } },
      rollout: { before: 'running', after: 'paused' },
    },
  });
  t.equal(record(plan.id, t0 + 20_005, { values: [0.2], note: null }, t0 + 20_010), null, 'not read while paused');
  const resumed = world.run('rolloutAct', { principal: kOperator, rolloutId: plan.id, action: 'resume' }, t0 + 30_000);
  t.match(resumed, { status: 'running', guardNextAt: t0 + 30_000 }, 'resume reads the guard again at once');
});

t.test('a breach rolls back when the guard says so; failed readings breach after three', async (t) => {
  const flag = newFlag();
  const plan = start(flag.id, { flagwire: 'flagwire_http_requests_total{status="500"}', max: 1, onBreach: 'rollback', intervalMs: 1000 });
  let at = t0;
  const down = { error: "this server's metrics could not be read: connection refused", invalid: false };
  for (let i = 1; i < kGuardMaxFailures; i++) {
    const next = record(plan.id, at, down, at + 1);
    t.match(next, { status: 'running', guardReading: { failures: i, breached: false } }, `failure ${i}: still running`);
    at = next!.guardNextAt!;
  }
  const done = record(plan.id, at, down, at + 1);
  t.match(done, { status: 'rolled-back', guardNextAt: null, pausedReason: /guard breached: .*3 readings in a row/ });
  t.equal(percentage(flag.id), 0, 'the percentage before the first step');
  t.match(audit()[1], { action: 'rollout.guard-breach', changes: { rollout: { after: 'rolled-back' } } });
});

t.test('a completed rollout stops reading its guard', async (t) => {
  const flag = newFlag();
  const plan = start(flag.id, { prometheus: 'up', min: 1 });
  world.run('rolloutAct', { principal: kOperator, rolloutId: plan.id, action: 'skip' }, t0 + 1);
  const last = world.run('rolloutAct', { principal: kOperator, rolloutId: plan.id, action: 'skip' }, t0 + 2);
  t.match(last, { status: 'completed', guardNextAt: null });
  t.notOk(listDueRollouts(read(), t0 + 10 * kHour, 100).some((p) => p.id === plan.id));
});

t.test("selectors on this server's metrics text", async (t) => {
  t.same(parseSelector('up'), { name: 'up', labels: [] });
  t.same(parseSelector('a_total{x="1", y="q\\"z"}'), {
    name: 'a_total',
    labels: [
      ['x', '1'],
      ['y', 'q"z'],
    ],
  });
  t.type(parseSelector('a{x=1}'), 'string');
  t.type(parseSelector('{x="1"}'), 'string');
  const text = [
    '# HELP req Requests.',
    '# TYPE req counter',
    'req{route="a",status="200"} 5',
    'req{route="b",status="500"} 2',
    'req{route="a",status="500"} 3',
    'req_other 100',
    '# TYPE lat histogram',
    'lat_count 7',
    '# TYPE mem gauge',
    'mem 42',
  ].join('\n');
  t.same(selectSamples(text, parseSelector('req{status="500"}') as never), { series: 2, sum: 5, counter: true });
  t.same(selectSamples(text, parseSelector('req') as never), { series: 3, sum: 10, counter: true });
  t.same(selectSamples(text, parseSelector('lat_count') as never), { series: 1, sum: 7, counter: true });
  t.same(selectSamples(text, parseSelector('mem') as never), { series: 1, sum: 42, counter: false });
  t.same(selectSamples(text, parseSelector('req{status="404"}') as never), { series: 0, sum: 0, counter: true });
});

/** A local server answering as Prometheus's query API does, and with a metrics text. */
async function fakeSources(t: Test) {
  const state = { answer: { status: 200, body: '' }, metrics: '', hang: false };
  const server: Server = createServer((req, res) => {
    if (state.hang) return;
    if (req.url?.startsWith('/metrics')) {
      res.end(state.metrics);
      return;
    }
    res.writeHead(state.answer.status, { 'content-type': 'application/json' }).end(state.answer.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())).then(() => undefined));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { state, base };
}

t.test('the reader: Prometheus answers, refusals and silence; a counter of this server read as a rate', async (t) => {
  const { state, base } = await fakeSources(t);
  const reader = new GuardReader({ ...kEverySource, prometheusUrl: base, metrics: true, ownMetricsUrl: () => `${base}/metrics` });
  const prom = storedGuard({ prometheus: 'x', max: 1 });
  state.answer = {
    status: 200,
    body: JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [{ metric: {}, value: [1, '0.5'] }] } }),
  };
  t.same(await reader.read(planOf('r1', prom)), { values: [0.5], note: null });
  state.answer = { status: 200, body: JSON.stringify({ status: 'success', data: { resultType: 'scalar', result: [1, '3'] } }) };
  t.same(await reader.read(planOf('r1', prom)), { values: [3], note: null });
  state.answer = { status: 200, body: JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [] } }) };
  t.match(await reader.read(planOf('r1', prom)), { values: [], note: /empty result/ });
  state.answer = { status: 400, body: JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error at char 3' }) };
  t.same(await reader.read(planOf('r1', prom)), { error: 'Prometheus refused the expression: parse error at char 3', invalid: true });
  state.answer = { status: 503, body: 'unavailable' };
  t.match(await reader.read(planOf('r1', prom)), { error: /answered 503/, invalid: false });
  const none = new GuardReader({ ...kEverySource, prometheusUrl: null, metrics: true, ownMetricsUrl: () => null });
  t.match(await none.read(planOf('r1', prom)), { error: /FLAGWIRE_PROMETHEUS_URL/, invalid: false });
  t.match(await none.read(planOf('r1', storedGuard({ flagwire: 'up', max: 1 }))), { values: [], note: /not listening/ });

  const own = storedGuard({ flagwire: 'req{status="500"}', max: 1 });
  state.metrics = '# TYPE req counter\nreq{status="500"} 10\n';
  t.match(await reader.read(planOf('r2', own)), { values: [], note: /from its second reading/ });
  await new Promise((r) => setTimeout(r, 200));
  state.metrics = '# TYPE req counter\nreq{status="500"} 30\n';
  const rate = await reader.read(planOf('r2', own));
  t.ok('values' in rate && rate.values[0]! > 0 && rate.values[0]! <= 100, `20 more in about 0.2 s: ${JSON.stringify(rate)}`);
  // A baseline older than twice the guard's interval (the rollout was paused, another node read it) is none.
  const quick = storedGuard({ flagwire: 'req{status="500"}', max: 1, intervalMs: 1000 });
  t.match(await reader.read(planOf('r4', quick)), { values: [], note: /from its second reading/ });
  await new Promise((r) => setTimeout(r, 50));
  t.match(await reader.read(planOf('r4', quick)), { note: null }, 'a rate from the second reading');
  await new Promise((r) => setTimeout(r, 2100));
  t.match(await reader.read(planOf('r4', quick)), { values: [], note: /from its second reading/ }, 'a stale baseline is none');
  state.metrics = '# TYPE g gauge\ng 7\n';
  t.same(await reader.read(planOf('r3', storedGuard({ flagwire: 'g', max: 1 }))), { values: [7], note: null });

  // An experiment's statistics, read from the store in the rollout's project and environment, as stored.
  const exp = storedGuard({ experiment: 'exp', sampleRatio: true });
  t.same(await reader.read(planOf('r5', exp, 'prj_a', 'staging')), {
    statistics: { experiment: 'exp', environment: 'staging', variants: [{ variant: 'on', subjects: 3, metrics: [] }] },
  });
  t.same(await reader.read(planOf('r5', exp, 'prj_a', null)), { statistics: { experiment: 'exp', environment: null, variants: [] } });
  t.same(
    await reader.read(planOf('r5', exp, 'prj_b', 'staging')),
    { error: 'the statistics of experiment exp could not be read: tally closed', invalid: false },
    'a read that fails is a failure, counted towards the breach of a guard that cannot see',
  );
  // Of the guard's metric alone, none for the sample ratio: what the writer judges stays a few rows.
  kMetricsAsked.length = 0;
  await reader.read(planOf('r6', storedGuard({ experiment: 'exp', metric: 'purchase', worse: 'lower' }), 'prj_a', 'staging'));
  await reader.read(planOf('r5', exp, 'prj_a', 'staging'));
  t.strictSame(kMetricsAsked, [['purchase'], []], "each reading asks for the guard's metric only");
});

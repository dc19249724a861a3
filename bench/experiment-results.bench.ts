// Experiment results from 10 million subjects' statistics (issue 59: the results API within 50 ms; here
// the computation alone): ms per call of
//   view      statisticsView (src/events/statistics.ts), the stored sums as the statistics route serves them
//   results   experimentResults (src/experiments/results.ts) of that view: moments, CUPED, the sequences,
//             the sample-ratio check, the Bayesian view and the sentences, for every treatment and metric
//   json      JSON.stringify of the results, as a route would send them
// for 3 arms (a control and two treatments) × 10 metrics (5 read as conversions, 5 as means) over 10,000,000
// subjects, each drawn once at the start (an event per metric with probability 0.1 after exposure and 0.1
// before, worth 0.01 to 100.00) and summed as the tally sums them. The work is O(arms × metrics) whatever
// the subjects: only the integers' widths grow with them. 7 rounds of 200 calls; the median round's mean
// per call, and the 99th percentile and the slowest of all the calls, are reported.
// With --http, the same sums are written to a real node's tally file under a running experiment on a
// typed flag (variants control, b, c), and GET /api/v1/experiments/{key}/results is timed from a client
// on loopback, one request at a time (the measure: the route's answer, the tally's read through
// the events thread and the token's check included): 7 rounds of 200 requests, reported alike.
// Run: npm run build && node dist/bench/experiment-results.bench.js [--http]
import { performance } from 'node:perf_hooks';
import { statisticsView } from '../src/events/statistics.js';
import { type ExperimentPlan, experimentResults } from '../src/experiments/results.js';
import { type ExperimentTally, type MetricSums, TallyFile } from '../src/events/tally/tally-file.js';
import { call } from '../test/helpers/http.js';
import { startTestServer, tempDataDir } from '../test/helpers/server.js';
import { buildWorld } from '../test/helpers/world.js';

const kSubjects = 10_000_000;
const kVariants = ['control', 'b', 'c'];
const kMetrics = Array.from({ length: 10 }, (_, i) => `metric-${i}`);
const kRounds = 7;
const kCalls = 200;

/** The tally of kSubjects subjects, each in a random arm, summed per metric in integers of cents. */
function drawTally(): ExperimentTally {
  const cents = kVariants.map(() => kMetrics.map(() => new Float64Array(9)));
  const subjects = kVariants.map(() => 0);
  for (let s = 0; s < kSubjects; s++) {
    const a = Math.floor(Math.random() * kVariants.length);
    subjects[a]++;
    for (const m of cents[a]) {
      const y = Math.random() < 0.1 ? 1 + Math.floor(Math.random() * 10_000) : 0;
      const x = Math.random() < 0.1 ? 1 + Math.floor(Math.random() * 10_000) : 0;
      // events, subjects, Σy, Σy², covariate events, subjects, Σx, Σx², Σxy: below 2^53, exact.
      m[0] += y > 0 ? 1 : 0;
      m[1] += y > 0 ? 1 : 0;
      m[2] += y;
      m[3] += y * y;
      m[4] += x > 0 ? 1 : 0;
      m[5] += x > 0 ? 1 : 0;
      m[6] += x;
      m[7] += x * x;
      m[8] += x * y;
    }
  }
  const unit = 10_000n; // millionths per cent
  const sums = (m: Float64Array): MetricSums => ({
    events: m[0],
    subjects: m[1],
    sum: BigInt(m[2]) * unit,
    sumOfSquares: BigInt(m[3]) * unit * unit,
    covariateEvents: m[4],
    covariateSubjects: m[5],
    covariateSum: BigInt(m[6]) * unit,
    covariateSumOfSquares: BigInt(m[7]) * unit * unit,
    sumOfProducts: BigInt(m[8]) * unit * unit,
  });
  return {
    arms: kVariants.map((variant, a) => ({ variant, subjects: subjects[a] })),
    sums: kVariants.flatMap((variant, a) => kMetrics.map((metric, i) => ({ variant, metric, sums: sums(cents[a][i]) }))),
  };
}

const plan: ExperimentPlan = {
  control: 'control',
  allocation: kVariants.map((variant) => ({ variant, weight: 1 })),
  metrics: kMetrics.map((metric, i) => ({ metric, kind: i < 5 ? 'conversion' : 'mean' })),
  plannedSubjects: kSubjects,
};

const started = performance.now();
const tally = drawTally();
console.log(`${kSubjects.toLocaleString('en-US')} subjects drawn and summed in ${((performance.now() - started) / 1000).toFixed(1)} s`);

let sink = 0;
const kHttp = process.argv.includes('--http');
const kKey = 'bench-results';

/**
 * A node whose tally holds `tally` for a running experiment on a typed flag: the sums are written into
 * its tally file directly (sending 10 million subjects' events would take the bench an hour), the
 * experiment made and started through the Management API. Returns the GET that reads its results.
 */
async function httpStage(): Promise<{ stages: Record<string, () => unknown>; stop: () => Promise<void> }> {
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  // The Management API's per-client limit (600 a minute by default) would refuse the rounds' 1,400 GETs.
  const server = await startTestServer({ dataDir, env: { FLAGWIRE_RATE_LIMIT: '1000000000' } });
  const { secrets } = world;
  const api = async (method: string, path: string, body: unknown, status: number, token = secrets.write) => {
    const r = await call(server.baseUrl, method, path, { token, body });
    if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  const variants = Object.fromEntries(kVariants.map((v) => [v, v]));
  const flag = await api(
    'POST',
    '/api/v1/flags',
    { name: 'checkout-page', enabled: true, trafficPercentage: 100, variants, defaultVariant: 'control' },
    201,
  );
  await api(
    'POST',
    '/api/v1/experiments',
    {
      key: kKey,
      flagId: flag.id,
      variants: plan.allocation,
      control: plan.control,
      metrics: plan.metrics,
      primaryMetric: kMetrics[0],
      plannedSubjects: kSubjects,
    },
    201,
  );
  await api('POST', `/api/v1/experiments/${kKey}/start`, {}, 200);
  const file = TallyFile.open(dataDir);
  const scope = { projectId: world.ids.single, environment: '' };
  await file.transact((txn) => {
    for (const { variant, subjects } of tally.arms) txn.putArm(scope, kKey, variant, subjects);
    for (const { variant, metric, sums } of tally.sums) txn.putSums(scope, kKey, variant, metric, sums);
  });
  await file.close();
  const first = await api('GET', `/api/v1/experiments/${kKey}/results`, undefined, 200, secrets.read);
  console.log(
    `via a node: ${first.comparisons.length} comparisons; sample-ratio check: ${first.srm.verdict}; observed ${first.srm.observed.join(', ')}`,
  );
  const results = () => call(server.baseUrl, 'GET', `/api/v1/experiments/${kKey}/results`, { token: secrets.read });
  return {
    stages: { 'GET results': results },
    stop: async () => {
      await server.stop();
      await world.store.close();
    },
  };
}

const inProcess: Record<string, () => unknown> = {
  view: () => statisticsView('bench', null, tally),
  results: (() => {
    const view = statisticsView('bench', null, tally);
    return () => experimentResults(view, plan);
  })(),
  json: (() => {
    const results = experimentResults(statisticsView('bench', null, tally), plan);
    return () => JSON.stringify(results);
  })(),
  all: () => JSON.stringify(experimentResults(statisticsView('bench', null, tally), plan)),
};
const http = kHttp ? await httpStage() : null;
const stages = http?.stages ?? inProcess;
const perRound: Record<string, number[]> = Object.fromEntries(Object.keys(stages).map((name) => [name, []]));
const calls: Record<string, number[]> = Object.fromEntries(Object.keys(stages).map((name) => [name, []]));
for (let round = 0; round < kRounds; round++) {
  for (const [name, run] of Object.entries(stages)) {
    const start = performance.now();
    for (let i = 0; i < kCalls; i++) {
      const t0 = performance.now();
      const out = await run();
      const ms = performance.now() - t0;
      calls[name].push(ms);
      if (kHttp && (out as { status: number }).status !== 200) throw new Error(`results: ${(out as { status: number }).status}`);
      sink += typeof out === 'string' ? out.length : 1;
    }
    perRound[name].push((performance.now() - start) / kCalls);
  }
}
const results = experimentResults(statisticsView('bench', null, tally), plan);
console.log(
  `${results.comparisons.length} comparisons (${kVariants.length - 1} treatments × ${kMetrics.length} metrics); sample-ratio check: ${results.srm.verdict}`,
);
console.log(`e.g. ${results.comparisons[5].verdict}`);
for (const [name, rounds] of Object.entries(perRound)) {
  const median = [...rounds].sort((a, b) => a - b)[Math.floor(rounds.length / 2)];
  const sorted = calls[name].sort((a, b) => a - b);
  const p99 = sorted[Math.floor(sorted.length * 0.99)];
  console.log(
    `${name.padEnd(8)} ${median.toFixed(3)} ms per call (median of ${kRounds} rounds of ${kCalls}); p99 ${p99.toFixed(3)} ms, slowest ${sorted[sorted.length - 1].toFixed(3)} ms`,
  );
}
if (sink === 0) console.log('');

// An experiment's statistics and results read in a loop beside another project's evaluations (issue 96,
// item 3): the demo's "Platform" project is evaluated over OFREP (the victim), and one of its flags is
// changed one PATCH at a time (the writer's probe), while the "Web shop" project's read token asks for
// its experiment's statistics or results, a fixed number of readers each in a loop.
// The experiment is as large as the metric-name cap lets an environment make it: its sums hold every
// variant × 4,020 metric names (the most an environment counts: 200 experiments declaring 20 metrics
// each, and 20 undeclared names), and the tally holds --subjects subjects' states, each with its
// exposure and 40 metrics' totals. They are written into the node's tally file directly (sending them
// as events would take the bench far longer than it measures); the experiment, its flag and the tokens
// are made through the node.
// Each phase reports the victim's p99 after a quiet baseline in the same run, its non-2xx and 5xx, the
// PATCH probe's p99, the readers' answers by status and their p50, and the node's peak RSS. The goal
// (issue 96, "Proved by"): the victim's p99 within 2x + 100 ms of its baseline, no 5xx to the victim or
// the probe, RSS bounded. A reader past the node's reads in flight is answered 503 with Retry-After by
// design, and counted apart.
//
//   npm run build && node dist/bench/statistics-reads.bench.js [--seconds 10] [--connections 16] [--readers 8]
//     [--subjects 200000] [--bin OTHER/dist/src/cli/flagwire.cjs]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { MetricSums, SubjectState } from '../src/events/tally/tally-file.js';
import { TallyFile } from '../src/events/tally/tally-file.js';
import { machineInfo } from './environment.js';
import { victimLoad } from './load.js';
import { kDist } from './locations.js';
import { peakRssKb, resetPeakRss, startServer, stopAll } from './processes.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    readers: { type: 'string', default: '8' },
    subjects: { type: 'string', default: '200000' },
    bin: { type: 'string' },
  },
});
const kSeconds = Number(values.seconds);
const kConnections = Number(values.connections);
const kReaders = Number(values.readers);
const kSubjects = Number(values.subjects);
/** The node to run: this build's, or another's (--bin DIST/src/cli/flagwire.cjs: a build before a change). */
const kBin = values.bin ?? join(kDist, 'src/cli/flagwire.cjs');
const kVictim = 'prj_DemoPlatform';
const kReadProject = 'prj_DemoWebShop';
const kExperiment = 'bench-checkout';
const kVariants = ['control', 'b', 'c'];
/** The plan's metrics (the most a plan declares), then the other names an environment may count. */
const kPlanMetrics = Array.from({ length: 20 }, (_, i) => `plan-${i}`);
const kMetricNames = [...kPlanMetrics, ...Array.from({ length: 4000 }, (_, i) => `counted-${i}`)];
const kSubjectMetrics = 40;

function flagwire(dataDir: string, args: string[]): Record<string, unknown> {
  return JSON.parse(execFileSync(process.execPath, [kBin, ...args, '--data', dataDir, '--json'], { encoding: 'utf8' }));
}

async function api<T = { id: string }>(base: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

const sums = (n: number): MetricSums => ({
  events: n,
  subjects: n,
  sum: BigInt(n) * 2_000_000n,
  sumOfSquares: BigInt(n) * 4_000_000_000_000n,
  covariateEvents: n,
  covariateSubjects: n,
  covariateSum: BigInt(n) * 1_000_000n,
  covariateSumOfSquares: BigInt(n) * 1_000_000_000_000n,
  sumOfProducts: BigInt(n) * 2_000_000_000_000n,
});

/** The experiment's arms and sums, and kSubjects subjects' states, in the node's tally file. */
async function fill(dataDir: string): Promise<void> {
  const file = TallyFile.open(dataDir);
  const scope = { projectId: kReadProject, environment: '' };
  const perArm = Math.floor(kSubjects / kVariants.length);
  await file.transact((txn) => {
    for (const variant of kVariants) {
      txn.putArm(scope, kExperiment, variant, perArm);
      for (const metric of kMetricNames) txn.putSums(scope, kExperiment, variant, metric, sums(perArm));
    }
  });
  const at = Date.now() - 60_000;
  for (let from = 0; from < kSubjects; from += 10_000) {
    await file.transact((txn) => {
      for (let s = from; s < Math.min(from + 10_000, kSubjects); s++) {
        const metrics = kMetricNames.slice((s * 7) % (kMetricNames.length - kSubjectMetrics)).slice(0, kSubjectMetrics);
        const total = { events: 1, total: 2_000_000n };
        const state: SubjectState = {
          exposures: new Map([[kExperiment, { variant: kVariants[s % kVariants.length]!, at }]]),
          totals: new Map(metrics.map((m) => [m, total])),
          inExperiments: new Map([[kExperiment, new Map(metrics.map((m) => [m, { pre: { events: 0, total: 0n }, post: total }]))]]),
        };
        txn.putSubject(scope, `subject-${s}`, state);
      }
      txn.addSubjects(scope, Math.min(10_000, kSubjects - from));
    });
  }
  await file.close();
}

const percentile = (ms: number[], p: number) => (ms.length === 0 ? 0 : [...ms].sort((a, b) => a - b)[Math.floor(ms.length * p)]!);

/** Requests one at a time, each `send`, until `running` says stop: the statuses and each one's ms. */
async function looping(n: number, send: () => Promise<number>, running: () => boolean) {
  const statuses: Record<string, number> = {};
  const ms: number[] = [];
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (running()) {
        const start = performance.now();
        const status = String(await send().catch(() => 0));
        ms.push(performance.now() - start);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  return { statuses, ms };
}

async function status(url: string, init: RequestInit): Promise<number> {
  const res = await fetch(url, init);
  await res.arrayBuffer();
  return res.status;
}

const fiveXx = (codes: Record<string, number>) =>
  Object.entries(codes)
    .filter(([code]) => code.startsWith('5'))
    .reduce((sum, [, n]) => sum + n, 0);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-statistics-reads-'));
  const dataDir = join(dir, 'data');
  try {
    const server = await startServer(
      'flagwire',
      [kBin, 'serve', '--demo', '--port', '0', '--data', dataDir],
      { ...process.env, FLAGWIRE_LOG_LEVEL: 'warn', FLAGWIRE_RATE_LIMIT: '1000000000', FLAGWIRE_SYNC_PORT: '0' },
      /Flagwire listening on (http:\/\/[\d.:]+)/,
      60_000,
    );
    const base = server.url;
    const owner = (flagwire(dataDir, ['user', 'list']).users as { id: string; email: string }[]).find(
      (u) => u.email === 'owner@demo.flagwire.test',
    )!.id;
    const token = (project: string, permission: string) =>
      flagwire(dataDir, ['token', 'create', project, '--as', owner, '--name', `bench-${permission}`, '--permission', permission])
        .secret as string;
    const [shopWrite, shopRead, platformWrite] = [token(kReadProject, 'write'), token(kReadProject, 'read'), token(kVictim, 'write')];
    const variants = Object.fromEntries(kVariants.map((v) => [v, v]));
    const flag = await api(base, shopWrite, 'POST', '/api/v1/flags', {
      name: 'bench-checkout-page',
      enabled: true,
      trafficPercentage: 100,
      variants,
      defaultVariant: 'control',
    });
    await api(base, shopWrite, 'POST', '/api/v1/experiments', {
      key: kExperiment,
      flagId: flag.id,
      variants: kVariants.map((variant) => ({ variant, weight: 1 })),
      control: 'control',
      metrics: kPlanMetrics.map((metric, i) => ({ metric, kind: i % 2 ? 'mean' : 'conversion' })),
      primaryMetric: kPlanMetrics[0],
      plannedSubjects: kSubjects,
    });
    await api(base, shopWrite, 'POST', `/api/v1/experiments/${kExperiment}/start`);
    const probeFlag = await api(base, platformWrite, 'POST', '/api/v1/flags', {
      name: 'bench-probe',
      environments: { staging: { enabled: true } },
    });
    const filled = performance.now();
    await fill(dataDir);
    const statistics = await api<{ variants: { metrics: unknown[] }[] }>(
      base,
      shopRead,
      'GET',
      `/api/v1/experiments/${kExperiment}/statistics`,
    );
    const rows = statistics.variants.reduce((n, v) => n + v.metrics.length, 0);
    console.log(
      `# ${Object.values(machineInfo()).join(', ')}; load average ${loadavg()[0]!.toFixed(1)}; ${kSeconds} s a phase, ${kConnections} victim connections, ${kReaders} readers; ${kBin}`,
    );
    console.log(
      `# tally: ${kSubjects} subjects of ${kSubjectMetrics} metrics each, ${rows} metric rows in the statistics (${kVariants.length} variants × ${kMetricNames.length} names), filled in ${((performance.now() - filled) / 1000).toFixed(1)} s; statistics answer ${JSON.stringify(statistics).length} bytes`,
    );
    console.log(
      '| phase | victim p99 ms | victim p50 ms | victim req/s | victim non-2xx | victim 5xx | PATCH p99 ms | PATCH 5xx | reads answered | read p50 ms | peak RSS MiB |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|');
    const reads: Record<string, string | null> = {
      baseline: null,
      statistics: `/api/v1/experiments/${kExperiment}/statistics`,
      results: `/api/v1/experiments/${kExperiment}/results`,
    };
    let baselineP99 = 0;
    let met = true;
    let patches = 0;
    for (const [name, path] of Object.entries(reads)) {
      resetPeakRss(server.pid);
      const load = victimLoad(base, kConnections, kSeconds);
      let running = true;
      const readers =
        path === null
          ? Promise.resolve({ statuses: {}, ms: [] })
          : looping(
              kReaders,
              () => status(`${base}${path}`, { headers: { authorization: `Bearer ${shopRead}` } }),
              () => running,
            );
      const probe = looping(
        1,
        () =>
          status(`${base}/api/v1/flags/${probeFlag.id}`, {
            method: 'PATCH',
            headers: { authorization: `Bearer ${platformWrite}`, 'content-type': 'application/json' },
            body: JSON.stringify({ environments: { staging: { trafficPercentage: patches++ % 100 } } }),
          }),
        () => running,
      );
      const result = await load.result;
      running = false;
      const [read, patch] = await Promise.all([readers, probe]);
      const rss = peakRssKb(server.pid) / 1024;
      if (path === null) baselineP99 = result.p99Ms;
      const victim5xx = fiveXx(result.statusCodes);
      if (path !== null && (result.p99Ms > baselineP99 * 2 + 100 || victim5xx > 0 || fiveXx(patch.statuses) > 0)) met = false;
      const answers = Object.entries(read.statuses)
        .map(([code, n]) => `${code}: ${n}`)
        .join(', ');
      console.log(
        `| ${name} | ${result.p99Ms.toFixed(1)} | ${result.p50Ms.toFixed(1)} | ${result.rps.toFixed(0)} | ${result.non2xx} | ${victim5xx} | ${percentile(patch.ms, 0.99).toFixed(1)} | ${fiveXx(patch.statuses)} | ${answers || '-'} | ${path === null ? '-' : percentile(read.ms, 0.5).toFixed(1)} | ${rss.toFixed(0)} |`,
      );
    }
    console.log(
      `# goal (victim p99 within 2x + 100 ms of the baseline, no 5xx to the victim or the PATCH probe): ${met ? 'met' : 'NOT met'}`,
    );
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

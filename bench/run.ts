// `npm run bench`: Flagwire side by side with a uWebSockets.js hello world, in one run, on 127.0.0.1.
//
//   1. a fresh data dir gets the bench data set (dataset.ts), written before any server opens it
//   2. two child processes: the hello world (hello-server.ts) and `flagwire serve` on that dir
//   3. warm-up (unrecorded), then a read-your-writes check, then rounds:
//        for each round, for each connection count: hello, (a) … (f)     (the hello world is
//        measured in every round, so each ratio compares runs made minutes apart at most)
//   4. medians → RESULTS.md (only this run's block) + results.svg; raw figures → bench/out/
//   5. micro-benches (eval, handoff, metrics, rate-limit .bench.js) as child processes, their output appended
//
// Every step is bounded: servers must listen within 20 s, the whole run has a deadline derived from
// its plan, and every child is stopped by pid at the end, on error and on SIGINT/SIGTERM.
// Exit code: 0 ok; 1 a run failed its checks (non-2xx or errors in (a)-(d) or (f)'s evaluations,
// stale reads); 2 usage error or crash; 3 deadline passed.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateDataset, type BenchData } from './dataset.js';
import { runLoad, type LoadResult, type LoadSpec, type Sequence } from './load.js';
import { runPaced } from './paced.js';
import {
  cpuBetween, cpuSample, killAllSync, peakRssKb, resetPeakRss, rssKb, rssSplitKb, startServer, stopAll, type Server,
} from './processes.js';
import { renderMarkdown, renderSvg, writeResultsFile, type Report, type ScenarioKey, type ScenarioSummary, type Target } from './report.js';
import { summariseProfileDir } from './profile-summary.js';
import { max, median } from './stats.js';

// ---- options -----------------------------------------------------------------------------------

interface Options {
  quick: boolean;
  rounds: number;
  durationSec: number;
  warmupSec: number;
  connections: number[];
  scenarios: ScenarioKey[];
  outDir: string;
  label: string;
  evalWorkers: string | null;
  micro: boolean;
  keepData: boolean;
  profile: boolean;
  generatorWorkers: number;
}

const kRepo = fileURLToPath(new URL('../../', import.meta.url));
const kDist = fileURLToPath(new URL('../', import.meta.url));
const kAllScenarios: ScenarioKey[] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm'];
const kUsage = `usage: npm run bench -- [--quick] [--rounds N] [--duration S] [--warmup S] [--connections 50,200]
       [--scenarios a,b,c,d,e,f,g,h,i,j,k,l,m] [--eval-workers N] [--generator-workers N] [--label NAME] [--out DIR]
       [--[no-]micro] [--keep-data] [--profile]
  --quick          1 round of 3 s per run, no micro-benches (default: 3 rounds of 10 s, then the micro-benches)
  --label NAME     block of RESULTS.md to write (default "main"; use one per variant, e.g. workers-2)
  --out DIR        where RESULTS.md and results.svg go (default bench/)
  --eval-workers N       FLAGWIRE_EVAL_WORKERS for the Flagwire server (default: the server's own default)
  --generator-workers N  autocannon worker threads for the GET runs (default 0: one generator thread)
  --profile        run Flagwire under --cpu-prof (every thread) and summarise where its time went;
                   profiling slows it down, so figures of a profiled run are not comparable`;

function parseOptions(argv: string[]): Options {
  const quick = argv.includes('--quick');
  const options: Options = {
    quick,
    rounds: quick ? 1 : 3,
    durationSec: quick ? 3 : 10,
    warmupSec: quick ? 1 : 3,
    connections: [50, 200],
    scenarios: kAllScenarios,
    outDir: join(kRepo, 'bench'),
    label: 'main',
    evalWorkers: null,
    micro: !quick,
    keepData: false,
    profile: false,
    generatorWorkers: 0,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) usage(`${flag} needs a value`);
      return v;
    };
    const positive = () => {
      const n = Number(value());
      if (!Number.isFinite(n) || n <= 0) usage(`${flag} needs a positive number`);
      return n;
    };
    switch (flag) {
      case '--quick': break;
      case '--rounds': options.rounds = Math.round(positive()); break;
      case '--duration': options.durationSec = positive(); break;
      case '--warmup': options.warmupSec = positive(); break;
      case '--connections': options.connections = value().split(',').map(Number).filter((n) => n > 0); break;
      case '--scenarios': options.scenarios = value().split(',').filter((s): s is ScenarioKey => (kAllScenarios as string[]).includes(s)); break;
      case '--out': options.outDir = value(); break;
      case '--label': options.label = value().replace(/[^\w.-]/g, '-'); break;
      case '--eval-workers': options.evalWorkers = String(Math.round(positive())); break;
      case '--no-micro': options.micro = false; break;
      case '--micro': options.micro = true; break;
      case '--keep-data': options.keepData = true; break;
      case '--profile': options.profile = true; break;
      case '--generator-workers': options.generatorWorkers = Math.round(positive()); break;
      case '--help': case '-h': process.stdout.write(`${kUsage}\n`); process.exit(0);
      default: usage(`unknown option ${flag}`);
    }
  }
  if (options.connections.length === 0 || options.scenarios.length === 0) usage('nothing to run');
  return options;
}

function usage(message: string): never {
  process.stderr.write(`bench: ${message}\n${kUsage}\n`);
  process.exit(2);
}

// ---- scenarios -----------------------------------------------------------------------------------

const kKeys = 10_000;
const kMixedWriteRate = 50;
/**
 * (l): (a)'s requests offered at this fixed rate, evenly spaced (open model, bench/paced.ts), for
 * latency below saturation. A closed-loop run at n connections can never show a mean latency under
 * n ÷ throughput (Little's law: 200 connections at 28k req/s queue 7 ms on average), so a latency
 * target needs a fixed offered load.
 */
const kLatencyRate = 10_000;
const kMixedWriteConnections = 10;
/** Scenarios that load a server other than the main Flagwire one. */
const kOtherServer: ReadonlySet<ScenarioKey> = new Set(['hello', 'm', 'h', 'i', 'j', 'k']);

interface Paths {
  a: string;
  b: string;
  c: string;
  d: string;
  /** (j)/(k): the token description, the cheapest authenticated Management route. */
  token: string;
  /** OFREP: the path, and the body whose `{key}` rotates like (a)'s targetingKey. */
  g: string;
  gBody: string;
}

/** Request templates; `{key}` rotates over 10,000 targeting keys (each connection takes its share). */
function scenarioPaths(data: BenchData): Paths {
  return {
    a: `/v1/flags/${data.evalFlag.id}?targetingKey={key}&plan=beta`,
    b: `/v1/flags/${data.groupFlag.id}?env=${data.groupFlag.env}&targetingKey={key}&plan=beta`,
    c: `/v1/flags/project/${data.projectId}?targetingKey={key}&plan=beta&country=NL`,
    d: `/api/v1/flags/${data.evalFlag.id}`,
    token: '/api/v1/token',
    g: `/ofrep/v1/evaluate/flags/${data.evalFlag.id}`,
    gBody: '{"context":{"targetingKey":"{key}","plan":"beta"}}',
  };
}

const rotate = (template: string, post?: { body: string; headers: Record<string, string> }): Sequence => (
  { kind: 'rotate', template, keys: kKeys, ...(post ? { method: 'POST', ...post } : {}) });

/**
 * PATCH runs: connection i owns flag i and alternates it between two values, so every request is a
 * change (never `changed: false`) and two connections never race on one flag. The values move on with
 * every write run, so the first request of a run changes the value the last run left.
 */
let writeRuns = 0;
function patches(data: BenchData): Sequence {
  return { kind: 'patch', flagIds: data.writeFlagIds, value: 1 + ((writeRuns * 2) % 98), secret: data.writeSecret };
}

/**
 * The runs of one round. The twin pairs, (h) and (i) (metrics on and off) and (j) and (k) (rate
 * limiter on and off), come in turn first and second (ABBA over rounds), so neither gains from its place.
 */
function roundOrder(scenarios: readonly ScenarioKey[], round: number): ScenarioKey[] {
  const order: ScenarioKey[] = ['hello', ...scenarios];
  for (const [x, y] of [['h', 'i'], ['j', 'k']] as const) {
    const ix = order.indexOf(x);
    const iy = order.indexOf(y);
    if (round % 2 === 0 && ix >= 0 && iy >= 0) [order[ix], order[iy]] = [order[iy]!, order[ix]!];
  }
  return order;
}

/** The twin Flagwire servers of (h)-(k), all on the main server's data dir. */
interface Twins {
  /** Metrics on: (h). */
  on: Server;
  /** Metrics off: (i). */
  off: Server;
  /**
   * (j) and (k): rate limiter on and off. Switching it off needs the test hooks, which also wrap the
   * Management API's store reads for fault injection, so both of this pair run with the hooks on.
   */
  limitOn: Server;
  limitOff: Server;
}

// ---- measuring one run -----------------------------------------------------------------------------

interface Measured<T> {
  value: T;
  seconds: number;
  serverCpu: number;
  serverThreads: Record<string, number>;
  generatorCpu: number;
  peakRssKb: number;
  endRssKb: number;
}

/** Runs `work` while recording the server's CPU (/proc), its peak RSS and this process's CPU. */
async function measured<T>(server: Server, work: () => Promise<T>): Promise<Measured<T>> {
  const pid = server.pid;
  const hwm = resetPeakRss(pid);
  let sampledPeak = rssKb(pid);
  const sampler = setInterval(() => {
    try {
      sampledPeak = Math.max(sampledPeak, rssKb(pid));
    } catch {
      // the server has exited; runOne reports it before the next run
    }
  }, 200);
  const cpu0 = cpuSample(pid);
  const gen0 = process.cpuUsage();
  const t0 = performance.now();
  try {
    const value = await work();
    const seconds = (performance.now() - t0) / 1000;
    const gen = process.cpuUsage(gen0);
    const cpu = cpuBetween(cpu0, cpuSample(pid), seconds);
    return {
      value,
      seconds,
      serverCpu: cpu.percent,
      serverThreads: cpu.threads,
      generatorCpu: ((gen.user + gen.system) / 1e6 / seconds) * 100,
      peakRssKb: Math.max(sampledPeak, hwm ? peakRssKb(pid) : 0),
      endRssKb: rssKb(pid),
    };
  } finally {
    clearInterval(sampler);
  }
}

interface RunRecord {
  key: ScenarioKey;
  round: number;
  connections: number;
  load: LoadResult;
  writes: LoadResult | null;
  m: Omit<Measured<unknown>, 'value'>;
}

const running = new Set<() => void>();

async function load(spec: LoadSpec): Promise<LoadResult> {
  const run = runLoad(spec);
  running.add(run.stop);
  try {
    return await run.result;
  } finally {
    running.delete(run.stop);
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Node leaves its threads unnamed, so thread roles are learnt from the warm-up: the busiest non-main
 * threads under (a) are the eval workers, the busiest under (e) is the writer.
 */
class ThreadRoles {
  private readonly names = new Map<string, string>();

  learn(role: 'eval' | 'writer', threads: Record<string, number>, count: number): void {
    const candidates = Object.entries(threads)
      .filter(([t, p]) => t !== 'main' && p >= 5 && !this.names.has(t))
      .sort((x, y) => y[1] - x[1])
      .slice(0, count);
    candidates.forEach(([t], i) => this.names.set(t, role === 'eval' && count > 1 ? `eval${i + 1}` : role));
  }

  relabel(threads: Record<string, number>): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [t, p] of Object.entries(threads)) out[this.names.get(t) ?? t] = p;
    return out;
  }
}

const kJson = { 'content-type': 'application/json' };

// ---- checks outside the timed runs ---------------------------------------------------------------------

async function expectOk(url: string, init: RequestInit, what: string): Promise<string> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  if (res.status < 200 || res.status > 299) throw new Error(`${what}: ${init.method ?? 'GET'} ${url} answered ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

/** One request of each scenario, before any load: a broken route fails in a second, not after the warm-up. */
async function probe(hello: Server, flagwire: Server, twins: Twins | null, data: BenchData, paths: Paths, helloBody: string): Promise<void> {
  const key = (p: string) => p.replace('{key}', 'user-1');
  const body = await expectOk(hello.url + key(paths.a), {}, 'hello world');
  if (body !== helloBody) throw new Error(`hello world answered ${body}`);
  for (const [name, path] of [['a', paths.a], ['b', paths.b], ['c', paths.c]] as const) {
    const text = await expectOk(flagwire.url + key(path), {}, `(${name})`);
    JSON.parse(text);
  }
  await expectOk(flagwire.url + paths.d, { headers: { authorization: `Bearer ${data.readSecret}` } }, '(d)');
  await expectOk(flagwire.url + paths.g, { method: 'POST', headers: kJson, body: key(paths.gBody) }, '(g)');
  if (twins !== null) {
    for (const s of [twins.on, twins.off]) await expectOk(s.url + key(paths.a), {}, s.name);
    for (const s of [twins.limitOn, twins.limitOff]) await expectOk(s.url + paths.token, { headers: { authorization: `Bearer ${data.readSecret}` } }, s.name);
  }
  await expectOk(`${flagwire.url}/api/v1/flags/${data.writeFlagIds[0]!}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${data.writeSecret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ trafficPercentage: 99 }),
  }, '(e)');
}

interface Visibility {
  /** PATCH-then-evaluate checks made. */
  checks: number;
  stale: number;
  patchP50Ms: number;
}

/**
 * Read-your-writes, sequentially: PATCH enabled, then at once evaluate; a PATCH's 200 means the change
 * is durable, so the very next evaluation must see it (design §1).
 */
async function visibilityCheck(flagwire: Server, data: BenchData, pairs: number): Promise<Visibility> {
  const headers = { authorization: `Bearer ${data.writeSecret}`, 'content-type': 'application/json' };
  const patchUrl = `${flagwire.url}/api/v1/flags/${data.visibilityFlagId}`;
  const evalUrl = `${flagwire.url}/v1/flags/${data.visibilityFlagId}?targetingKey=k`;
  let stale = 0;
  const patchMs: number[] = [];
  for (let i = 0; i < pairs; i++) {
    for (const enabled of [true, false]) {
      const t0 = performance.now();
      await expectOk(patchUrl, { method: 'PATCH', headers, body: JSON.stringify({ enabled }) }, 'visibility PATCH');
      patchMs.push(performance.now() - t0);
      const seen = JSON.parse(await expectOk(evalUrl, {}, 'visibility GET')) as { enabled: boolean };
      if (seen.enabled !== enabled) stale++;
    }
  }
  return { checks: pairs * 2, stale, patchP50Ms: median(patchMs) };
}

// ---- the run -------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  // A run lasts its duration, up to 1 s more (autocannon stops on its next 1 s tick), and a pause.
  const perRound = options.connections.length * (options.scenarios.length + 1) * (options.durationSec + 1.5);
  const warmup = options.connections.length * options.scenarios.length * (options.warmupSec + 1.5);
  const planSec = 30 + warmup + options.rounds * perRound + (options.micro ? 250 : 0);
  const deadline = setTimeout(() => {
    process.stderr.write(`bench: deadline of ${Math.round(planSec * 1.5)} s passed; stopping\n`);
    for (const stop of running) stop();
    killAllSync();
    removeScratch();
    process.exit(3);
  }, planSec * 1500);
  deadline.unref();
  log(`plan: ${options.rounds} round(s) × ${options.connections.join('/')} connections × hello + ${options.scenarios.join(',')}, ${options.durationSec} s each (≈ ${Math.round(planSec / 60)} min)`);

  const tmp = mkdtempSync(join(tmpdir(), 'flagwire-bench-'));
  if (!options.keepData) scratchDirs.add(tmp);
  const dataDir = join(tmp, 'data');
  const t0 = performance.now();
  const data = await generateDataset(dataDir);
  log(`data set: ${data.flags} flags in ${data.projects} projects, ${data.audiences} audiences (${Math.round(performance.now() - t0)} ms) in ${dataDir}`);

  const paths = scenarioPaths(data);
  const helloBody = JSON.stringify({ id: data.evalFlag.id, name: data.evalFlag.name, enabled: true });
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('FLAGWIRE_')) delete env[name];
  // All load comes from one address: the per-IP Management API limit would turn (d)/(e) into 429s.
  env.FLAGWIRE_RATE_LIMIT = '1000000000';
  env.FLAGWIRE_LOG_LEVEL = 'warn';
  if (options.evalWorkers !== null) env.FLAGWIRE_EVAL_WORKERS = options.evalWorkers;

  const records: RunRecord[] = [];
  const notes: string[] = [];
  const profileDir = options.profile ? join(kRepo, 'bench', 'out', `prof-${options.label}-${Date.now()}`) : null;
  const roles = new ThreadRoles();
  const evalWorkers = options.evalWorkers !== null ? Number(options.evalWorkers) : Math.min(8, Math.max(1, availableParallelism() - 1));
  let visibility: Visibility | null = null;
  let warmRss: RssSplit | null = null;
  const rssAfterA: RssSplit[] = [];
  /** RSS growth over each (a) run alone (after ÷ before − 1): load, not the writes of other runs. */
  const rssGrowthInA: number[] = [];
  try {
    const hello = await startServer('hello', [join(kDist, 'bench/hello-server.js'), '--port', '0', '--body', helloBody], env, /hello listening on (http:\/\/\S+)/, 20_000);
    const flagwire = await startServer(
      'flagwire',
      [...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), join(kDist, 'src/console/cli.js'), 'serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir],
      env,
      /Flagwire listening on (http:\/\/[\d.:]+)/,
      20_000,
    );
    // (h)-(k): three more Flagwire servers on the same data dir (LMDB serves several processes), the
    // same but for metrics off on one and the rate limiter off on another. They idle except during
    // their own runs, which come one after the other in every round: (h) against (i) is the cost of
    // counting and nothing else, (j) against (k) the cost of the per-IP rate limiter.
    const twin = (name: string, extra: NodeJS.ProcessEnv) => startServer(
      `flagwire-${name}`,
      [join(kDist, 'src/console/cli.js'), 'serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir],
      { ...env, ...extra },
      /Flagwire listening on (http:\/\/[\d.:]+)/,
      20_000,
    );
    const twins: Twins | null = options.scenarios.some((k) => 'hijk'.includes(k))
      ? {
        on: await twin('twin', {}),
        off: await twin('metrics-off', { FLAGWIRE_METRICS: 'off' }),
        limitOn: await twin('rate-limit-on', { FLAGWIRE_TEST_HOOKS: '1' }),
        limitOff: await twin('rate-limit-off', { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_RATE_LIMIT: 'off' }),
      }
      : null;
    log(`hello world pid ${hello.pid} on ${hello.url}; flagwire pid ${flagwire.pid} on ${flagwire.url}${twins ? `; twins: metrics on ${twins.on.pid}, off ${twins.off.pid}; rate limiter on ${twins.limitOn.pid}, off ${twins.limitOff.pid}` : ''}`);
    await probe(hello, flagwire, twins, data, paths, helloBody);

    const specFor = (key: ScenarioKey, connections: number, seconds: number): LoadSpec => {
      // The GET scenarios may use autocannon workers; the PATCH runs are far from generator-bound.
      const base = { connections, durationSec: seconds, generatorWorkers: options.generatorWorkers };
      switch (key) {
        case 'hello': return { ...base, url: hello.url, sequence: rotate(paths.a) };
        case 'a': case 'f': return { ...base, url: flagwire.url, sequence: rotate(paths.a) };
        case 'b': return { ...base, url: flagwire.url, sequence: rotate(paths.b) };
        case 'c': return { ...base, url: flagwire.url, sequence: rotate(paths.c) };
        case 'd': return { ...base, url: flagwire.url, sequence: { kind: 'fixed', request: { method: 'GET', path: paths.d, headers: { authorization: `Bearer ${data.readSecret}` } } } };
        case 'e': return { connections, durationSec: seconds, url: flagwire.url, sequence: patches(data), checkChange: true };
        case 'g': return { ...base, url: flagwire.url, sequence: rotate(paths.g, { body: paths.gBody, headers: kJson }) };
        case 'h': return { ...base, url: twins!.on.url, sequence: rotate(paths.a) };
        case 'i': return { ...base, url: twins!.off.url, sequence: rotate(paths.a) };
        case 'j': case 'k': return {
          ...base, url: (key === 'j' ? twins!.limitOn : twins!.limitOff).url,
          sequence: { kind: 'fixed', request: { method: 'GET', path: paths.token, headers: { authorization: `Bearer ${data.readSecret}` } } },
        };
        case 'l': case 'm': throw new Error(`(${key}) runs through runPaced`);
      }
    };

    const runOne = async (key: ScenarioKey, connections: number, seconds: number): Promise<Omit<RunRecord, 'round'>> => {
      const server = key === 'hello' || key === 'm' ? hello : key === 'h' ? twins!.on : key === 'i' ? twins!.off
        : key === 'j' ? twins!.limitOn : key === 'k' ? twins!.limitOff : flagwire;
      for (const s of [hello, flagwire, ...(twins ? [twins.on, twins.off, twins.limitOn, twins.limitOff] : [])]) if (!s.alive()) throw new Error(`${s.name} (pid ${s.pid}) has exited:\n${s.stderrTail().trim()}`);
      if (key === 'e' || key === 'f') writeRuns++;
      const m = await measured(server, async () => {
        if (key === 'l' || key === 'm') {
          // Connection i of n takes keys i, i+n, … like (a)'s rotation.
          const path = (i: number, k: number) => paths.a.replace('{key}', `user-${(i + k * connections) % kKeys}`);
          return { load: await runPaced({ url: server.url, connections, rate: kLatencyRate, durationSec: seconds, path }), writes: null };
        }
        if (key !== 'f') return { load: await load(specFor(key, connections, seconds)), writes: null };
        // (f): the evaluations at full load, and beside them writes at a fixed rate (open model).
        const writes = load({
          url: flagwire.url,
          connections: kMixedWriteConnections,
          durationSec: seconds,
          overallRate: kMixedWriteRate,
          sequence: patches(data),
          checkChange: true,
        });
        const [evals, w] = await Promise.all([load(specFor('a', connections, seconds)), writes]);
        return { load: evals, writes: w };
      });
      const { value, ...rest } = m;
      return { key, connections, load: value.load, writes: value.writes, m: rest };
    };

    // Warm-up: every route of both servers at every connection count (buffers per connection are
    // part of the steady state), unrecorded. It also tells which Flagwire thread is which.
    for (const connections of options.connections) {
      for (const key of ['hello', ...options.scenarios.filter((k) => k !== 'f' && k !== 'l' && k !== 'm')] as ScenarioKey[]) {
        const run = await runOne(key, connections, options.warmupSec);
        if (key === 'a') roles.learn('eval', run.m.serverThreads, evalWorkers);
        if (key === 'e') roles.learn('writer', run.m.serverThreads, 1);
        await pause(300);
      }
    }
    warmRss = rssSplitKb(flagwire.pid);
    visibility = await visibilityCheck(flagwire, data, options.quick ? 50 : 100);
    log(`warm-up done; flagwire RSS ${Math.round(warmRss.rss / 1024)} MiB (anon ${Math.round(warmRss.anon / 1024)}); read-your-writes: ${visibility.stale} stale of ${visibility.checks}, PATCH p50 ${visibility.patchP50Ms.toFixed(2)} ms`);

    for (let round = 1; round <= options.rounds; round++) {
      for (const connections of options.connections) {
        for (const key of roundOrder(options.scenarios, round)) {
          const before = key === 'a' ? rssKb(flagwire.pid) : 0;
          const record = { round, ...(await runOne(key, connections, options.durationSec)) };
          // Thread roles were learnt on the main Flagwire server; the others keep their thread ids.
          if (!kOtherServer.has(key)) record.m.serverThreads = roles.relabel(record.m.serverThreads);
          records.push(record);
          if (key === 'a') {
            rssAfterA.push(rssSplitKb(flagwire.pid));
            rssGrowthInA.push(rssAfterA.at(-1)!.rss / before - 1);
          }
          log(describe(record));
          await pause(500);
        }
      }
    }
    if (flagwire.stderrTail().trim() !== '') notes.push(`Flagwire wrote to stderr during the run (warn level and above): \`${flagwire.stderrTail().trim().split('\n').slice(-3).join(' | ').slice(0, 400)}\``);
  } finally {
    await stopAll();
  }

  const micro = options.micro ? runMicroBenches() : [];
  if (profileDir !== null) {
    const summary = summariseProfileDir(profileDir);
    process.stdout.write(`\nCPU profiles of the Flagwire process (${profileDir}):\n${summary}\n\n`);
    micro.push({ name: `Flagwire CPU profile (--profile, ${profileDir.slice(kRepo.length)})`, output: summary });
    notes.push('This run was profiled (--cpu-prof on every Flagwire thread): its figures are slower than an unprofiled run.');
  }

  // ---- summarise ----
  const summaries = summarise(records, options);
  const targets = checkTargets(records, summaries, visibility, warmRss, rssAfterA, rssGrowthInA);
  const failed: string[] = [];
  for (const s of summaries) {
    if (s.key !== 'hello' && s.key !== 'e' && (s.non2xx > 0 || s.errors > 0)) {
      failed.push(`(${s.key}) @${s.connections}: ${s.non2xx} non-2xx, ${s.errors} errors (${JSON.stringify(s.statusCodes)})`);
    }
  }
  if (visibility !== null && visibility.stale > 0) failed.push(`read-your-writes: ${visibility.stale} stale evaluations after an acknowledged PATCH`);
  notes.push(...generatorNotes(summaries));
  if (visibility) notes.push(`Read-your-writes check (sequential PATCH then evaluation, ${visibility.checks} times): ${visibility.stale} stale; single PATCH round trip p50 ${visibility.patchP50Ms.toFixed(2)} ms (one durable commit).`);
  notes.push(`(e) alternates each connection's own flag between two trafficPercentage values (they move on each write run, so every PATCH is a real change); "mismatched" counts answers that were not \`{"changed":true…}\`. (f) runs ${kMixedWriteConnections} write connections at ${kMixedWriteRate} PATCH/s in total beside (a).`);

  const report: Report = {
    label: options.label,
    mode: `${options.rounds} round(s) × ${options.durationSec} s${options.quick ? ', --quick: a sanity run, not figures to publish' : ''}`,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    command: commandLine(),
    machine: machineInfo(),
    versions: versions(),
    settings: {
      'eval workers': options.evalWorkers ?? `server default (cores − 1 = ${evalWorkers})`,
      connections: options.connections.join(', '),
      'warm-up': `${options.warmupSec} s per route`,
      generator: options.generatorWorkers > 0 ? `autocannon, ${options.generatorWorkers} worker threads for GET runs` : 'autocannon, one thread in the bench process',
    },
    dataset: `${data.flags} flags in ${data.projects} projects (one multi-environment project with 3 environments), ${data.audiences} audiences, cohort lists of 50-1,000 ids; fresh data dir`,
    summaries,
    targets,
    notes,
    micro,
    chartFile: options.label === 'main' ? 'results.svg' : `results-${options.label}.svg`,
    failed,
  };
  mkdirSync(options.outDir, { recursive: true });
  writeResultsFile(join(options.outDir, 'RESULTS.md'), options.label, renderMarkdown(report));
  writeFileSync(join(options.outDir, report.chartFile), renderSvg(report));
  const rawDir = join(kRepo, 'bench', 'out');
  mkdirSync(rawDir, { recursive: true });
  const rawFile = join(rawDir, `${options.label}-${report.date.replace(/[:]/g, '')}.json`);
  writeFileSync(rawFile, JSON.stringify({ report, records, visibility, warmRss, rssAfterA, rssGrowthInA, data: { ...data, readSecret: undefined, writeSecret: undefined } }, null, 2));
  log(`wrote ${join(options.outDir, 'RESULTS.md')} (block "${options.label}"), ${join(options.outDir, report.chartFile)}, ${rawFile}`);
  printTable(summaries, targets);

  removeScratch();
  if (options.keepData) log(`data kept in ${dataDir}`);
  clearTimeout(deadline);
  if (failed.length > 0) {
    process.stderr.write(`bench: FAILED\n  ${failed.join('\n  ')}\n`);
    return 1;
  }
  return 0;
}

// ---- summaries, targets, notes ---------------------------------------------------------------------

function summarise(records: RunRecord[], options: Options): ScenarioSummary[] {
  const out: ScenarioSummary[] = [];
  const hellos = (round: number, connections: number) => records.find((r) => r.key === 'hello' && r.round === round && r.connections === connections);
  for (const connections of options.connections) {
    for (const key of ['hello', ...options.scenarios] as ScenarioKey[]) {
      const runs = records.filter((r) => r.key === key && r.connections === connections);
      if (runs.length === 0) continue;
      const ratios = runs.map((r) => r.load.rps / (hellos(r.round, connections)?.load.rps ?? Number.NaN));
      const byRps = [...runs].sort((x, y) => x.load.rps - y.load.rps);
      const mid = byRps[(byRps.length - 1) >> 1]!;
      const codes: Record<string, number> = {};
      for (const r of runs) for (const [c, n] of Object.entries(r.load.statusCodes)) codes[c] = (codes[c] ?? 0) + n;
      const summary: ScenarioSummary = {
        key,
        connections,
        rounds: runs.length,
        rps: median(runs.map((r) => r.load.rps)),
        helloRps: median(runs.map((r) => hellos(r.round, connections)?.load.rps ?? Number.NaN)),
        ratio: median(ratios),
        p50Ms: median(runs.map((r) => r.load.p50Ms)),
        p99Ms: median(runs.map((r) => r.load.p99Ms)),
        serverCpu: median(runs.map((r) => r.m.serverCpu)),
        serverThreads: mid.m.serverThreads,
        serverUsPerRequest: median(runs.map((r) => usPerRequest(r, r.m.serverCpu))),
        generatorUsPerRequest: median(runs.map((r) => usPerRequest(r, r.m.generatorCpu))),
        threadUsPerRequest: Object.fromEntries(Object.entries(mid.m.serverThreads).map(([t, p]) => [t, usPerRequest(mid, p)])),
        generatorCpu: median(runs.map((r) => r.m.generatorCpu)),
        peakRssMb: max(runs.map((r) => r.m.peakRssKb)) / 1024,
        errors: runs.reduce((n, r) => n + r.load.errors, 0),
        non2xx: runs.reduce((n, r) => n + r.load.non2xx, 0),
        mismatches: runs.reduce((n, r) => n + r.load.mismatches, 0),
        statusCodes: codes,
      };
      if (key === 'f') {
        const w = runs.map((r) => r.writes!).filter(Boolean);
        summary.writes = {
          rps: median(w.map((x) => x.rps)),
          p50Ms: median(w.map((x) => x.p50Ms)),
          p99Ms: median(w.map((x) => x.p99Ms)),
          non2xx: w.reduce((n, x) => n + x.non2xx, 0),
          errors: w.reduce((n, x) => n + x.errors, 0),
          mismatches: w.reduce((n, x) => n + x.mismatches, 0),
        };
        const withoutWrites = runs.map((r) => records.find((x) => x.key === 'a' && x.round === r.round && x.connections === connections)?.load.p99Ms ?? Number.NaN);
        summary.p99WithoutWritesMs = median(withoutWrites);
      }
      out.push(summary);
    }
  }
  return out;
}

type RssSplit = ReturnType<typeof rssSplitKb>;

const pctText = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

/** CPU µs per answered request from a % of one core over the run ((f): evaluations and writes together). */
function usPerRequest(r: RunRecord, percent: number): number {
  const answered = r.load.requests + (r.writes?.requests ?? 0);
  return answered === 0 ? Number.NaN : ((percent / 100) * r.m.seconds * 1e6) / answered;
}

/** Median over rounds of measure(x) ÷ measure(y) in the same round and connection count (default: req/s). */
function pairedRatio(records: RunRecord[], x: ScenarioKey, y: ScenarioKey, connections: number, measure = (r: RunRecord) => r.load.rps): number {
  const ratios: number[] = [];
  for (const rx of records.filter((r) => r.key === x && r.connections === connections)) {
    const ry = records.find((r) => r.key === y && r.round === rx.round && r.connections === connections);
    if (ry) ratios.push(measure(rx) / measure(ry));
  }
  return ratios.length === 0 ? Number.NaN : median(ratios);
}

/** Server CPU µs per answered request of one run. */
const serverUs = (r: RunRecord) => usPerRequest(r, r.m.serverCpu);

/**
 * A twin pair's cost of one feature, as the paired median of server CPU per request (on ÷ off − 1),
 * with the req/s ratio beside it. CPU per request is what the feature costs whatever the generator
 * does; req/s between identical twins moves by several % from round to round on 2 shared cores.
 */
function twinCost(records: RunRecord[], on: ScenarioKey, off: ScenarioKey, c: number): { cost: number; text: string } {
  const cost = pairedRatio(records, on, off, c, serverUs) - 1;
  const rps = pairedRatio(records, on, off, c);
  const us = (key: ScenarioKey) => median(records.filter((r) => r.key === key && r.connections === c).map(serverUs));
  return {
    cost,
    text: `${pctText(cost)} server CPU per request (${us(on).toFixed(1)} vs ${us(off).toFixed(1)} µs); req/s ${rps.toFixed(3)}×`,
  };
}

function checkTargets(
  records: RunRecord[], summaries: ScenarioSummary[], visibility: Visibility | null, warm: RssSplit | null, rssAfterA: RssSplit[], growthInA: number[],
): Target[] {
  const find = (key: ScenarioKey, c: number) => summaries.find((s) => s.key === key && s.connections === c);
  const targets: Target[] = [];
  const conns = [...new Set(summaries.map((s) => s.connections))];
  for (const [key, goal] of [['a', 0.6], ['b', 0.55], ['d', 0.35]] as const) {
    for (const c of conns) {
      const s = find(key, c);
      if (!s) continue;
      targets.push({ what: `(${key}) req/s vs hello @${c}`, goal: `≥ ${goal.toFixed(2)}`, measured: s.ratio.toFixed(2), met: s.ratio >= goal });
    }
  }
  const a200 = find('a', 200);
  // Latency is measured by the generator: when it saturates, its own queueing is in every figure, so
  // the hello world's p99 in the same rounds is the floor to read (a)'s against.
  const hello200 = find('hello', 200);
  const l200 = find('l', 200);
  const m200 = find('m', 200);
  if (a200) {
    const closed = `closed loop ${a200.p99Ms.toFixed(2)} ms (Little's law floor for the mean: 200 ÷ ${Math.round(a200.rps).toLocaleString('en')} req/s = ${(200_000 / a200.rps).toFixed(1)} ms${hello200 ? `; hello world in the same rounds ${hello200.p99Ms.toFixed(2)} ms` : ''})`;
    const floor = m200 ? ` (the hello world under the same paced load (m): p50 ${m200.p50Ms.toFixed(2)}, p99 ${m200.p99Ms.toFixed(2)} ms)` : '';
    targets.push({
      what: '(a) p99 @200', goal: '≤ 5 ms',
      measured: l200 ? `${l200.p99Ms.toFixed(2)} ms at ${kLatencyRate.toLocaleString('en')} req/s offered (l)${floor}; ${closed}` : closed,
      met: (l200 ?? a200).p99Ms <= 5,
    });
  }
  for (const c of conns) {
    if (find('g', c) && find('a', c)) {
      targets.push({ what: `(g) OFREP req/s vs (a) GET @${c}`, goal: 'shown beside (a)', measured: pairedRatio(records, 'g', 'a', c).toFixed(2), met: null });
    }
    if (find('h', c) && find('i', c)) {
      const { cost, text } = twinCost(records, 'h', 'i', c);
      targets.push({ what: `metrics cost: (h) metrics on vs (i) off @${c}`, goal: 'counting costs ≤ 3%', measured: text, met: cost <= 0.03 });
    }
    if (find('j', c) && find('k', c)) {
      const { text } = twinCost(records, 'j', 'k', c);
      targets.push({ what: `rate limiter cost: (j) on vs (k) off, GET /api/v1/token @${c}`, goal: 'shown (issue 6)', measured: text, met: null });
    }
  }
  const e50 = find('e', 50);
  if (e50) {
    targets.push({
      what: '(e) durable changes/s @50',
      goal: '≥ 3,000, every one a change, visible at once',
      measured: `${Math.round(e50.rps).toLocaleString('en')}/s, ${e50.mismatches} not changed, ${e50.non2xx} non-2xx${visibility ? `; ${visibility.stale} stale of ${visibility.checks}` : ''}`,
      met: e50.rps >= 3000 && e50.mismatches === 0 && e50.non2xx === 0 && (visibility === null || visibility.stale === 0),
    });
  }
  for (const s of summaries.filter((x) => x.key === 'f')) {
    const factor = s.p99Ms / (s.p99WithoutWritesMs ?? Number.NaN);
    targets.push({
      what: `(f) eval p99 with writes vs without @${s.connections}`,
      goal: '≤ 1.5×',
      measured: `${s.p99Ms.toFixed(2)} / ${(s.p99WithoutWritesMs ?? Number.NaN).toFixed(2)} ms = ${factor.toFixed(2)}×`,
      met: Number.isFinite(factor) ? factor <= 1.5 : null,
    });
  }
  if (warm !== null && rssAfterA.length > 0) {
    // The target is about the process's own memory (heaps, buffers, native allocations): anonymous
    // RSS. File-backed RSS is mostly the memory-mapped data file, whose touched pages grow with the
    // data the (e)/(f) writes add (every PATCH adds an audit entry), not with load; it is shown beside.
    const worst = rssAfterA.reduce((a, b) => (b.anon > a.anon ? b : a));
    const growth = worst.anon / warm.anon - 1;
    const mb = (kb: number) => Math.round(kb / 1024);
    targets.push({
      what: 'RSS after (a) vs after warm-up (anonymous: the process\'s own memory)',
      goal: 'within 10%',
      measured: `anonymous ${mb(warm.anon)} → ${mb(worst.anon)} MiB (${pctText(growth)}); total ${mb(warm.rss)} → ${mb(worst.rss)} MiB, of which file-backed `
        + `(the LMDB map, grown by the data the writes added) ${mb(warm.file)} → ${mb(worst.file)}; total RSS over the (a) runs alone at most ${pctText(Math.max(...growthInA))}`,
      met: Math.abs(growth) <= 0.1,
    });
  }
  return targets;
}

function generatorNotes(summaries: ScenarioSummary[]): string[] {
  const notes: string[] = [];
  const cores = availableParallelism();
  for (const hello of summaries.filter((x) => x.key === 'hello')) {
    const gen = hello.generatorUsPerRequest;
    if (hello.generatorCpu >= 85) {
      notes.push(`Generator-bound @${hello.connections}: autocannon used ${Math.round(hello.generatorCpu)}% of a core in the hello-world runs `
        + `(${gen.toFixed(1)} µs of generator CPU per request, a ceiling of about ${Math.round(1e6 / gen).toLocaleString('en')} req/s for one thread) `
        + `while the hello world used ${Math.round(hello.serverCpu)}%. The hello-world figure is then the generator's ceiling, not uWS's, and the ratios `
        + 'are relative to it: they overstate Flagwire\'s share of a uWS server driven by a native tool such as wrk. '
        + `On ${cores} cores more generator threads (--generator-workers) take CPU from the server under test; compare with such a run before concluding.`);
    }
    const a = summaries.find((x) => x.key === 'a' && x.connections === hello.connections);
    if (a) {
      const threads = Object.entries(a.threadUsPerRequest).map(([t, us]) => `${t} ${us.toFixed(1)}`).join(' + ');
      notes.push(`Cost per request @${hello.connections} (CPU µs, independent of how the cores are shared): hello world ${hello.serverUsPerRequest.toFixed(1)}; `
        + `Flagwire (a) ${a.serverUsPerRequest.toFixed(1)} (${threads}); the generator ${gen.toFixed(1)} (hello) / ${a.generatorUsPerRequest.toFixed(1)} ((a)). `
        + `With all of it on ${cores} cores, CPU alone bounds the hello world at ≈ ${Math.round((cores * 1e6) / (hello.serverUsPerRequest + gen)).toLocaleString('en')} req/s `
        + `and (a) at ≈ ${Math.round((cores * 1e6) / (a.serverUsPerRequest + a.generatorUsPerRequest)).toLocaleString('en')} req/s.`);
    }
  }
  return notes;
}

// ---- micro-benches ---------------------------------------------------------------------------------------

function runMicroBenches(): { name: string; output: string }[] {
  const out: { name: string; output: string }[] = [];
  for (const name of ['eval.bench.js', 'handoff.bench.js', 'metrics.bench.js', 'rate-limit.bench.js']) {
    const file = join(kDist, 'bench', name);
    try {
      readFileSync(file);
    } catch {
      out.push({ name, output: `(not built: ${file} missing)` });
      continue;
    }
    log(`micro-bench ${name} …`);
    try {
      // --expose-gc: rate-limit.bench.js measures memory per entry after a collection.
      const output = execFileSync(process.execPath, ['--expose-gc', file], { encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });
      out.push({ name, output });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      out.push({ name, output: `FAILED: ${e.message.split('\n')[0]}\n${e.stdout ?? ''}${e.stderr ?? ''}` });
    }
  }
  return out;
}

// ---- environment ------------------------------------------------------------------------------------------

function machineInfo(): Record<string, string> {
  let model = cpus()[0]?.model ?? '?';
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? model;
  } catch {
    // not Linux
  }
  return {
    cores: String(availableParallelism()),
    cpu: model,
    memory: `${Math.round(totalmem() / 2 ** 30)} GiB`,
    kernel: release(),
    node: process.version,
  };
}

function versions(): Record<string, string> {
  const version = (pkg: string) => {
    try {
      const json = JSON.parse(readFileSync(join(kRepo, 'node_modules', pkg, 'package.json'), 'utf8')) as { name: string; version: string };
      return json.name === pkg ? json.version : `${json.name}@${json.version}`;
    } catch {
      return '?';
    }
  };
  return {
    'uWebSockets.js': version('uWebSockets.js'),
    lmdb: version('lmdb'),
    piscina: version('piscina'),
    msgpackr: version('msgpackr'),
    autocannon: version('autocannon'),
  };
}

function commandLine(): string {
  const args = process.argv.slice(2).join(' ');
  return process.env.npm_lifecycle_event === 'bench' ? `npm run bench${args ? ` -- ${args}` : ''}` : `node dist/bench/run.js${args ? ` ${args}` : ''}`;
}

// ---- console output ------------------------------------------------------------------------------------------

function log(line: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
}

function describe(r: RunRecord): string {
  const l = r.load;
  let line = `round ${r.round} ${r.key.padEnd(5)} @${String(r.connections).padEnd(3)} ${Math.round(l.rps).toString().padStart(7)} req/s  p50 ${l.p50Ms.toFixed(2)} p99 ${l.p99Ms.toFixed(2)} ms  `
    + `server ${Math.round(r.m.serverCpu)}% gen ${Math.round(r.m.generatorCpu)}%  rss ${Math.round(r.m.peakRssKb / 1024)} MiB`;
  if (l.errors + l.non2xx + l.mismatches > 0) line += `  errors ${l.errors} non2xx ${l.non2xx} mismatched ${l.mismatches} ${JSON.stringify(l.statusCodes)}`;
  if (r.writes) line += `  | writes ${Math.round(r.writes.rps)}/s p99 ${r.writes.p99Ms.toFixed(2)} ms non2xx ${r.writes.non2xx}`;
  if (Object.keys(r.m.serverThreads).length > 0 && r.key !== 'hello') line += `  threads ${JSON.stringify(r.m.serverThreads)}`;
  return line;
}

function printTable(summaries: ScenarioSummary[], targets: Target[]): void {
  const rows = summaries.map((s) => `${s.key.padEnd(5)} @${String(s.connections).padEnd(4)} ${Math.round(s.rps).toString().padStart(7)} req/s  ${s.key === 'hello' ? '     ' : s.ratio.toFixed(2).padStart(5)}  p50 ${s.p50Ms.toFixed(2)}  p99 ${s.p99Ms.toFixed(2)} ms  `
    + `server ${Math.round(s.serverCpu)}% ${s.serverUsPerRequest.toFixed(1)} µs/req  gen ${Math.round(s.generatorCpu)}% ${s.generatorUsPerRequest.toFixed(1)} µs/req  peak ${Math.round(s.peakRssMb)} MiB  non2xx ${s.non2xx}`);
  process.stdout.write(`${rows.join('\n')}\n\n${targets.map((t) => `${t.met === null ? ' n/a' : t.met ? '  ok' : 'MISS'}  ${t.what}: ${t.measured} (goal ${t.goal})`).join('\n')}\n`);
}

// ---- entry ----------------------------------------------------------------------------------------------------

/** Temporary data dirs of this run, removed at the end, on error and on interruption (not with --keep-data). */
const scratchDirs = new Set<string>();
function removeScratch(): void {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
  scratchDirs.clear();
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`bench: ${signal}, stopping the servers\n`);
    for (const stop of running) stop();
    void stopAll().finally(() => {
      removeScratch();
      process.exit(130);
    });
  });
}
process.once('exit', killAllSync);

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    await stopAll();
    removeScratch();
    process.exit(2);
  },
);

// Runs the scenarios of scenarios.ts: starts the servers, warms up, runs the rounds and measures every
// run (the server's CPU per thread and its peak RSS from /proc, the generator's CPU). The load comes
// from load.ts (autocannon, closed loop) or paced.ts (open model); `drive` is where a scenario's
// `Load` becomes a generator run.
import { join } from 'node:path';
import { defaultEvalWorkers, defaultHttpThreads } from '../src/config.js';
import type { BenchData } from './dataset.js';
import { runLoad, type LoadResult, type LoadSpec, type Sequence } from './load.js';
import { kDist } from './locations.js';
import { log } from './log.js';
import type { Options } from './options.js';
import { runPaced } from './paced.js';
import { runWrk } from './wrk.js';
import {
  cpuBetween,
  cpuSample,
  generatorCpuSeconds,
  peakRssKb,
  resetPeakRss,
  rssKb,
  rssSplitKb,
  startServer,
  type RssSplit,
  type Server,
} from './processes.js';
import { kScenarios, pacedPath, type Load, type RequestPaths, type ScenarioKey, type ServerRole } from './scenarios.js';

// ---- servers -----------------------------------------------------------------------------------------

/** The twin Flagwire servers of (h)-(k), all on the main server's data dir. */
export interface Twins {
  /** Metrics on: (h). */
  metricsOn: Server;
  /** Metrics off: (i). */
  metricsOff: Server;
  /**
   * (j) and (k): rate limiter on and off. Switching it off needs the test hooks, which also wrap the
   * Management API's store reads for fault injection, so both of this pair run with the hooks on.
   */
  limitOn: Server;
  limitOff: Server;
}

export interface Servers {
  hello: Server;
  flagwire: Server;
  twins: Twins | null;
}

/** What every run of a bench works with. */
export interface Bench {
  options: Options;
  data: BenchData;
  paths: RequestPaths;
  servers: Servers;
}

const kFlagwireListening = /Flagwire listening on (http:\/\/[\d.:]+)/;
const kListenWithinMs = 20_000;

function serverEnv(options: Options): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('FLAGWIRE_')) delete env[name];
  // All load comes from one address: the per-IP Management API limit would turn (d)/(e) into 429s.
  env.FLAGWIRE_RATE_LIMIT = '1000000000';
  env.FLAGWIRE_LOG_LEVEL = 'warn';
  // The scenarios measure HTTP; the sync service's default port would also be one more port to collide on.
  env.FLAGWIRE_SYNC_PORT = '0';
  if (options.evalWorkers !== null) env.FLAGWIRE_EVAL_WORKERS = options.evalWorkers;
  return env;
}

/** The eval workers of the Flagwire server: --eval-workers, or the server's own default. */
export function evalWorkerCount(options: Options): number {
  return options.evalWorkers !== null ? Number(options.evalWorkers) : defaultEvalWorkers(defaultHttpThreads());
}

const isTwin = (role: ServerRole) => role !== 'hello' && role !== 'flagwire';

/** The hello world, Flagwire on `dataDir` (under --cpu-prof into `profileDir` when given), and the twins when a scenario needs them. */
export async function startServers(
  options: Options,
  dataDir: string,
  hello: { body: string; revision: number },
  profileDir: string | null,
): Promise<Servers> {
  const env = serverEnv(options);
  const serve = [join(kDist, 'src/cli/cli.js'), 'serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir];
  const helloServer = await startServer(
    'hello',
    [join(kDist, 'bench/hello-server.js'), '--port', '0', '--body', hello.body, '--revision', String(hello.revision)],
    env,
    /hello listening on (http:\/\/\S+)/,
    kListenWithinMs,
  );
  const flagwire = await startServer(
    'flagwire',
    [...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), ...serve],
    env,
    kFlagwireListening,
    kListenWithinMs,
  );
  // (h)-(k): three more Flagwire servers on the same data dir (LMDB serves several processes), the
  // same but for metrics off on one and the rate limiter off on another. They idle except during
  // their own runs, which come one after the other in every round: (h) against (i) is the cost of
  // counting and nothing else, (j) against (k) the cost of the per-IP rate limiter.
  const twin = (name: string, extra: NodeJS.ProcessEnv) =>
    startServer(`flagwire-${name}`, serve, { ...env, ...extra }, kFlagwireListening, kListenWithinMs);
  const twins: Twins | null = options.scenarios.some((k) => isTwin(kScenarios[k].server))
    ? {
        metricsOn: await twin('twin', {}),
        metricsOff: await twin('metrics-off', { FLAGWIRE_METRICS: 'off' }),
        limitOn: await twin('rate-limit-on', { FLAGWIRE_TEST_HOOKS: '1' }),
        limitOff: await twin('rate-limit-off', { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_RATE_LIMIT: 'off' }),
      }
    : null;
  log(
    `hello world pid ${helloServer.pid} on ${helloServer.url}; flagwire pid ${flagwire.pid} on ${flagwire.url}${twins ? `; twins: metrics on ${twins.metricsOn.pid}, off ${twins.metricsOff.pid}; rate limiter on ${twins.limitOn.pid}, off ${twins.limitOff.pid}` : ''}`,
  );
  return { hello: helloServer, flagwire, twins };
}

function serverFor(servers: Servers, role: ServerRole): Server {
  if (role === 'hello' || role === 'flagwire') return servers[role];
  if (servers.twins === null) throw new Error(`${role}: the twin servers were not started`);
  return servers.twins[role];
}

function everyServer({ hello, flagwire, twins }: Servers): Server[] {
  return [hello, flagwire, ...(twins ? [twins.metricsOn, twins.metricsOff, twins.limitOn, twins.limitOff] : [])];
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

export interface RunRecord {
  key: ScenarioKey;
  round: number;
  connections: number;
  load: LoadResult;
  writes: LoadResult | null;
  m: Omit<Measured<unknown>, 'value'>;
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
  const gen0 = generatorCpuSeconds();
  const t0 = performance.now();
  try {
    const value = await work();
    const seconds = (performance.now() - t0) / 1000;
    const gen = generatorCpuSeconds() - gen0;
    const cpu = cpuBetween(cpu0, cpuSample(pid), seconds);
    return {
      value,
      seconds,
      serverCpu: cpu.percent,
      serverThreads: cpu.threads,
      generatorCpu: (gen / seconds) * 100,
      peakRssKb: Math.max(sampledPeak, hwm ? peakRssKb(pid) : 0),
      endRssKb: rssKb(pid),
    };
  } finally {
    clearInterval(sampler);
  }
}

const running = new Set<() => void>();

/** Stops the load runs in flight (on a deadline or a signal). */
export function stopLoads(): void {
  for (const stop of running) stop();
}

async function load(spec: LoadSpec, options?: Options): Promise<LoadResult> {
  // GET and POST runs on wrk when chosen (wrk.ts); PATCH runs check every answer, so autocannon.
  const run =
    options?.generator === 'wrk' && spec.sequence.kind !== 'patch' && spec.overallRate === undefined
      ? runWrk({
          url: spec.url,
          connections: spec.connections,
          durationSec: spec.durationSec,
          sequence: spec.sequence,
          threads: options.wrkThreads,
          cpus: options.wrkCpus,
        })
      : runLoad(spec);
  running.add(run.stop);
  try {
    return await run.result;
  } finally {
    running.delete(run.stop);
  }
}

/** One run of `scenario` against `server`: what the generator saw, and for (f) the writes beside the reads. */
async function drive(
  bench: Bench,
  scenario: Load,
  server: Server,
  connections: number,
  seconds: number,
  writeRun: number,
): Promise<{ load: LoadResult; writes: LoadResult | null }> {
  const { options, data, paths } = bench;
  // The GET scenarios may use autocannon workers; the PATCH runs are far from generator-bound.
  const reads = (sequence: Sequence): LoadSpec => ({
    connections,
    durationSec: seconds,
    generatorWorkers: options.generatorWorkers,
    url: server.url,
    sequence,
  });
  switch (scenario.kind) {
    case 'reads':
      return { load: await load(reads(scenario.requests(paths, data)), options), writes: null };
    case 'writes':
      return {
        load: await load({
          connections,
          durationSec: seconds,
          url: server.url,
          sequence: scenario.requests(data, writeRun),
          checkChange: true,
        }),
        writes: null,
      };
    case 'mixed': {
      // (f): the evaluations at full load, and beside them writes at a fixed rate (open model).
      const writes = load({
        url: server.url,
        connections: scenario.writeConnections,
        durationSec: seconds,
        overallRate: scenario.writeRate,
        sequence: scenario.writes(data, writeRun),
        checkChange: true,
      });
      const [evals, w] = await Promise.all([load(reads(scenario.reads(paths, data)), options), writes]);
      return { load: evals, writes: w };
    }
    case 'paced':
      return {
        load: await runPaced({
          url: server.url,
          connections,
          rate: scenario.rate,
          durationSec: seconds,
          path: pacedPath(scenario.template(paths), connections),
        }),
        writes: null,
      };
  }
}

/** Write runs so far: each one moves the PATCHed values on (scenarios.ts, `patches`). */
let writeRuns = 0;

async function runOne(bench: Bench, key: ScenarioKey, connections: number, seconds: number): Promise<Omit<RunRecord, 'round'>> {
  const scenario = kScenarios[key];
  const server = serverFor(bench.servers, scenario.server);
  for (const s of everyServer(bench.servers))
    if (!s.alive()) throw new Error(`${s.name} (pid ${s.pid}) has exited:\n${s.stderrTail().trim()}`);
  if (scenario.load.kind === 'writes' || scenario.load.kind === 'mixed') writeRuns++;
  const { value, ...m } = await measured(server, () => drive(bench, scenario.load, server, connections, seconds, writeRuns));
  return { key, connections, load: value.load, writes: value.writes, m };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- warm-up and rounds ------------------------------------------------------------------------------

/**
 * Node leaves its threads unnamed, so thread roles are learnt from the warm-up: the busiest non-main
 * threads under (a) are the eval workers, the busiest under (e) is the writer.
 */
export class ThreadRoles {
  private readonly names = new Map<string, string>();

  learn(role: 'eval' | 'writer', threads: Record<string, number>, count: number): void {
    const candidates = Object.entries(threads)
      .filter(([t, p]) => t !== 'main' && p >= 5 && !this.names.has(t))
      .sort((x, y) => y[1] - x[1])
      .slice(0, count);
    for (const [i, [t]] of candidates.entries()) this.names.set(t, role === 'eval' && count > 1 ? `eval${i + 1}` : role);
  }

  relabel(threads: Record<string, number>): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [t, p] of Object.entries(threads)) out[this.names.get(t) ?? t] = p;
    return out;
  }
}

/** (f) and the paced runs send requests that (a), (e) and the hello world's runs already send. */
function warmsUp(key: ScenarioKey): boolean {
  const kind = kScenarios[key].load.kind;
  return kind === 'reads' || kind === 'writes';
}

/**
 * Warm-up: every route of every server at every connection count (buffers per connection are part of
 * the steady state), unrecorded. It also tells which Flagwire thread is which.
 */
export async function warmUp(bench: Bench): Promise<ThreadRoles> {
  const { options } = bench;
  const roles = new ThreadRoles();
  const evalWorkers = evalWorkerCount(options);
  for (const connections of options.connections) {
    for (const key of ['hello', ...options.scenarios.filter(warmsUp)] as ScenarioKey[]) {
      const run = await runOne(bench, key, connections, options.warmupSec);
      if (key === 'a') roles.learn('eval', run.m.serverThreads, evalWorkers);
      if (key === 'e') roles.learn('writer', run.m.serverThreads, 1);
      await pause(300);
    }
  }
  return roles;
}

/**
 * The runs of one round. The twin pairs, (h) and (i) (metrics on and off) and (j) and (k) (rate
 * limiter on and off), come in turn first and second (ABBA over rounds), so neither gains from its place.
 */
function roundOrder(scenarios: readonly ScenarioKey[], round: number): ScenarioKey[] {
  const order: ScenarioKey[] = ['hello', ...scenarios];
  for (const [x, y] of [
    ['h', 'i'],
    ['j', 'k'],
  ] as const) {
    const ix = order.indexOf(x);
    const iy = order.indexOf(y);
    if (round % 2 === 0 && ix >= 0 && iy >= 0) [order[ix], order[iy]] = [order[iy]!, order[ix]!];
  }
  return order;
}

export interface Rounds {
  records: RunRecord[];
  /** The main Flagwire server's resident memory after each (a) run. */
  rssAfterA: RssSplit[];
  /** RSS growth over each (a) run alone (after ÷ before − 1): load, not the writes of other runs. */
  rssGrowthInA: number[];
}

/**
 * For each round, for each connection count: the hello world, then the scenarios (the hello world is
 * measured in every round, so each ratio compares runs made minutes apart at most).
 */
export async function runRounds(bench: Bench, roles: ThreadRoles): Promise<Rounds> {
  const {
    options,
    servers: { flagwire },
  } = bench;
  const rounds: Rounds = { records: [], rssAfterA: [], rssGrowthInA: [] };
  for (let round = 1; round <= options.rounds; round++) {
    for (const connections of options.connections) {
      for (const key of roundOrder(options.scenarios, round)) {
        const before = key === 'a' ? rssKb(flagwire.pid) : 0;
        const record = { round, ...(await runOne(bench, key, connections, options.durationSec)) };
        // Thread roles were learnt on the main Flagwire server; the others keep their thread ids.
        if (kScenarios[key].server === 'flagwire') record.m.serverThreads = roles.relabel(record.m.serverThreads);
        rounds.records.push(record);
        if (key === 'a') {
          rounds.rssAfterA.push(rssSplitKb(flagwire.pid));
          rounds.rssGrowthInA.push(rounds.rssAfterA.at(-1)!.rss / before - 1);
        }
        log(describeRun(record));
        await pause(500);
      }
    }
  }
  return rounds;
}

function describeRun(r: RunRecord): string {
  const l = r.load;
  let line =
    `round ${r.round} ${r.key.padEnd(5)} @${String(r.connections).padEnd(3)} ${Math.round(l.rps).toString().padStart(7)} req/s  p50 ${l.p50Ms.toFixed(2)} p99 ${l.p99Ms.toFixed(2)} ms  ` +
    `server ${Math.round(r.m.serverCpu)}% gen ${Math.round(r.m.generatorCpu)}%  rss ${Math.round(r.m.peakRssKb / 1024)} MiB`;
  if (l.errors + l.non2xx + l.mismatches > 0)
    line += `  errors ${l.errors} non2xx ${l.non2xx} mismatched ${l.mismatches} ${JSON.stringify(l.statusCodes)}`;
  if (r.writes) line += `  | writes ${Math.round(r.writes.rps)}/s p99 ${r.writes.p99Ms.toFixed(2)} ms non2xx ${r.writes.non2xx}`;
  if (Object.keys(r.m.serverThreads).length > 0 && r.key !== 'hello') line += `  threads ${JSON.stringify(r.m.serverThreads)}`;
  return line;
}

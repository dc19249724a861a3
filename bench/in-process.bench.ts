// In-process evaluation beside the network and beside flagd (issue 44, item 6), side by side in one
// run: ns per evaluation of two flags, a static flag (boolean, on for everyone) and the five-rule flag
// (five-rule-flag.ts: typed variants, on for everyone, so every call runs the whole rule), by
//
//   engine                  the engine's own functions on an OpenFeature evaluation context, as the
//                           provider runs them per call on its compiled snapshot: the context read
//                           by OfrepContext.fill, decideState, and for the typed flag resolveVariant at
//                           the call's Date.now()
//   provider without SDK    FlagwireProvider's synchronous core (src/provider/resolve.ts resolveFlag):
//                           the engine, the flag looked up by name and the answer's details, no promise;
//                           again with the provider's usage counts on (issue 99, item 3)
//   SDK + constant          the SDK with a provider that answers one fixed object: the SDK's own cost
//   SDK + in-process        client.getBooleanValue / getStringValue of @openfeature/server-sdk with
//                           FlagwireProvider, fed by the server the bench starts; again with `usage: false`
//   flagd-core              FlagdCore.resolveBooleanEvaluation / resolveStringEvaluation, in-process, on
//                           the same flags' flagd definitions (keyed by flag name, as a flag set is)
//   SDK + flagd-core        the same through the SDK: what the stock flagd provider runs in-process
//   SDK + OFREP             @openfeature/ofrep-provider against a real Flagwire on 127.0.0.1: one POST
//                           per evaluation, awaited (as an application awaits its flag)
//
// 1,024 OpenFeature contexts (five-rule-flag.ts), cycled, reach every branch of the rule; before
// timing, every path's value is checked equal to the engine's for every context and both flags. Each
// path runs for about --round-ms per round (its count calibrated in the warm-up), the paths in turn,
// --rounds rounds: a change in the machine's load falls on all. The figure is the median round, with
// the range over rounds. Goals (issue 44): the static flag at most 50 ns, the five-rule flag at most
// 1 µs per evaluation in process.
//
// Run: npm run bench:in-process [-- --rounds 9 --round-ms 200 --no-ofrep --only PREFIX --flag NAME]
// (--no-ofrep: no network path per evaluation (the server still serves the provider's snapshot); --only: the paths whose name starts with PREFIX, and the
//  engine's; --flag static|five-rule: one flag. For a profile of one path:
//  node --cpu-prof --cpu-prof-dir bench/out/prof-five-rule dist/bench/in-process.bench.js --no-ofrep --only engine --flag five-rule
//  node dist/bench/profile-summary.js bench/out/prof-five-rule)
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlagdCore } from '@openfeature/flagd-core';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { type Client, type EvaluationContext, type JsonValue, OpenFeature, type Provider } from '@openfeature/server-sdk';
import { decideState, decisionValue } from '../src/evaluation/engine/evaluate.js';
import { resolveVariant } from '../src/evaluation/engine/variants.js';
import { OfrepContext } from '../src/ofrep/context.js';
import { type CompiledSnapshot, compileSnapshot, type ProviderFlag } from '../src/provider/compile.js';
import { FlagwireProvider } from '../src/provider/provider.js';
import { resolveFlag } from '../src/provider/resolve.js';
import { UsageCounts } from '../src/provider/usage-reporter.js';
import { kMaxBatchEntries } from '../src/provider/usage-batches.js';
import type { Snapshot } from '../src/model/snapshot-shape.js';
import { generateDataset } from './dataset.js';
import { machineInfo } from './environment.js';
import { fiveRuleContexts, kFiveRuleTargeting, kFiveRuleVariants } from './five-rule-flag.js';
import { kDist } from './locations.js';
import { killAllSync, type Server, startServer, stopAll } from './processes.js';
import { median } from './stats.js';

const kStaticName = 'static';
const kDirectName = "provider's resolveFlag without the SDK (lookup by name, details)";
const kCountedName = "provider's resolveFlag without the SDK, usage counted (src/provider/usage-reporter.ts)";
const kFiveRuleName = 'five-rule';
const kGoalNs = { [kStaticName]: 50, [kFiveRuleName]: 1000 } as const;
const kContexts: EvaluationContext[] = fiveRuleContexts(1024);
const kQuiet = { error() {}, warn() {}, info() {}, debug() {} };
const kDeadlineMs = 15 * 60_000;

interface Options {
  rounds: number;
  roundMs: number;
  ofrep: boolean;
  /** --only TEXT: only the paths whose name starts with TEXT, and the engine's (for a profile of one path). */
  only: string | null;
  /** --flag static|five-rule: that flag's paths only. */
  flag: string | null;
}

function parseOptions(argv: string[]): Options {
  const value = (name: string, fallback: number) => {
    const at = argv.indexOf(name);
    const n = at === -1 ? fallback : Number(argv[at + 1]);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} takes a positive integer`);
    return n;
  };
  const text = (name: string) => {
    const at = argv.indexOf(name);
    return at === -1 ? null : (argv[at + 1] ?? '');
  };
  return {
    rounds: value('--rounds', 9),
    roundMs: value('--round-ms', 200),
    ofrep: !argv.includes('--no-ofrep'),
    only: text('--only'),
    flag: text('--flag'),
  };
}

/** One way of evaluating one flag: `run(n)` evaluates it n times (contexts cycled) and returns a checksum. */
interface Path {
  flag: typeof kStaticName | typeof kFiveRuleName;
  name: string;
  run(n: number): number | Promise<number>;
  /** The value for context i, for the agreement check; null for the SDK's floor, which evaluates nothing. */
  value: ((i: number) => unknown) | null;
}

interface Seeded {
  dataDir: string;
  projectId: string;
  readSecret: string;
  /** The static flag's name, then the five-rule flag's. */
  names: [string, string];
}

/** The flags' keys: their names, as in a flagd flag set and in OFREP with X-Flagwire-Project. */
interface Keys {
  static: string;
  fiveRule: string;
}

/**
 * The bench data set (dataset.ts, written with the writer's own commands before the server opens it):
 * its project p01 holds the static flag and the five-rule flag, and a read token.
 */
async function seed(): Promise<Seeded> {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'flagwire-in-process-')), 'data');
  const data = await generateDataset(dataDir);
  const { staticFlag, typedFlag } = data.inProcess;
  return { dataDir, projectId: typedFlag.projectId, readSecret: data.readSecret, names: [staticFlag.name, typedFlag.name] };
}

/** The same two flags as flagd definitions, keyed by name as a flagd flag set is (src/sync/flag-set.ts). */
function flagdDocument(keys: Keys): string {
  return JSON.stringify({
    flags: {
      [keys.static]: { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on' },
      [keys.fiveRule]: { state: 'ENABLED', variants: kFiveRuleVariants, defaultVariant: 'control', targeting: kFiveRuleTargeting },
    },
  });
}

/** The SDK's own cost: a provider that answers one fixed object, whatever is asked. */
class ConstantBenchProvider implements Provider {
  readonly metadata = { name: 'constant (bench)' } as const;
  readonly runsOn = 'server' as const;
  private readonly booleanAnswer = { value: true, reason: 'STATIC' };
  private readonly stringAnswer = { value: 'C', reason: 'STATIC' };
  async resolveBooleanEvaluation() {
    return this.booleanAnswer;
  }
  async resolveStringEvaluation() {
    return this.stringAnswer;
  }
  async resolveNumberEvaluation() {
    return { value: 0, reason: 'STATIC' };
  }
  async resolveObjectEvaluation<T extends JsonValue>(_key: string, defaultValue: T) {
    return { value: defaultValue, reason: 'STATIC' };
  }
}

/** flagd-core behind the SDK, as the stock flagd provider holds it in in-process mode. */
class FlagdCoreBenchProvider implements Provider {
  readonly metadata = { name: 'flagd-core (bench wrapper)' } as const;
  readonly runsOn = 'server' as const;
  constructor(private readonly core: FlagdCore) {}
  async resolveBooleanEvaluation(key: string, defaultValue: boolean, context: EvaluationContext) {
    return this.core.resolveBooleanEvaluation(key, defaultValue, context);
  }
  async resolveStringEvaluation(key: string, defaultValue: string, context: EvaluationContext) {
    return this.core.resolveStringEvaluation(key, defaultValue, context);
  }
  async resolveNumberEvaluation(key: string, defaultValue: number, context: EvaluationContext) {
    return this.core.resolveNumberEvaluation(key, defaultValue, context);
  }
  async resolveObjectEvaluation<T extends JsonValue>(key: string, defaultValue: T, context: EvaluationContext) {
    return this.core.resolveObjectEvaluation(key, defaultValue, context);
  }
}

async function client(domain: string, provider: Provider): Promise<Client> {
  await OpenFeature.setProviderAndWait(domain, provider);
  return OpenFeature.getClient(domain);
}

/**
 * Both flags through an SDK client: getBooleanValue for the static flag, getStringValue for the
 * five-rule flag. `checked`: its values are the engine's (not so for the SDK's floor).
 */
function sdkPaths(name: string, sdk: Client, keys: Keys, checked = true): Path[] {
  return [
    {
      flag: kStaticName,
      name,
      value: checked ? (i) => sdk.getBooleanValue(keys.static, false, kContexts[i & 1023]!) : null,
      async run(n) {
        let sum = 0;
        for (let i = 0; i < n; i++) if (await sdk.getBooleanValue(keys.static, false, kContexts[i & 1023]!)) sum++;
        return sum;
      },
    },
    {
      flag: kFiveRuleName,
      name,
      value: checked ? (i) => sdk.getStringValue(keys.fiveRule, '', kContexts[i & 1023]!) : null,
      async run(n) {
        let sum = 0;
        for (let i = 0; i < n; i++) sum += (await sdk.getStringValue(keys.fiveRule, '', kContexts[i & 1023]!)).length;
        return sum;
      },
    },
  ];
}

/**
 * Every path of both flags. The synchronous loops are each their own function, so no call site is
 * shared between them (a shared one would turn polymorphic and cost every path a few ns); the SDK's
 * paths share one (every client is the SDK's one class, at microseconds per call).
 */
async function buildPaths(seeded: Seeded, server: Server, ofrep: boolean): Promise<Path[]> {
  // What the provider compiles: the native snapshot the server serves (GET /v1/snapshots/{project_id}).
  const compiled = await fetchSnapshot(seeded, server);
  const flag = (name: string): ProviderFlag => compiled.byKey.get(name)!;
  const staticFlag = flag(seeded.names[0]);
  const fiveRule = flag(seeded.names[1]);
  const keys: Keys = { static: staticFlag.name, fiveRule: fiveRule.name };
  const ctx = new OfrepContext();
  const fill = (context: EvaluationContext): OfrepContext => {
    ctx.fill(context);
    return ctx;
  };
  const direct = new OfrepContext();
  const resolve = <T extends boolean | string>(key: string, type: 'boolean' | 'string', value: T, context: EvaluationContext) =>
    resolveFlag(compiled, direct, key, type, value, context, Date.now());
  // The same with the provider's usage counts on, as FlagwireProvider runs it unless `usage: false`.
  const counts = new UsageCounts(kMaxBatchEntries);
  const countedCtx = new OfrepContext();
  const resolveCounted = <T extends boolean | string>(key: string, type: 'boolean' | 'string', value: T, context: EvaluationContext) =>
    resolveFlag(compiled, countedCtx, key, type, value, context, Date.now(), counts);
  const core = new FlagdCore(undefined, kQuiet);
  core.setConfigurations(flagdDocument(keys));
  const c = (i: number) => kContexts[i & 1023]!;
  const paths: Path[] = [
    {
      flag: kStaticName,
      name: 'engine: decideState on the context',
      value: (i) => decisionValue(decideState(staticFlag.state, fill(c(i)))),
      run(n) {
        let sum = 0;
        for (let i = 0; i < n; i++) sum += decideState(staticFlag.state, fill(kContexts[i & 1023]!)) & 1;
        return sum;
      },
    },
    {
      flag: kStaticName,
      name: kDirectName,
      value: (i) => resolve(keys.static, 'boolean', false, c(i)).value,
      run(n) {
        let sum = 0;
        for (let i = 0; i < n; i++) if (resolve(keys.static, 'boolean', false, kContexts[i & 1023]!).value) sum++;
        return sum;
      },
    },
    {
      flag: kStaticName,
      name: kCountedName,
      value: (i) => resolveCounted(keys.static, 'boolean', false, c(i)).value,
      run(n) {
        let sum = 0;
        for (let i = 0; i < n; i++) if (resolveCounted(keys.static, 'boolean', false, kContexts[i & 1023]!).value) sum++;
        return sum;
      },
    },
    {
      flag: kStaticName,
      name: 'flagd-core: resolveBooleanEvaluation',
      value: (i) => core.resolveBooleanEvaluation(keys.static, false, c(i)).value,
      run(n) {
        let sum = 0;
        for (let i = 0; i < n; i++) if (core.resolveBooleanEvaluation(keys.static, false, kContexts[i & 1023]!).value) sum++;
        return sum;
      },
    },
    {
      flag: kFiveRuleName,
      name: 'engine: decideState + resolveVariant on the context',
      value: (i) => resolveVariant(fiveRule.state.variants!, decideState(fiveRule.state, fill(c(i))), ctx, Date.now()).value,
      run(n) {
        let sum = 0;
        for (let i = 0; i < n; i++) {
          const decision = decideState(fiveRule.state, fill(kContexts[i & 1023]!));
          sum += (resolveVariant(fiveRule.state.variants!, decision, ctx, Date.now()).value as string).length;
        }
        return sum;
      },
    },
    {
      flag: kFiveRuleName,
      name: kDirectName,
      value: (i) => resolve(keys.fiveRule, 'string', '', c(i)).value,
      run(n) {
        let sum = 0;
        for (let i = 0; i < n; i++) sum += resolve(keys.fiveRule, 'string', '', kContexts[i & 1023]!).value.length;
        return sum;
      },
    },
    {
      flag: kFiveRuleName,
      name: kCountedName,
      value: (i) => resolveCounted(keys.fiveRule, 'string', '', c(i)).value,
      run(n) {
        let sum = 0;
        for (let i = 0; i < n; i++) sum += resolveCounted(keys.fiveRule, 'string', '', kContexts[i & 1023]!).value.length;
        return sum;
      },
    },
    {
      flag: kFiveRuleName,
      name: 'flagd-core: resolveStringEvaluation',
      value: (i) => core.resolveStringEvaluation(keys.fiveRule, '', c(i)).value,
      run(n) {
        let sum = 0;
        for (let i = 0; i < n; i++) sum += core.resolveStringEvaluation(keys.fiveRule, '', kContexts[i & 1023]!).value.length;
        return sum;
      },
    },
  ];
  const inProcess = new FlagwireProvider({
    url: server.url,
    token: seeded.readSecret,
    project: seeded.projectId,
    environment: null,
    snapshotPath: join(seeded.dataDir, '..', 'provider-snapshot'),
  });
  const uncounted = new FlagwireProvider({ url: server.url, token: seeded.readSecret, project: seeded.projectId, usage: false });
  // The SDK's own floor first, then the in-process provider, flagd-core, and the network.
  paths.push(...sdkPaths('SDK + a constant provider: the SDK alone', await client('constant', new ConstantBenchProvider()), keys, false));
  paths.push(...sdkPaths(`SDK + in-process (${inProcess.metadata.name})`, await client('in-process', inProcess), keys));
  paths.push(
    ...sdkPaths(`SDK + in-process (${uncounted.metadata.name}, usage: false)`, await client('in-process-uncounted', uncounted), keys),
  );
  paths.push(...sdkPaths('SDK + flagd-core', await client('flagd-core', new FlagdCoreBenchProvider(core)), keys));
  if (ofrep) {
    const ofrep = new OFREPProvider({ baseUrl: server.url, headers: [['X-Flagwire-Project', seeded.projectId]] });
    paths.push(...sdkPaths('SDK + OFREP over loopback', await client('ofrep', ofrep), keys));
  }
  return paths;
}

/** The project's snapshot as the provider fetches and compiles it. */
async function fetchSnapshot(seeded: Seeded, server: Server): Promise<CompiledSnapshot> {
  const response = await fetch(`${server.url}/v1/snapshots/${seeded.projectId}`, {
    headers: { authorization: `Bearer ${seeded.readSecret}` },
  });
  if (response.status !== 200) throw new Error(`snapshot: ${response.status} ${await response.text()}`);
  return compileSnapshot((await response.json()) as Snapshot);
}

/** Every path gives the engine's value for every context, for both flags, before anything is timed. */
async function checkAgreement(paths: readonly Path[]): Promise<void> {
  const engines = new Map(paths.filter((p) => p.name.startsWith('engine')).map((p) => [p.flag, p]));
  for (const path of paths) {
    const engine = engines.get(path.flag)!;
    if (path.value === null) continue;
    for (let i = 0; i < kContexts.length; i++) {
      const [got, want] = [await path.value(i), engine.value!(i)];
      if (got !== want)
        throw new Error(
          `${path.flag} / ${path.name}: ${String(got)} where the engine gives ${String(want)} for ${JSON.stringify(kContexts[i])}`,
        );
    }
  }
}

/** One timed run: wall-clock and this process's CPU (every thread: GC helpers too) per evaluation, ns. */
interface Sample {
  wall: number;
  cpu: number;
}

async function timeRun(path: Path, n: number): Promise<Sample> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await path.run(n);
  const wall = Number(process.hrtime.bigint() - start) / n;
  const used = process.cpuUsage(cpu);
  return { wall, cpu: ((used.user + used.system) * 1000) / n };
}

/** Warm-up and calibration: the count that makes one run last about `roundMs`. */
async function calibrate(path: Path, roundMs: number): Promise<number> {
  let n = 16;
  let ns = (await timeRun(path, n)).wall;
  while (n * ns < 100e6) {
    n *= 4;
    ns = (await timeRun(path, n)).wall;
  }
  // Once more, warm: the first runs include compiling, which would shorten every round.
  ns = (await timeRun(path, n)).wall;
  // At least 100 per round: a path over the network takes milliseconds per call on a busy machine.
  return Math.max(100, Math.round((roundMs * 1e6) / ns));
}

function commandLine(): string {
  const args = process.argv.slice(2).join(' ');
  return process.env.npm_lifecycle_event === 'bench:in-process'
    ? `npm run bench:in-process${args ? ` -- ${args}` : ''}`
    : `node dist/bench/in-process.bench.js${args ? ` ${args}` : ''}`;
}

function format(ns: number): string {
  return ns >= 10_000 ? Math.round(ns).toLocaleString('en-US') : ns >= 100 ? ns.toFixed(0) : ns.toFixed(1);
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const seeded = await seed();
  try {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of Object.keys(env)) if (name.startsWith('FLAGWIRE_')) delete env[name];
    env.FLAGWIRE_RATE_LIMIT = '1000000000';
    env.FLAGWIRE_LOG_LEVEL = 'warn';
    env.FLAGWIRE_SYNC_PORT = '0';
    const serve = [join(kDist, 'src/cli/cli.js'), 'serve', '--port', '0', '--host', '127.0.0.1', '--data', seeded.dataDir];
    const server = await startServer('flagwire', serve, env, /Flagwire listening on (http:\/\/[\d.:]+)/, 60_000);
    const paths = (await buildPaths(seeded, server, options.ofrep)).filter(
      (p) =>
        (options.only === null || p.name.startsWith('engine') || p.name.startsWith(options.only)) &&
        (options.flag === null || p.flag === options.flag),
    );
    await checkAgreement(paths);
    const loadBefore = loadavg()[0]!;
    const counts = new Map<Path, number>();
    for (const path of paths) counts.set(path, await calibrate(path, options.roundMs));
    const samples = new Map<Path, Sample[]>(paths.map((p) => [p, []]));
    for (let round = 0; round < options.rounds; round++) {
      for (const path of paths) samples.get(path)!.push(await timeRun(path, counts.get(path)!));
    }
    const loadAfter = loadavg()[0]!;
    report(options, paths, counts, samples, [loadBefore, loadAfter]);
  } finally {
    await OpenFeature.close();
    await stopAll();
    rmSync(join(seeded.dataDir, '..'), { recursive: true, force: true });
  }
}

/**
 * The table and the goals. Wall-clock is what a caller waits; CPU is what the evaluation costs, far less
 * moved than wall-clock by other processes on a shared machine. Ratios are paired by round (each
 * round's figure over the base's in the same round), then the median: a change of load during the run
 * falls on both sides of each ratio.
 */
function report(options: Options, paths: readonly Path[], counts: Map<Path, number>, samples: Map<Path, Sample[]>, load: number[]): void {
  const m = machineInfo();
  const out: string[] = [
    `Command: \`${commandLine()}\``,
    `${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; ${m.cores} cores, ${m.cpu}, node ${m.node}; load average ${load[0]!.toFixed(1)} before the rounds, ${load[1]!.toFixed(1)} after`,
    '',
    `| flag | path | wall ns/evaluation (median of ${options.rounds}) | range | CPU ns/evaluation (median) | range | ÷ engine (wall) | ÷ SDK + in-process (wall) | evaluations per round |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const find = (flag: Path['flag'], prefix: string) => paths.find((p) => p.flag === flag && p.name.startsWith(prefix));
  const pairedRatio = (path: Path, base: Path | undefined) => {
    if (base === undefined) return '–';
    const xs = samples.get(path)!;
    const bs = samples.get(base)!;
    const r = median(xs.map((x, i) => x.wall / bs[i]!.wall));
    return r >= 100 ? r.toFixed(0) : r >= 1 ? r.toFixed(2) : r.toPrecision(2);
  };
  const spread = (xs: number[]) => `${format(median(xs))} | ${format(Math.min(...xs))}-${format(Math.max(...xs))}`;
  for (const path of [...paths].sort((a, b) => (a.flag === b.flag ? 0 : a.flag === kStaticName ? -1 : 1))) {
    const xs = samples.get(path)!;
    const base = find(path.flag, 'engine');
    const sdk = find(path.flag, 'SDK + in-process');
    out.push(
      `| ${path.flag} | ${path.name} | ${spread(xs.map((x) => x.wall))} | ${spread(xs.map((x) => x.cpu))} | ${pairedRatio(path, base)} | ${pairedRatio(path, sdk)} | ${counts.get(path)!.toLocaleString('en-US')} |`,
    );
  }
  out.push('', '| goal (issue 44) | path | wall ns (median) | CPU ns (median) | met (CPU) |', '|---|---|---:|---:|---|');
  for (const flag of [kStaticName, kFiveRuleName] as const) {
    for (const path of paths.filter((p) => p.flag === flag && (p.name.startsWith('engine') || p.name.startsWith('SDK + in-process')))) {
      const xs = samples.get(path)!;
      const cpu = median(xs.map((x) => x.cpu));
      out.push(
        `| ${flag}: at most ${kGoalNs[flag]} ns | ${path.name} | ${format(median(xs.map((x) => x.wall)))} | ${format(cpu)} | ${cpu <= kGoalNs[flag] ? 'yes' : '**no**'} |`,
      );
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

const deadline = setTimeout(() => {
  process.stderr.write(`in-process bench: deadline of ${kDeadlineMs / 60_000} min passed; stopping\n`);
  killAllSync();
  process.exit(3);
}, kDeadlineMs);
deadline.unref();
process.once('exit', killAllSync);
main().then(
  () => process.exit(0),
  async (err: unknown) => {
    process.stderr.write(`in-process bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await stopAll();
    process.exit(2);
  },
);

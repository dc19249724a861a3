// `npm run bench`: Flagwire side by side with a uWebSockets.js hello world, in one run, on 127.0.0.1.
//
//   1. a fresh data dir gets the bench data set (dataset.ts), written before any server opens it
//   2. two child processes: the hello world (hello-server.ts) and `flagwire serve` on that dir, and the
//      twin Flagwire servers (h)-(k) need (runner.ts)
//   3. a probe of every route, warm-up (unrecorded), then a read-your-writes check (checks.ts), then rounds:
//        for each round, for each connection count: hello, (a) … (m)     (the hello world is
//        measured in every round, so each ratio compares runs made minutes apart at most)
//   4. medians (summaries.ts) and targets (targets.ts) → RESULTS.md (only this run's block) + results.svg;
//      raw figures → bench/out/ (report.ts)
//   5. micro-benches (eval, handoff, metrics, rate-limit .bench.js) as child processes, their output appended
//
// What each scenario sends, and to which server, is the table in scenarios.ts.
//
// Every step is bounded: servers must listen within 20 s, the whole run has a deadline derived from
// its plan, and every child is stopped by pid at the end, on error and on SIGINT/SIGTERM.
// Exit code: 0 ok; 1 a run failed its checks (non-2xx or errors in (a)-(d) or (f)'s evaluations,
// stale reads); 2 usage error or crash; 3 deadline passed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probe, visibilityCheck, type Visibility } from './checks.js';
import { generateDataset, type BenchData } from './dataset.js';
import { commandLine, machineInfo, versions } from './environment.js';
import { kRepo } from './locations.js';
import { log } from './log.js';
import { runMicroBenches, type MicroResult } from './micro.js';
import { parseOptions, type Options } from './options.js';
import { killAllSync, rssSplitKb, stopAll, type RssSplit } from './processes.js';
import { summariseProfileDir } from './profile-summary.js';
import { printTable, writeReport, type Report, type ScenarioSummary, type Target } from './report.js';
import { evalWorkerCount, runRounds, startServers, stopLoads, warmUp, type Bench, type Rounds } from './runner.js';
import { helloBody, requestPaths } from './scenarios.js';
import { summarise } from './summaries.js';
import { checkTargets, failures, summaryNotes } from './targets.js';
import { ensureWrk } from './wrk.js';

/** Temporary data dirs of this run, removed at the end, on error and on interruption (not with --keep-data). */
const scratchDirs = new Set<string>();
function removeScratch(): void {
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
  scratchDirs.clear();
}

/** A deadline of 1.5× the run's plan: past it the run stops with exit 3. */
function startDeadline(options: Options): NodeJS.Timeout {
  // A run lasts its duration, up to 1 s more (autocannon stops on its next 1 s tick), and a pause.
  const perRound = options.connections.length * (options.scenarios.length + 1) * (options.durationSec + 1.5);
  const warmup = options.connections.length * options.scenarios.length * (options.warmupSec + 1.5);
  const planSec = 30 + warmup + options.rounds * perRound + (options.micro ? 250 : 0);
  const deadline = setTimeout(() => {
    process.stderr.write(`bench: deadline of ${Math.round(planSec * 1.5)} s passed; stopping\n`);
    stopLoads();
    killAllSync();
    removeScratch();
    process.exit(3);
  }, planSec * 1500);
  deadline.unref();
  log(
    `plan: ${options.rounds} round(s) × ${options.connections.join('/')} connections × hello + ${options.scenarios.join(',')}, ${options.durationSec} s each (≈ ${Math.round(planSec / 60)} min)`,
  );
  return deadline;
}

async function writeDataset(options: Options): Promise<{ data: BenchData; dataDir: string }> {
  const tmp = mkdtempSync(join(tmpdir(), 'flagwire-bench-'));
  if (!options.keepData) scratchDirs.add(tmp);
  const dataDir = join(tmp, 'data');
  const t0 = performance.now();
  const data = await generateDataset(dataDir);
  log(
    `data set: ${data.flags} flags in ${data.projects} projects, ${data.audiences} audiences (${Math.round(performance.now() - t0)} ms) in ${dataDir}`,
  );
  return { data, dataDir };
}

interface Measurements {
  rounds: Rounds;
  visibility: Visibility;
  /** The main Flagwire server's resident memory after the warm-up. */
  warmRss: RssSplit;
  notes: string[];
}

/** Servers up and probed, warm-up, the read-your-writes check, the rounds; every server stopped whatever happens. */
async function measure(options: Options, data: BenchData, dataDir: string, profileDir: string | null): Promise<Measurements> {
  try {
    const servers = await startServers(options, dataDir, { body: helloBody(data), revision: data.revision }, profileDir);
    const bench: Bench = { options, data, paths: requestPaths(data), servers };
    await probe(bench);
    const roles = await warmUp(bench);
    const warmRss = rssSplitKb(servers.flagwire.pid);
    const visibility = await visibilityCheck(servers.flagwire, data, options.quick ? 50 : 100);
    log(
      `warm-up done; flagwire RSS ${Math.round(warmRss.rss / 1024)} MiB (anon ${Math.round(warmRss.anon / 1024)}); read-your-writes: ${visibility.stale} stale of ${visibility.checks}, PATCH p50 ${visibility.patchP50Ms.toFixed(2)} ms`,
    );
    const rounds = await runRounds(bench, roles);
    const stderr = servers.flagwire.stderrTail().trim();
    const notes =
      stderr === ''
        ? []
        : [`Flagwire wrote to stderr during the run (warn level and above): \`${stderr.split('\n').slice(-3).join(' | ').slice(0, 400)}\``];
    return { rounds, visibility, warmRss, notes };
  } finally {
    await stopAll();
  }
}

function assembleReport(
  options: Options,
  data: BenchData,
  summaries: ScenarioSummary[],
  targets: Target[],
  notes: string[],
  micro: MicroResult[],
  failed: string[],
): Report {
  return {
    label: options.label,
    mode: `${options.rounds} round(s) × ${options.durationSec} s${options.quick ? ', --quick: a sanity run, not figures to publish' : ''}`,
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    command: commandLine(),
    machine: machineInfo(),
    versions: versions(),
    settings: {
      'eval workers': options.evalWorkers ?? `server default (cores − 1 = ${evalWorkerCount(options)})`,
      connections: options.connections.join(', '),
      'warm-up': `${options.warmupSec} s per route`,
      generator:
        options.generator === 'wrk'
          ? `wrk -t${options.wrkThreads}${options.wrkCpus === null ? '' : ` on CPUs ${options.wrkCpus}`} for the GET and POST runs; autocannon (one thread) for PATCH runs and (l), (m)`
          : options.generatorWorkers > 0
            ? `autocannon, ${options.generatorWorkers} worker threads for GET runs`
            : 'autocannon, one thread in the bench process',
    },
    dataset: `${data.flags} flags in ${data.projects} projects (one multi-environment project with 3 environments), ${data.audiences} audiences, cohort lists of 50-1,000 ids; fresh data dir`,
    summaries,
    targets,
    notes,
    micro,
    chartFile: options.label === 'main' ? 'results.svg' : `results-${options.label}.svg`,
    failed,
  };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options.generator === 'wrk') ensureWrk();
  const deadline = startDeadline(options);
  const { data, dataDir } = await writeDataset(options);
  const profileDir = options.profile ? join(kRepo, 'bench', 'out', `prof-${options.label}-${Date.now()}`) : null;
  const { rounds, visibility, warmRss, notes } = await measure(options, data, dataDir, profileDir);

  const micro = options.micro ? runMicroBenches() : [];
  if (profileDir !== null) {
    const summary = summariseProfileDir(profileDir);
    process.stdout.write(`\nCPU profiles of the Flagwire process (${profileDir}):\n${summary}\n\n`);
    micro.push({ name: `Flagwire CPU profile (--profile, ${profileDir.slice(kRepo.length)})`, output: summary });
    notes.push('This run was profiled (--cpu-prof on every Flagwire thread): its figures are slower than an unprofiled run.');
  }

  const summaries = summarise(rounds.records, options);
  const targets = checkTargets(rounds, summaries, visibility, warmRss);
  const failed = failures(summaries, visibility);
  notes.push(...summaryNotes(summaries, visibility));
  const report = assembleReport(options, data, summaries, targets, notes, micro, failed);
  const { records, rssAfterA, rssGrowthInA } = rounds;
  writeReport(options.outDir, report, {
    report,
    records,
    visibility,
    warmRss,
    rssAfterA,
    rssGrowthInA,
    data: { ...data, readSecret: undefined, writeSecret: undefined },
  });
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

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`bench: ${signal}, stopping the servers\n`);
    stopLoads();
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
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    await stopAll();
    removeScratch();
    process.exit(2);
  },
);

// Runs the test files (dist/test/**/*.test.js, or the files and folders given) as plain Node processes,
// JOBS at a time (more while the machine sits idle), parses each one's TAP and ends with one summary
// line; exit status 1 when any fails.
//
// Why not tap's own runner: it starts every test file with a module hook of its coverage recorder
// (@tapjs/processinfo), which it adds whatever the configuration says, coverage off included. Node
// then routes every import of the test process through a hooks thread: about 1 CPU second more per
// file (http/auth-failures.test.js: 2.9 CPU s under tap's runner, 1.4 run by node), a sixth of the
// suite's CPU on a 2-core machine. The test files themselves are tap's (`import t from 'tap'`): run
// alone they print TAP, exit non-zero on a failure and honour TAP_TIMEOUT.
//
// Shared services: a PostgreSQL cluster for the files that call sharedPostgres() and a Chromium for those
// that launch one (launchChromium, demoConsole), started when the first such file is due and ended when
// the run ends, instead of one per file (test/helpers/postgres.ts, test/helpers/web-console.ts). A file
// is taken to need one when its code names that helper; a file run alone starts its own.
//
// FLAGWIRE_TEST_TIMES=1 ends with a table of every file's CPU seconds (user + system of its whole process
// tree: the servers, PostgreSQL and Chromium it started included), wall seconds and the seconds its process
// ran on after its last test line (after_s: root teardowns, or a job slot held for nothing), the
// costliest first, and the totals: the suite's cost measured on a machine other jobs share, where wall
// time is noise. Each file then runs under scripts/cpu-times.py (python3), which counts the daemons a
// file leaves to it. Below the files' total come the rows no file's tree holds: each shared service's
// processes over the run (from /proc, test/helpers/process-tree.ts) and the runner's own, then the
// total of the run: all but the services' start commands and their shutdowns (about 1 CPU s: a run of
// two files, 19.5 in its table, 20.6 by scripts/cpu-times.py around the runner).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Parser } from 'tap-parser';
import { describeSpeed, sampleHostSpeed } from './host-speed.mjs';

// Four files at once on a 2-core machine: many files spend much of their time waiting on the servers,
// PostgreSQL and Chromium they started, and the whole suite ran soonest at four, for little more CPU
// than three.
const kJobs = Number(process.env.FLAGWIRE_TEST_JOBS ?? 4);
// Beyond those, up to this many more while the machine sits idle: each quarter second in which more than
// a tenth of every core's time was idle (os.cpus()) starts one more file, which runs alone and is not
// replaced. Files that wait more than they work (a stock SDK's backoff, a server's stream, a lease, a
// page's settling) coming together leave a core idle, mostly for a second or two at a time. A busy
// machine starts none, so the contention of more jobs at all times (more CPU for the same work) is not
// paid. Whole runs on one tree, back to back, left fewer idle core-seconds and ended sooner with this
// watch than with a slower one or none, for the same CPU.
const kExtraJobs = Number(process.env.FLAGWIRE_TEST_EXTRA_JOBS ?? 4);
const kIdleShare = 0.1;
const kIdleWatchMs = 250;
// A file's own bound (seconds): t.setTimeout in a file overrides it. It only catches a hang: beside eight
// busy loops on two cores (scripts/load-suite.sh), the slowest file takes about half of it.
const kFileTimeoutS = Number(process.env.TAP_TIMEOUT ?? 600);
// Past its own bound, tap in the file reports and ends it; a file that cannot (a hung event loop) is
// ended by this runner this much later.
const kKillGraceS = 60;
// FLAGWIRE_TEST_OUTPUT=all prints every file's output (the long reliability run's figures are comment
// lines); by default only a failed file's.
const kAllOutput = process.env.FLAGWIRE_TEST_OUTPUT === 'all';
// The files' environment, and so every server and command they start: this runner's, less
// NODE_EXTRA_CA_CERTS. Node reads and parses the certificates that names as every process starts,
// before any code runs; a host that points it at the system's bundle pays for that in every Node
// process, a good part of a test server's start. No test needs it: what the files start talks to each other over
// 127.0.0.1, and nothing reaches a host outside.
const { NODE_EXTRA_CA_CERTS: _hostCas, ...kHostEnv } = process.env;
// Console passwords hashed at scrypt's N = 2^10 instead of 2^15 (src/test-switches.ts), in the files and
// in every server and command they start: 1 MiB a hash instead of 32 MiB, and as much faster. The
// suite's sign-ins, demo starts and password commands made scrypt the largest single item of its CPU
// (under `perf record -a`). A hash names its cost, so
// nothing a test checks depends on it; test/model/passwords.test.ts checks the real cost.
const kFileEnv = { FLAGWIRE_TEST_PASSWORD_COST: '10', ...kHostEnv };
const kTimes = process.env.FLAGWIRE_TEST_TIMES === '1';
// The host's speed through the run (scripts/host-speed.mjs), said before the run's last lines: the same
// tree's CPU and wall time move with it from run to run, so every run's log, CI's included, carries what
// its figures are to be read beside. A probe's own CPU is small beside a run's, every 4 s (said on the
// line; with the times table, inside the runner's own row).
const kHostSpeedEveryMs = 4000;
const hostSpeed = sampleHostSpeed(kHostSpeedEveryMs);
const timesDir = kTimes ? mkdtempSync(join(tmpdir(), 'flagwire-test-times-')) : null;
// The interpreter itself, found once: a version manager's `python3` on the PATH (pyenv's shim, a bash
// script that runs several more processes before it execs the interpreter) cost about 0.4 CPU s and
// 0.25 s of wall before each file, and the file's row counted that CPU: those processes are children of
// the process that becomes the interpreter, whose children's CPU the row is.
const kPython = kTimes
  ? execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim() || 'python3'
  : null;

const root = process.cwd();
// A failure's location in the test's TypeScript: each file runs with test/helpers/lazy-source-maps.ts,
// which reads a module's source map when a stack names it. `--enable-source-maps` read every module's
// map as it loaded (about 250 modules in most files): 0.1-0.2 CPU s a file for maps only a failure reads.
const kLazySourceMaps = pathToFileURL(join(root, 'dist/test/helpers/lazy-source-maps.js')).href;
// Folders whose files start servers, nodes, PostgreSQL, Chromium, a real Unleash or stock SDKs, many of
// them a minute or more each: started first, so that the quick files fill in at the end instead of one
// slow file running alone. Some wait more than they work: unleash/client-outage waits out the stock SDK's
// backoff (36 s of wall for 3 CPU s), sync/sync-service its streams (22 s for 2.5); run last, as their
// folders' names placed them, each left a core idle for most of the run's last half minute.
const kSlowFolders = ['reliability', 'multinode', 'web-console', 'server', 'release-plans', 'unleash', 'sync'];

/**
 * What the runner starts for a test file of dist/test: its copy in dist/test-run, which takes Flagwire's
 * modules from one cached script (scripts/bundle-tests.mjs), when `npm run build` made that copy after
 * the file and the script after every module of dist/src; else the file itself (a tsc run alone leaves
 * the copies behind).
 */
const kTestRun = join(root, 'dist/test-run');
const mtime = (path) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Number.NaN;
  }
};
const kSrcBuilt = (() => {
  let newest = 0;
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.js')) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  visit(join(root, 'dist/src'));
  return newest;
})();
const kCopiesFresh = mtime(join(kTestRun, 'src-modules.script.js')) >= kSrcBuilt;
function runnable(file) {
  const copy = join(kTestRun, relative(join(root, 'dist/test'), file));
  return kCopiesFresh && mtime(copy) >= mtime(file) ? copy : file;
}

function testFiles(paths) {
  const found = [];
  const visit = (path) => {
    if (statSync(path).isDirectory()) {
      for (const entry of readdirSync(path).sort()) visit(join(path, entry));
    } else if (path.endsWith('.test.js')) {
      found.push(path);
    }
  };
  for (const path of paths.length > 0 ? paths : ['dist/test']) visit(path);
  const rank = (file) => {
    const i = kSlowFolders.indexOf(relative('dist/test', file).split('/')[0]);
    return i === -1 ? kSlowFolders.length : i;
  };
  return found.sort((a, b) => rank(a) - rank(b));
}

/** Counts every test point of the file's TAP, nested subtests' included. */
function countPoints(parser, totals) {
  parser.on('assert', (result) => {
    if (result.todo || result.skip) totals.skipped++;
    else if (result.ok) totals.passed++;
    else totals.failed++;
  });
  parser.on('child', (child) => countPoints(child, totals));
}

/** `user sys wall` as scripts/cpu-times.py wrote them; null when it could not (killed). */
function readTimes(path) {
  try {
    const [user, sys, wall] = readFileSync(path, 'utf8').trim().split(' ').map(Number);
    return { user, sys, wall };
  } catch {
    return null;
  }
}

/**
 * A service files share: started on the first call of `get`, ended by `end` if it was started. `start`
 * answers its environment, how to end it and the process id at the root of its processes.
 */
function sharedService(name, start) {
  let started = null;
  return {
    name,
    /** The environment that points a file at it; empty when it could not start (the file starts its own). */
    get() {
      started ??= start().catch((err) => {
        console.log(`# shared service not started: ${err.stack ?? err}`);
        return { env: {}, end: async () => {}, pid: () => 0 };
      });
      return started.then((s) => s.env);
    },
    /**
     * Ends it; with FLAGWIRE_TEST_TIMES, first answers the CPU seconds its processes used over the run
     * (null if it never started): the runner's children, not counted in any file's row. Read just
     * before the end, its own shutdown (a checkpoint, a browser's close) is left out.
     */
    async end() {
      if (started === null) return null;
      const service = await started;
      const pid = service.pid();
      const used = kTimes && pid !== 0 ? (await helper('process-tree.js')).treeCpuSeconds(pid) : null;
      await service.end();
      return used;
    },
  };
}

const helper = (name) => import(pathToFileURL(join(root, 'dist/test/helpers', name)).href);

const kShared = [
  {
    // Called by a file that uses the shared cluster: its code names it.
    needle: /\bsharedPostgres\(/,
    service: sharedService('PostgreSQL cluster', async () => {
      const { startPostgres, kSharedClusterEnv } = await helper('postgres.js');
      const cluster = await startPostgres();
      return {
        env: { [kSharedClusterEnv]: `${cluster.socketDir} ${cluster.port}` },
        end: () => cluster.destroy(),
        pid: () => cluster.pid(),
      };
    }),
  },
  {
    needle: /\b(launchChromium|demoConsole)\(/,
    service: sharedService('Chromium', async () => {
      const { ensureChromium, kChromiumLaunch, kSharedChromiumEnv } = await helper('web-console.js');
      const { chromium } = (await helper('playwright.js')).playwright();
      ensureChromium();
      const server = await chromium.launchServer(kChromiumLaunch);
      return { env: { [kSharedChromiumEnv]: server.wsEndpoint() }, end: () => server.close(), pid: () => server.process().pid ?? 0 };
    }),
  },
];

/** The environment of the shared services `file` uses, each started if it is the first to. */
async function sharedEnv(file) {
  const text = readFileSync(file, 'utf8');
  const envs = await Promise.all(kShared.filter((s) => s.needle.test(text)).map((s) => s.service.get()));
  return Object.assign({}, ...envs);
}

function runFile(file, index, shared) {
  return new Promise((resolve) => {
    const started = Date.now();
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const parser = new Parser();
    countPoints(parser, counts);
    // When the file last printed a test line, the plan and summary comments that tap prints only as the
    // process ends left out: a process that runs on long after it, past its root teardowns, holds a job
    // slot for nothing (a timer or a handle left open).
    let lastPoint = null;
    let output = '';
    const command = [process.execPath, '--import', kLazySourceMaps, runnable(file)];
    const timesFile = timesDir === null ? null : join(timesDir, String(index));
    if (timesFile !== null) command.unshift(kPython, 'scripts/cpu-times.py', timesFile);
    const child = spawn(command[0], command.slice(1), {
      cwd: root,
      // FLAGWIRE_SYNC_PORT: every server a test starts leaves the sync service off unless the test asks
      // for it (test/helpers/server.ts): servers start in parallel, and its default port is one port.
      env: { FLAGWIRE_SYNC_PORT: '0', ...kFileEnv, ...shared, TAP_TIMEOUT: String(kFileTimeoutS) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk) => {
      if (
        String(chunk)
          .split('\n')
          .some((line) => !/^(\d+\.\.\d+.*|# .*|\s*)$/.test(line))
      )
        lastPoint = Date.now();
      output += chunk;
      parser.write(chunk);
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      },
      (kFileTimeoutS + kKillGraceS) * 1000,
    );
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      parser.end();
      const ok = code === 0 && parser.ok && !timedOut;
      const measured = timesFile === null ? null : readTimes(timesFile);
      const times = measured && { ...measured, after: lastPoint === null ? 0 : (Date.now() - lastPoint) / 1000 };
      resolve({ file, ok, code, signal, timedOut, counts, output, times, seconds: (Date.now() - started) / 1000 });
    });
  });
}

const files = testFiles(process.argv.slice(2));
// Said once at the start: a `tsc` run alone leaves every copy older than dist/src, and the files then run
// from dist/test, loading Flagwire's modules one by one (86 files: 77.7 s of wall against 59.5 from the
// copies), which a run timed for a comparison must not do unknowingly.
const uncopied = files.filter((file) => runnable(file) === file).length;
if (uncopied > 0)
  console.log(`# ${uncopied} of ${files.length} files run from dist/test, their copies being older: npm run build makes them`);
const totals = { passed: 0, failed: 0, skipped: 0 };
const failedFiles = [];
const timed = [];
const started = Date.now();
let next = 0;
let done = 0;

/** Runs the next file and reports it. */
async function runNext() {
  const index = next++;
  const r = await runFile(files[index], index, await sharedEnv(files[index]));
  done++;
  const name = relative(root, r.file);
  if (r.times !== null) timed.push({ name, ...r.times });
  totals.passed += r.counts.passed;
  totals.failed += r.counts.failed;
  totals.skipped += r.counts.skipped;
  const cpu = r.times === null ? '' : ` cpu=${(r.times.user + r.times.sys).toFixed(1)}s`;
  // The file's passing points, so that two runs' logs show which file's count moved.
  const time = `# time=${r.seconds.toFixed(1)}s${cpu} points=${r.counts.passed}`;
  if (r.ok) {
    console.log(`ok ${done} - ${name} ${time}`);
    if (kAllOutput) console.log(r.output.replace(/^/gm, '    '));
    return;
  }
  // A file can fail without a failing test point (a crash, a timeout): it counts as one failure.
  if (r.counts.failed === 0) totals.failed++;
  failedFiles.push(name);
  const why = r.timedOut ? `ended after ${kFileTimeoutS + kKillGraceS} s` : `exit ${r.code ?? r.signal}`;
  console.log(`not ok ${done} - ${name} (${why}) ${time}`);
  console.log(r.output.replace(/^/gm, '    '));
}

async function worker() {
  while (next < files.length) await runNext();
}

/** Every core's idle and total milliseconds since boot. */
function cpuTimes() {
  let idle = 0;
  let total = 0;
  for (const { times } of cpus()) {
    idle += times.idle;
    total += times.user + times.nice + times.sys + times.idle + times.irq;
  }
  return { idle, total };
}

/** The extra files running (kExtraJobs), each started in a quarter second the machine sat idle. */
const extras = new Set();
let lastTimes = cpuTimes();
const idleWatch =
  kExtraJobs === 0
    ? undefined
    : setInterval(() => {
        const now = cpuTimes();
        const idle = (now.idle - lastTimes.idle) / Math.max(1, now.total - lastTimes.total);
        lastTimes = now;
        if (idle <= kIdleShare || extras.size >= kExtraJobs || next >= files.length) return;
        const run = runNext().finally(() => extras.delete(run));
        extras.add(run);
      }, kIdleWatchMs);

// Interrupted, the shared services end too (a cluster left running holds its port and its memory).
const endShared = () => Promise.all(kShared.map((s) => s.service.end()));
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    void endShared().finally(() => process.exit(130));
  });
}
await Promise.all(Array.from({ length: Math.min(kJobs, files.length) }, worker));
clearInterval(idleWatch);
await Promise.all(extras);
const sharedCpu = await endShared();
if (timesDir !== null) {
  rmSync(timesDir, { recursive: true, force: true });
  timed.sort((a, b) => b.user + b.sys - (a.user + a.sys));
  const sum = (rows, f) => rows.reduce((s, x) => s + f(x), 0);
  const row = (cols, digits, name) => console.log(`# ${cols.map((v) => v.toFixed(digits).padStart(7)).join(' ')}  ${name}`);
  // after_s: how long the file's process ran on after its last test line.
  console.log('#   cpu_s  user_s   sys_s  wall_s after_s  file');
  for (const x of timed) row([x.user + x.sys, x.user, x.sys, x.wall, x.after], 2, x.name);
  const totals = (rows) => [sum(rows, (x) => x.user + x.sys), sum(rows, (x) => x.user), sum(rows, (x) => x.sys)];
  row(totals(timed), 1, `total of ${timed.length} files`);
  // The rest of the run's cost, none of it in a file's row: the shared services (the runner's children,
  // which every file using them makes work: the shared Chromium renders every browser test's pages) and
  // the runner's own (parsing every file's TAP).
  const others = [];
  kShared.forEach((s, i) => {
    if (sharedCpu[i] !== null) others.push({ name: `shared ${s.service.name}`, ...sharedCpu[i] });
  });
  const own = process.resourceUsage();
  others.push({ name: "runner's own", user: own.userCPUTime / 1e6, sys: own.systemCPUTime / 1e6 });
  for (const x of others) row([x.user + x.sys, x.user, x.sys], 1, x.name);
  row(totals([...timed, ...others]), 1, 'total of the run');
}
const { samples, spentMs } = hostSpeed.stop();
console.log(
  `# host speed through the run (scripts/host-speed.mjs): ${describeSpeed(samples)}; the probes, ${(spentMs / 1000).toFixed(1)} CPU s`,
);
console.log(`1..${files.length}`);
for (const name of failedFiles) console.log(`# failed: ${name}`);
console.log(`# files: ${files.length}, failed files: ${failedFiles.length}, time=${((Date.now() - started) / 1000).toFixed(1)}s`);
console.log(
  `# { total: ${totals.passed + totals.failed + totals.skipped}, pass: ${totals.passed}, fail: ${totals.failed}, skip: ${totals.skipped} }`,
);
process.exitCode = failedFiles.length > 0 ? 1 : 0;

// What a node's start costs (issue 57, item 2: at most 0.5 s of CPU from spawn to serving, every thread
// counted, for an embedded node and a relay): an embedded node started on a data dir that holds the demo,
// and a relay started on its copy of that node with its upstream down, `runs` times each, each timed from
// the spawn to the first 200 of /health, with the CPU of every thread of the process at that moment
// (/proc/PID/stat: user + system), and the main thread's apart; beside them, the CPU of the child
// processes it waited for by then (the store's probe, src/store/verify.ts: a process of its own, so not a
// thread of the node's, but paid at every start it runs). Each start is ended as `--stop` says before the
// next: `term` (SIGTERM, a clean stop, as an orchestrator reschedules a node) or `kill` (kill -9, as after
// a crash: the next start reads its data file through). Beside them, a test's server (test/helpers/
// server.ts) on a fresh empty data dir each time, as the suite's files start theirs, ended by SIGTERM.
// With `--baseline DIR` (another build's checkout, built), that build's node, relay and test server
// start in turn with this one's, on copies of the same data. Every build is measured with its bundles'
// V8 code caches (src/cli/bundle-script.ts), as a node restarted after a run of any length starts: the
// first start of each, not counted, runs until they are written.
// Run: npm run build && node dist/bench/node-start.bench.js [--runs N] [--stop term|kill] [--baseline DIR]
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { kStoreLayout } from '../src/capabilities.js';
import { LmdbStore } from '../src/store/lmdb-store.js';
import { seedDemo } from '../src/writer/thread/demo-seed.js';
import { cli } from '../test/helpers/cli.js';
import { call } from '../test/helpers/http.js';
import { kCli, startTestServer } from '../test/helpers/server.js';
import { kCacheDelayMs } from '../src/cli/bundle-script.js';
import { hostSpeed, machineInfo } from './environment.js';
import { builtBin } from './locations.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '10' }, stop: { type: 'string', default: 'term' }, baseline: { type: 'string' } },
});
const kRuns = Number(values.runs);
if (values.stop !== 'term' && values.stop !== 'kill') throw new Error('--stop is term or kill');
const kStopSignal: NodeJS.Signals = values.stop === 'term' ? 'SIGTERM' : 'SIGKILL';
const kTick = 10; // ms per clock tick (USER_HZ 100)

/** user + system CPU of `path` (a /proc stat file), in ms; with `children`, of the child processes it waited for. */
function cpuOf(path: string, children = false): number {
  const fields = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
  const at = children ? 13 : 11;
  return (Number(fields[at]) + Number(fields[at + 1])) * kTick;
}

/** The port a starting node prints, from its stdout; what it said on stderr if it exits first. */
function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const port = /127\.0\.0\.1:(\d+)/.exec(out)?.[1];
      if (port !== undefined) resolve(Number(port));
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.once('close', (code) => reject(new Error(`the node exited (${code}) before listening: ${out}${err}`)));
  });
}

/**
 * One start of `cli serve` on `dataDir` (a relay's with `upstream`'s settings): wall ms to /health 200, the
 * process's CPU ms then, its main thread's, its children's; then ended by `--stop`'s signal.
 */
async function timedStart(
  cliPath: string,
  dataDir: string,
  upstream: NodeJS.ProcessEnv,
  holdMs = 0,
): Promise<{ wall: number; cpu: number; main: number; children: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [cliPath, 'serve', '--port', '0', '--data', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FLAGWIRE_SYNC_PORT: '0', FLAGWIRE_LOG_LEVEL: 'warn', ...upstream },
  });
  try {
    const port = await listeningPort(child);
    for (;;) {
      const status = await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const wall = performance.now() - t0;
    return {
      wall,
      cpu: cpuOf(`/proc/${child.pid}/stat`),
      main: cpuOf(`/proc/${child.pid}/task/${child.pid}/stat`),
      children: cpuOf(`/proc/${child.pid}/stat`, true),
    };
  } finally {
    await new Promise((resolve) => setTimeout(resolve, holdMs));
    // A node that did not start has exited already: waiting for its exit would wait for ever (the
    // bench then ended with status 13 and no word of why).
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(kStopSignal);
      await exited;
    }
  }
}

/**
 * One start of a test's server (test/helpers/server.ts: a fresh empty data dir, one evaluation worker,
 * as about 140 test files start theirs), to its first /health 200, with the same figures.
 */
async function timedTestServerStart(cliPath: string): Promise<{ wall: number; cpu: number; main: number; children: number }> {
  const t0 = performance.now();
  const server = await startTestServer({ cli: cliPath });
  try {
    while ((await call(server.baseUrl, 'GET', '/health')).status !== 200) await new Promise((resolve) => setTimeout(resolve, 5));
    const pid = server.proc.pid!;
    return {
      wall: performance.now() - t0,
      cpu: cpuOf(`/proc/${pid}/stat`),
      main: cpuOf(`/proc/${pid}/task/${pid}/stat`),
      children: cpuOf(`/proc/${pid}/stat`, true),
    };
  } finally {
    await server.stop();
  }
}

const seeded = mkdtempSync(join(tmpdir(), 'flagwire-start-bench-'));
const store = LmdbStore.open(seeded, { layout: kStoreLayout });
store.transact((w) => seedDemo(w, {}, Date.now()));
await store.close();

// A relay's copy of that node: made by this build's relay from a node on a copy of the data, both then
// stopped, so the relay starts with its upstream down (its settings name a port nothing listens on).
const upstreamDir = mkdtempSync(join(tmpdir(), 'flagwire-start-bench-'));
cpSync(seeded, upstreamDir, { recursive: true });
const upstreamNode = await startTestServer({ dataDir: upstreamDir, syncPort: 'free' });
const key = await cli(upstreamDir, ['relay', 'key', 'create', '--name', 'bench']);
if (key.code !== 0) throw new Error(key.stderr);
const relayEnv = { FLAGWIRE_UPSTREAM_URL: upstreamNode.baseUrl, FLAGWIRE_UPSTREAM_TOKEN: key.json.secret as string };
const relayDir = mkdtempSync(join(tmpdir(), 'flagwire-start-bench-'));
const relay = await startTestServer({ dataDir: relayDir, env: relayEnv });
while ((await call(relay.baseUrl, 'GET', '/ready')).status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
await relay.stop();
await upstreamNode.stop();

const starts: { name: string; cli: string; dir: string; env: NodeJS.ProcessEnv; testServer?: true }[] = [
  { name: 'node, this build', cli: kCli, dir: seeded, env: {} },
  { name: 'relay, this build', cli: kCli, dir: relayDir, env: relayEnv },
  { name: 'test server, this build', cli: kCli, dir: '', env: {}, testServer: true },
];
if (values.baseline !== undefined) {
  const baseCli = builtBin(values.baseline);
  const copyOf = (dir: string) => {
    const copy = mkdtempSync(join(tmpdir(), 'flagwire-start-bench-'));
    cpSync(dir, copy, { recursive: true });
    return copy;
  };
  starts.push(
    { name: `node, baseline (${values.baseline})`, cli: baseCli, dir: copyOf(seeded), env: {} },
    { name: `relay, baseline (${values.baseline})`, cli: baseCli, dir: copyOf(relayDir), env: relayEnv },
    { name: `test server, baseline (${values.baseline})`, cli: baseCli, dir: '', env: {}, testServer: true },
  );
}
/** A start as its kind is timed: a test server's on a fresh data dir of its own. */
function timed(start: (typeof starts)[number]) {
  return start.testServer ? timedTestServerStart(start.cli) : timedStart(start.cli, start.dir, start.env);
}

const samples = new Map<string, { wall: number[]; cpu: number[]; main: number[]; children: number[] }>();
const loads: number[] = [];
// A first start of each, not counted: it settles the data dir (a full open writes its meta once), and a
// node's or relay's runs until its build's code caches are written (a start ends long before: without
// this, a build that nothing had run for kCacheDelayMs would be measured compiling its bundles).
for (const start of starts) await (start.testServer ? timed(start) : timedStart(start.cli, start.dir, start.env, kCacheDelayMs + 2000));
const speedBefore = hostSpeed();
for (let n = 0; n < kRuns; n++) {
  // Alternated run by run, so a busy moment of the machine falls on every build alike.
  for (const start of n % 2 === 0 ? starts : [...starts].reverse()) {
    const run = await timed(start);
    const s = samples.get(start.name) ?? { wall: [], cpu: [], main: [], children: [] };
    s.wall.push(run.wall);
    s.cpu.push(run.cpu);
    s.main.push(run.main);
    s.children.push(run.children);
    samples.set(start.name, s);
  }
  loads.push(loadavg()[0]!);
}

const spread = (v: number[]) => {
  const sorted = [...v].sort((a, b) => a - b);
  return `${sorted[0]!.toFixed(0)} / ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} / ${sorted.at(-1)!.toFixed(0)}`;
};
console.log(
  `# ${JSON.stringify(machineInfo())}; ${kRuns} starts each, each ended by ${kStopSignal}; load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
);
console.log(`# host speed before the starts: ${speedBefore}; after: ${hostSpeed()}`);
console.log('| start | wall ms to /health (min / median / max) | CPU ms, every thread | CPU ms, main thread | CPU ms, child processes |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, s] of samples)
  console.log(`| ${name} | ${spread(s.wall)} | ${spread(s.cpu)} | ${spread(s.main)} | ${spread(s.children)} |`);

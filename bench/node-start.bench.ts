// What a node's start costs (issue 57, item 2: at most 0.5 s of CPU from spawn to serving, every thread
// counted): an embedded node started on a data dir that holds the demo, `runs` times, each timed from the
// spawn to the first 200 of /health, with the CPU of every thread of the process at that moment
// (/proc/PID/stat: user + system), and the main thread's apart; beside them, the CPU of the child
// processes it waited for by then (the store's probe, src/store/verify.ts: a process of its own, so not a
// thread of the node's, but paid at every start). With `--baseline DIR` (another build's
// checkout, built), that build's node starts in turn with this one's, on a copy of the same data.
// Run: npm run build && node dist/bench/node-start.bench.js [--runs N] [--baseline DIR]
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { kStoreLayout } from '../src/capabilities.js';
import { LmdbStore } from '../src/store/lmdb-store.js';
import { seedDemo } from '../src/writer-thread/demo-seed.js';
import { machineInfo } from './environment.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '10' }, baseline: { type: 'string' } } });
const kRuns = Number(values.runs);
const kTick = 10; // ms per clock tick (USER_HZ 100)

/** user + system CPU of `path` (a /proc stat file), in ms; with `children`, of the child processes it waited for. */
function cpuOf(path: string, children = false): number {
  const fields = readFileSync(path, 'utf8').split(') ')[1]!.split(' ');
  const at = children ? 13 : 11;
  return (Number(fields[at]) + Number(fields[at + 1])) * kTick;
}

/** The port a starting node prints, from its stdout. */
function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const port = /127\.0\.0\.1:(\d+)/.exec(out)?.[1];
      if (port !== undefined) resolve(Number(port));
    });
    child.once('exit', (code) => reject(new Error(`the node exited (${code}) before listening: ${out}`)));
  });
}

/** One start of `cli serve` on `dataDir`: wall ms to /health 200, the process's CPU ms then, its main thread's, its children's. */
async function timedStart(cli: string, dataDir: string): Promise<{ wall: number; cpu: number; main: number; children: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--data', dataDir], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, FLAGWIRE_SYNC_PORT: '0', FLAGWIRE_LOG_LEVEL: 'warn' },
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
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

const seeded = mkdtempSync(join(tmpdir(), 'flagwire-start-bench-'));
const store = LmdbStore.open(seeded, { layout: kStoreLayout });
store.transact((w) => seedDemo(w, {}, Date.now()));
store.close();
const builds = [{ name: 'this build', cli: new URL('../src/cli/cli.js', import.meta.url).pathname, dir: seeded }];
if (values.baseline !== undefined) {
  const copy = mkdtempSync(join(tmpdir(), 'flagwire-start-bench-'));
  cpSync(seeded, copy, { recursive: true });
  builds.push({ name: `baseline (${values.baseline})`, cli: join(values.baseline, 'dist/src/cli/cli.js'), dir: copy });
}

const samples = new Map<string, { wall: number[]; cpu: number[]; main: number[]; children: number[] }>();
const loads: number[] = [];
// A first start of each, not counted: it settles the data dir (a full open writes its meta once).
for (const build of builds) await timedStart(build.cli, build.dir);
for (let n = 0; n < kRuns; n++) {
  // Alternated run by run, so a busy moment of the machine falls on both builds alike.
  for (const build of n % 2 === 0 ? builds : [...builds].reverse()) {
    const run = await timedStart(build.cli, build.dir);
    const s = samples.get(build.name) ?? { wall: [], cpu: [], main: [], children: [] };
    s.wall.push(run.wall);
    s.cpu.push(run.cpu);
    s.main.push(run.main);
    s.children.push(run.children);
    samples.set(build.name, s);
  }
  loads.push(loadavg()[0]!);
}

const spread = (v: number[]) => {
  const sorted = [...v].sort((a, b) => a - b);
  return `${sorted[0]!.toFixed(0)} / ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} / ${sorted.at(-1)!.toFixed(0)}`;
};
console.log(
  `# ${JSON.stringify(machineInfo())}; ${kRuns} starts each; load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
);
console.log('| build | wall ms to /health (min / median / max) | CPU ms, every thread | CPU ms, main thread | CPU ms, child processes |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, s] of samples)
  console.log(`| ${name} | ${spread(s.wall)} | ${spread(s.cpu)} | ${spread(s.main)} | ${spread(s.children)} |`);

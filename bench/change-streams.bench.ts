// Change streams held on one node (issue 45, item 3): N SSE change streams (GET /v1/stream/project/{id},
// one connection each), N gRPC SyncFlags streams (flagd sync, channels of 100 streams), or both at once,
// each on a fresh node; the node's resident memory idle, with the streams, and per stream; then a flag
// changed through the Management API 20 times at random moments, and the time from each PATCH's 2xx to
// the last stream told (every stream must see the commit's revision or a later one), p50/p99 over the
// changes, with every stream's own p50/p99 beside it.
// The clients run in processes of their own (bench/stream-clients.ts, P per kind) so that they are not
// the node's CPU, and their CPU is counted: on 2 cores they share the machine with the node, and the
// table says which of them used the CPU a fan-out took.
// Run: npm run build && node dist/bench/change-streams.bench.js [changes, 20] [N, 10000] [phases, sse,grpc,both] [P, 4]
// With SERVER_CPUS and CLIENT_CPUS (taskset lists, e.g. 0 and 1) the node's threads and the clients' are
// pinned apart: the node then has a core of its own, and its fan-out time is set against its CPU alone.
import { execFileSync, fork, spawnSync, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { buildEvalWorld } from '../test/evaluation/engine/eval-world.js';
import { call } from '../test/helpers/http.js';
import { startTestServer, type TestServer } from '../test/helpers/server.js';
import { principalOf } from '../src/actor/audit-actor.js';
import { machineInfo } from './environment.js';
import { cpuBetween, cpuSample, rssSplitKb, type CpuSample, type RssSplit } from './processes.js';
import { percentile } from './stats.js';
import type { FromClients, Share, ToClients } from './stream-clients.js';

const kChanges = Number(process.argv[2] ?? 20);
const kStreams = Number(process.argv[3] ?? 10_000);
const kPhases = (process.argv[4] ?? 'sse,grpc,both').split(',') as Phase[];
const kProcesses = Number(process.argv[5] ?? 4);
const kServerCpus = process.env.SERVER_CPUS ?? null;
const kClientCpus = process.env.CLIENT_CPUS ?? null;
const kPerChannel = 100;
// Bounds: a phase that cannot open its streams, or a change not told to every stream, fails the run.
const kOpenWithinMs = 180_000;
const kToldWithinMs = 60_000;
const kClientsFile = fileURLToPath(new URL('./stream-clients.js', import.meta.url));

type Phase = 'sse' | 'grpc' | 'both';
const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load = (): string => loadavg()[0]!.toFixed(1);
const mib = (kb: number): string => (kb / 1024).toFixed(0);

/**
 * Each SSE stream is a socket of the node's (and of a client's), a gRPC channel of 100 streams one: the
 * node needs N + N/100 file descriptors beyond its own. Raised here, before anything starts, to the hard
 * limit: a child inherits it, and Node cannot raise its own.
 */
function ensureFileLimit(): void {
  const needed = kStreams + Math.ceil(kStreams / kPerChannel) + 1024;
  const soft = Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim());
  if (soft >= needed || process.env.FLAGWIRE_BENCH_FD_RAISED === '1') return;
  const hard = execFileSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim();
  if (hard !== 'unlimited' && Number(hard) < needed) console.error(`ulimit -Hn is ${hard}, below the ${needed} this run needs`);
  const raised = spawnSync('sh', ['-c', `ulimit -n ${hard} && exec "$0" "$@"`, process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, FLAGWIRE_BENCH_FD_RAISED: '1' },
  });
  process.exit(raised.status ?? 1);
}

/** Pins every thread of `pid` (and those it starts later) to `cpus`; null: left alone. */
function pin(pid: number, cpus: string | null): void {
  if (cpus !== null) execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/** A client process of stream-clients.ts, with its replies as a queue. */
class Clients {
  readonly child: ChildProcess;
  private readonly replies: FromClients[] = [];
  private wake: (() => void) | null = null;
  constructor() {
    this.child = fork(kClientsFile, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (message: FromClients) => {
      this.replies.push(message);
      this.wake?.();
    });
  }
  tell(message: ToClients): void {
    this.child.send(message);
  }
  async reply(withinMs: number): Promise<FromClients> {
    const deadline = Date.now() + withinMs;
    while (this.replies.length === 0) {
      if (Date.now() > deadline) throw new Error(`client ${this.child.pid} did not answer within ${withinMs} ms`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 100);
      });
    }
    const message = this.replies.shift()!;
    if ('failed' in message) throw new Error(`client ${this.child.pid}: ${message.failed}`);
    return message;
  }
  close(): void {
    if (this.child.connected) this.tell({ close: true });
  }
}

interface PhaseResult {
  phase: Phase;
  streams: number;
  idle: RssSplit;
  open: RssSplit;
  after: RssSplit;
  lastMs: number[];
  lastFromSentMs: number[];
  allMs: number[];
  serverCpuMs: number;
  /** The node's busiest thread over the changes, and its CPU per change (ms). */
  busiest: { name: string; msPerChange: number };
  clientCpuMs: number;
  wallMs: number;
  loads: string[];
}

function shares(kind: 'sse' | 'grpc', server: TestServer, projectId: string, selector: string): Share[] {
  return Array.from({ length: kProcesses }, (_, p) => {
    const count = Math.floor(kStreams / kProcesses) + (p < kStreams % kProcesses ? 1 : 0);
    return kind === 'sse'
      ? // Each process from an address of its own in 127/8: one source address reaches one port from
        // about 28,000 ephemeral ports, fewer than 100,000 streams need.
        { kind, count, url: `${server.baseUrl}/v1/stream/project/${projectId}`, localAddress: `127.0.0.${2 + p}` }
      : { kind, count, syncPort: server.syncPort, selector, perChannel: kPerChannel };
  });
}

async function runPhase(
  phase: Phase,
  world: ReturnType<typeof buildEvalWorld>,
  selector: string,
  log: (line: string) => void,
): Promise<PhaseResult> {
  const { ids } = world;
  const server = await startTestServer({
    dataDir: world.dataDir,
    syncPort: 'free',
    env: {
      FLAGWIRE_RATE_LIMIT: '1000000000',
      FLAGWIRE_SYNC_MAX_STREAMS: String(kStreams + 100),
      FLAGWIRE_STREAM_MAX_CONNECTIONS: String(kStreams + 100),
    },
  });
  const pid = server.proc.pid!;
  pin(pid, kServerCpus);
  const clients: Clients[] = [];
  const loads: string[] = [];
  try {
    await sleep(2000);
    const idle = rssSplitKb(pid);
    loads.push(load());
    const kinds = phase === 'both' ? (['sse', 'grpc'] as const) : [phase];
    const openedAt = Date.now();
    for (const kind of kinds) {
      for (const share of shares(kind, server, ids.single, selector)) {
        const c = new Clients();
        pin(c.child.pid!, kClientCpus);
        clients.push(c);
        c.tell({ open: share });
      }
    }
    for (const c of clients) await c.reply(kOpenWithinMs);
    log(`${phase}: ${kStreams * kinds.length} streams open in ${((Date.now() - openedAt) / 1000).toFixed(1)} s, load ${load()}`);
    // Let the node's heap settle (the connections' setup garbage) before reading what the streams hold.
    await sleep(3000);
    const open = rssSplitKb(pid);
    loads.push(load());
    const lastMs: number[] = [];
    const lastFromSentMs: number[] = [];
    const allMs: number[] = [];
    const clientCpu = (): number => clients.reduce((sum, c) => sum + cpuSample(c.child.pid!).total, 0);
    const server0: CpuSample = cpuSample(pid);
    const clients0 = clientCpu();
    const wall0 = performance.now();
    for (let change = 0; change < kChanges; change++) {
      // A random moment: changes then fall anywhere in the poller's interval and the heartbeats'.
      await sleep(Math.random() * 500);
      const sent = now();
      const patched = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.half}`, {
        token: world.writeToken,
        body: { trafficPercentage: 10 + change },
      });
      const committed = now();
      if (patched.status !== 200) throw new Error(`patch: ${patched.status} ${patched.text}`);
      const revision = Number(patched.headers.get('flagwire-revision'));
      for (const c of clients) c.tell({ await: revision });
      let last = 0;
      for (const c of clients) {
        const reply = await c.reply(kToldWithinMs);
        if (!('told' in reply)) throw new Error(`unexpected reply ${JSON.stringify(reply)}`);
        for (const t of reply.told) {
          allMs.push(t - committed);
          if (t > last) last = t;
        }
      }
      lastMs.push(last - committed);
      lastFromSentMs.push(last - sent);
    }
    const wallMs = performance.now() - wall0;
    const server1 = cpuSample(pid);
    const cpu = cpuBetween(server0, server1, wallMs / 1000);
    const clientCpuMs = (clientCpu() - clients0) * 1000;
    const after = rssSplitKb(pid);
    loads.push(load());
    let busiest = { name: '—', msPerChange: 0 };
    for (const [name, end] of server1.threads) {
      const msPerChange = ((end - (server0.threads.get(name) ?? 0)) * 1000) / kChanges;
      if (msPerChange > busiest.msPerChange) busiest = { name, msPerChange };
    }
    return {
      phase,
      streams: kStreams * kinds.length,
      idle,
      open,
      after,
      lastMs,
      lastFromSentMs,
      allMs,
      serverCpuMs: (cpu.percent / 100) * wallMs,
      busiest,
      clientCpuMs,
      wallMs,
      loads,
    };
  } finally {
    for (const c of clients) c.close();
    await sleep(500);
    for (const c of clients) if (c.child.exitCode === null) c.child.kill('SIGKILL');
    await server.stop();
  }
}

async function main(): Promise<void> {
  ensureFileLimit();
  const world = buildEvalWorld();
  const { ids } = world;
  const read = world.run('tokenCreate', {
    projectId: ids.single,
    principal: principalOf(ids.owner),
    name: 'streams',
    permission: 'read',
  }).secret;
  await world.store.close();
  const selector = `flagSetId=${ids.single},token=${read}`;
  const results: PhaseResult[] = [];
  const log = (line: string) => console.error(line);
  for (const phase of kPhases) results.push(await runPhase(phase, world, selector, log));

  const m = machineInfo();
  const fd = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  console.log(`Command: \`${['node dist/bench/change-streams.bench.js', ...process.argv.slice(2)].join(' ')}\``);
  console.log(
    `${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; ${m.cores} cores, ${m.cpu}, ${m.memory}, node ${m.node}; ulimit -n ${fd}; ` +
      `clients in ${kProcesses} processes per kind; node on CPUs ${kServerCpus ?? 'any'}, clients on ${kClientCpus ?? 'any'}\n`,
  );
  console.log(
    '| streams | node RSS idle, MiB | with the streams | after the changes | per stream, KiB | PATCH 2xx to last told, p50 ms | p99 ms | ' +
      'every stream told, p50 ms | p99 ms | node CPU per change, ms (busiest thread) | clients CPU per change, ms | load (idle, open, end) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of results) {
    const last = [...r.lastMs].sort((a, b) => a - b);
    const all = r.allMs.sort((a, b) => a - b);
    console.log(
      `| ${r.phase === 'both' ? `${r.streams.toLocaleString('en-US')} (SSE + gRPC)` : `${r.streams.toLocaleString('en-US')} ${r.phase === 'sse' ? 'SSE' : 'gRPC'}`} | ` +
        `${mib(r.idle.rss)} | ${mib(r.open.rss)} | ${mib(r.after.rss)} | ${((Math.max(r.open.rss, r.after.rss) - r.idle.rss) / r.streams).toFixed(1)} | ` +
        `${percentile(last, 50).toFixed(0)} | ${percentile(last, 99).toFixed(0)} | ${percentile(all, 50).toFixed(0)} | ${percentile(all, 99).toFixed(0)} | ` +
        `${(r.serverCpuMs / kChanges).toFixed(0)} (${r.busiest.name} ${r.busiest.msPerChange.toFixed(0)}) | ${(r.clientCpuMs / kChanges).toFixed(0)} | ${r.loads.join(', ')} |`,
    );
  }
  console.log(
    `\nPer stream: (the larger of RSS with the streams and after the changes − idle) ÷ streams. p99 of ${kChanges} changes is their slowest. ` +
      'CPU per change: over the changes phase (random pauses included), divided by the changes.',
  );
  for (const r of results) {
    console.log(
      `${r.phase}: PATCH sent to last told p50 ${percentile(
        [...r.lastFromSentMs].sort((a, b) => a - b),
        50,
      ).toFixed(0)} ms; changes phase ${(r.wallMs / 1000).toFixed(1)} s`,
    );
  }
  process.exit(0);
}

await main();

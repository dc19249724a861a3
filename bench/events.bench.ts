// Events accepted by one node (issue 58: at least 50,000 a second on this 2-core machine, the load
// generator never the ceiling): an embedded node over a project whose flag runs an experiment, sent
// batches of 1,000 events (a fifth exposures of fresh subjects, the rest their outcomes) by `clients`
// concurrent keep-alive senders for `seconds`, the batches made before the clock starts. It prints the
// events counted per second, the node's CPU per 1,000 events and the load generator's CPU share, and
// OFREP evaluations' latency (one at a time, another project's flag) before the events (as long as the
// run, up to 20 s) and while they are sent. --flood keeps the node's default rate per project (50,000 a
// second), so senders flat out are refused past it: what a flood costs another project's evaluations.
// --postgres: the node is one of nodes sharing a private PostgreSQL cluster (started here), whose
// events are counted there, a PostgreSQL transaction per batch (docs/events.md: Where events are counted).
// --raw-retention-days N: the project keeps its raw events (docs/events.md: Raw events), each kept as it is counted.
// --limit N: the node's rate per project is N events a second (FLAGWIRE_EVENTS_PER_SECOND), a flood past
// it; at the least (1000) nearly every batch is refused, so the node's CPU per refused batch is a refusal's.
// --cli PATH: the node is that build's dist/src/cli/cli.js (another build's, beside this one's, run in turn).
// --server-cpus LIST: the node runs on those CPUs (taskset), the bench and its probe where it was started,
// so that on a machine of many cores the senders never take the node's cores (a flood's cost to another
// project is then the node's alone).
// --wrk THREADS: the senders are wrk (bench/wrk.ts: native, THREADS threads, --clients connections) sending
// one batch again and again, instead of this process's fetch senders, which one JavaScript thread caps:
// a flood as hard as the cores given to it can push. Counted events are read from its 2xx answers.
// Run: npm run build && node dist/bench/events.bench.js [--seconds 10] [--clients 4] [--rate EVENTS_PER_S] [--flood]
//   [--raw-retention-days N] [--profile DIR] [--postgres] [--limit N] [--cli PATH] [--server-cpus LIST] [--wrk THREADS]
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { kOperator } from '../src/actor/audit-actor.js';
import { kStoreLayout } from '../src/capabilities.js';
import { openForCli } from '../src/store/open-store.js';
import { type CommandInput, type CommandName, runCommand } from '../src/writer/thread/commands.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { machineInfo } from './environment.js';
import type { ProbeData, ProbeFigures } from './evaluation-probe.js';
import { rssKb } from './processes.js';
import { runWrk } from './wrk.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    clients: { type: 'string', default: '4' },
    profile: { type: 'string' },
    // Events a second to send at, paced (a batch each 1,000 / rate s across the senders); absent: as fast as answered.
    rate: { type: 'string' },
    flood: { type: 'boolean', default: false },
    postgres: { type: 'boolean', default: false },
    'raw-retention-days': { type: 'string' },
    cli: { type: 'string' },
    limit: { type: 'string' },
    'server-cpus': { type: 'string' },
    wrk: { type: 'string' },
  },
});
if (values.wrk !== undefined && values.rate !== undefined) throw new Error('--wrk sends as fast as answered: no --rate');
const kSeconds = Number(values.seconds);
const kClients = Number(values.clients);
const kBatch = 1000;
const kBatchEveryMs = values.rate === undefined ? null : (kBatch * 1000) / Number(values.rate);
const kTick = 10; // ms per clock tick (USER_HZ 100)

const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * kTick;
};

const dataDir = mkdtempSync(join(tmpdir(), 'flagwire-events-bench-'));
const pg = values.postgres ? await startPostgres() : null;
const databaseUrl = pg === null ? null : await pg.newDatabase();
const { writes } = await openForCli(dataDir, kStoreLayout, databaseUrl);
const run = async <N extends CommandName>(name: N, input: CommandInput<N>) => {
  const [r] = await writes.commit(() => [(w) => runCommand(w, name, input, Date.now())]);
  if (!r!.ok) throw r!.error;
  return r!.value;
};
const orgId = (await run('orgCreate', { principal: kOperator, name: 'Bench', plan: 'enterprise' })).id;
const projectId = (await run('projectCreate', { principal: kOperator, name: 'Shop', orgId, kind: 'single' })).id;
await run('flagCreate', {
  projectId,
  principal: kOperator,
  body: { name: 'new-checkout', enabled: true, trafficPercentage: 50, experiment: 'checkout' },
});
const days = values['raw-retention-days'];
if (days !== undefined) {
  const settings = { bytes: Buffer.from(JSON.stringify({ rawEventRetentionDays: Number(days) })), contentType: 'application/json' };
  await run('eventSettingsSet', { principal: kOperator, projectId, received: settings });
}
const received = { bytes: Buffer.from(JSON.stringify({ name: 'bench', uses: ['events'] })), contentType: 'application/json' };
const { secret } = await run('clientKeyCreate', { principal: kOperator, projectId, received });
// Another project of the organisation, whose evaluations are probed beside the events.
const otherId = (await run('projectCreate', { principal: kOperator, name: 'Search', orgId, kind: 'single' })).id;
await run('flagCreate', { projectId: otherId, principal: kOperator, body: { name: 'new-search', enabled: true, trafficPercentage: 50 } });
await writes.close();

/** Batch `n`: 200 fresh subjects exposed, then 4 outcomes each (purchase with a value, clicks). */
function batch(n: number): string {
  const events: object[] = [];
  const at = Date.now();
  for (let i = 0; i < kBatch / 5; i++) {
    const subject = `user-${n}-${i}`;
    events.push({ kind: 'exposure', key: 'new-checkout', targetingKey: subject, variant: i % 2 === 0 ? 'on' : 'off', timestamp: at });
    events.push({ kind: 'track', key: 'purchase', targetingKey: subject, value: 10 + (i % 7), timestamp: at });
    for (let k = 0; k < 3; k++) events.push({ kind: 'track', key: 'clicks', targetingKey: subject, timestamp: at });
  }
  return JSON.stringify({ events });
}

// --profile DIR: the node's threads' CPU profiles written there (dist/bench/profile-summary.js DIR reads them).
const profile = values.profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${values.profile}`];
const cli = values.cli ?? new URL('../src/cli/cli.js', import.meta.url).pathname;
const nodeArgs = [...profile, cli, 'serve', '--port', '0', '--data', dataDir];
const serverCpus = values['server-cpus'];
const [command, args] =
  serverCpus === undefined ? [process.execPath, nodeArgs] : ['taskset', ['-c', serverCpus, process.execPath, ...nodeArgs]];
const child: ChildProcess = spawn(command, args, {
  stdio: ['ignore', 'pipe', 'inherit'],
  // The project's event rate raised out of the way (what one node counts is measured, not the limit),
  // unless the run is a flood.
  env: {
    ...process.env,
    FLAGWIRE_SYNC_PORT: '0',
    FLAGWIRE_LOG_LEVEL: 'warn',
    ...(values.flood ? {} : { FLAGWIRE_EVENTS_PER_SECOND: values.limit ?? '10000000' }),
    ...(databaseUrl === null ? {} : { FLAGWIRE_DATABASE_URL: databaseUrl }),
  },
});
const port = await new Promise<number>((resolve, reject) => {
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const found = /127\.0\.0\.1:(\d+)/.exec(out)?.[1];
    if (found !== undefined) resolve(Number(found));
  });
  child.once('exit', (code) => reject(new Error(`the node exited (${code}): ${out}`)));
});
const url = `http://127.0.0.1:${port}/ofrep/v1/events`;
const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };

// Distinct batches for 10 s at 100,000 events a second, made before the clock starts; a longer run
// sends them again in turn (the same subjects return: their exposures are duplicates, their outcomes
// add to their totals), so the bench's own memory stays what 10 s take.
const bodies = Array.from({ length: Math.ceil((Math.min(kSeconds, 10) * 100_000) / kBatch) + kClients }, (_, n) => batch(n));
let next = 0;
let counted = 0;
let refused = 0;
const post = async (body: string) => {
  const r = await fetch(url, { method: 'POST', headers, body });
  const answer = (await r.json()) as { accepted?: number };
  if (r.status === 200) counted += answer.accepted ?? 0;
  else refused++;
};
// A node on PostgreSQL serves once its copy has caught up (the client key is in it).
while ((await fetch(`http://127.0.0.1:${port}/ready`)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
await post(batch(-1)); // warm: the tally file (or PostgreSQL's pool) opened, the routes compiled
counted = 0;

/**
 * Evaluation latency beside it: one OFREP evaluation at a time (another project's flag, as another
 * team's service would ask it) for `ms`, each timed, from a thread of its own (evaluation-probe.ts);
 * the 50th and 99th percentiles in ms.
 */
function probeEvaluations(ms: number): Promise<ProbeFigures> {
  const data: ProbeData = { port, projectId: otherId, ms };
  const worker = new Worker(new URL('./evaluation-probe.js', import.meta.url), { workerData: data });
  return new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
}

// Before the events: as long as the run, up to 20 s (a long run is for memory, not this baseline).
const quiet = await probeEvaluations(Math.min(kSeconds, 20) * 1000);
// The node's resident memory once a second while the events are sent: after the first tenth of the run
// (the tally file's pages and the heaps settle), how far it moves.
const rss: number[] = [];
const sampler = setInterval(() => rss.push(rssKb(child.pid!)), 1000);

// The generator's own event loop delay while it sends: the probe's answers wait there too, so a probe's
// latency is the node's only while this stays small.
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
const serverBefore = cpuMs(child.pid!);
const selfBefore = process.cpuUsage();
const t0 = performance.now();
const deadline = t0 + kSeconds * 1000;
/** wrk's senders: one batch, over and over, on `--clients` connections; what it counted and refused. */
async function wrkSenders(threads: number): Promise<void> {
  const request = { method: 'POST', path: '/ofrep/v1/events', headers, body: bodies[0]! };
  const { result } = runWrk({
    url: `http://127.0.0.1:${port}`,
    connections: kClients,
    durationSec: kSeconds,
    threads,
    cpus: null,
    sequence: { kind: 'fixed', request },
  });
  const r = await result;
  // Answers outside 2xx are refusals; a 2xx counted the batch's events (a repeated body is a new batch: no batchId).
  refused = r.non2xx;
  counted = (r.requests - r.non2xx) * kBatch;
}
const [, busy] = await Promise.all([
  values.wrk !== undefined
    ? wrkSenders(Number(values.wrk))
    : Promise.all(
        Array.from({ length: kClients }, async () => {
          while (performance.now() < deadline) {
            const n = next++;
            if (kBatchEveryMs !== null) {
              // Batch n is due at t0 + n * kBatchEveryMs: a sender that is early waits, one that is late sends at once.
              const due = t0 + n * kBatchEveryMs - performance.now();
              if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
              if (performance.now() >= deadline) break;
            }
            await post(bodies[n % bodies.length]!);
          }
        }),
      ),
  probeEvaluations(kSeconds * 1000),
]);
const seconds = (performance.now() - t0) / 1000;
loopDelay.disable();
clearInterval(sampler);
const settled = rss.slice(Math.floor(rss.length / 10));
const mb = (kb: number) => (kb / 1024).toFixed(0);
const serverMs = cpuMs(child.pid!) - serverBefore;
const self = process.cpuUsage(selfBefore);
const exited = new Promise((resolve) => child.once('exit', resolve));
child.kill('SIGTERM');
await exited;
rmSync(dataDir, { recursive: true, force: true });
await pg?.destroy();

console.log(
  `# ${JSON.stringify(machineInfo())}; load ${loadavg()[0]!.toFixed(1)}; ${kClients} clients, batches of ${kBatch}, ${seconds.toFixed(1)} s` +
    (values.rate === undefined ? ', as fast as answered' : `, paced at ${values.rate} events/s`) +
    (values.flood ? ', a flood past the default rate per project' : '') +
    (values.limit === undefined ? '' : `, a flood past ${values.limit} events a second per project`) +
    (pg === null ? ', embedded node' : ', node on PostgreSQL'),
);
console.log(
  `# node RSS once settled: first ${mb(settled[0]!)} MB, last ${mb(settled.at(-1)!)} MB, least ${mb(Math.min(...settled))} MB, most ${mb(Math.max(...settled))} MB`,
);
console.log(
  `# the generator's event loop delay while sending: p50 ${(loopDelay.percentile(50) / 1e6).toFixed(2)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(2)} ms`,
);
console.log(
  '| events counted / s | node CPU ms per 1,000 events | node CPU % | generator CPU % | refused batches | node CPU ms per refused batch | OFREP p50 / p99 ms, quiet | with events |',
);
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|');
const ms = (v: number) => v.toFixed(2);
// All the node's CPU over the refused batches, what it counted included (as the flood's figures before were read).
const perRefused = refused === 0 ? '-' : (serverMs / refused).toFixed(2);
console.log(
  `| ${Math.round(counted / seconds)} | ${((serverMs / counted) * 1000).toFixed(1)} | ${((serverMs / 1000 / seconds) * 100).toFixed(0)} | ` +
    `${(((self.user + self.system) / 1e6 / seconds) * 100).toFixed(0)} | ${refused} | ${perRefused} | ${ms(quiet.p50)} / ${ms(quiet.p99)} | ${ms(busy.p50)} / ${ms(busy.p99)} |`,
);

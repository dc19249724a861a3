// A change fanned out over flagd's sync service (issue 44, item 6): N SyncFlags streams open on one
// node (N = 1, 100, 1,000; stock in-process providers each hold one), a flag changed through the
// Management API (after a random pause, so changes fall anywhere in the poller's interval), and the time from the request that commits it to each stream receiving the new flag
// set (the set naming the commit's revision or a later one), p50 and p99 over every stream and change;
// with the node's resident memory per open stream. Streams are spread over channels of 100 (one HTTP/2
// connection each), as separate applications would hold them.
// Run: npm run build && node dist/bench/sync-fanout.bench.js [changes per N, default 20] [N,N,...]
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { buildEvalWorld } from '../test/evaluation/engine/eval-world.js';
import { call } from '../test/helpers/http.js';
import { startTestServer, type TestServer } from '../test/helpers/server.js';
import { SyncClient } from '../test/helpers/sync-client.js';
import { machineInfo } from './environment.js';
import { principalOf } from '../src/actor/audit-actor.js';

const kChanges = Number(process.argv[2] ?? 20);
const kCounts = (process.argv[3] ?? '1,100,1000').split(',').map(Number);
const kPerChannel = 100;

function rssBytes(server: TestServer): number {
  const status = readFileSync(`/proc/${server.proc.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const revisionOf = (set: string): number => (JSON.parse(set) as { metadata: { flagwireRevision: number } }).metadata.flagwireRevision;

async function main(): Promise<void> {
  const world = buildEvalWorld();
  const { ids } = world;
  const read = world.run('tokenCreate', {
    projectId: ids.single,
    principal: principalOf(ids.owner),
    name: 'fanout',
    permission: 'read',
  }).secret;
  await world.store.close();
  const server = await startTestServer({
    dataDir: world.dataDir,
    syncPort: 'free',
    env: { FLAGWIRE_RATE_LIMIT: '1000000000', FLAGWIRE_SYNC_MAX_STREAMS: '100000' },
  });
  const selector = `flagSetId=${ids.single},token=${read}`;
  const rows: string[] = [];
  try {
    for (const n of kCounts) {
      const clients = Array.from({ length: Math.ceil(n / kPerChannel) }, () => new SyncClient(server.syncPort));
      const before = rssBytes(server);
      // Per stream: the latest revision it was sent, and when each awaited revision arrived.
      let awaited = Number.POSITIVE_INFINITY;
      let arrived: number[] = [];
      let started = 0;
      let firsts = 0;
      const streams = Array.from({ length: n }, (_, i) => {
        let seen = -1;
        return clients[Math.floor(i / kPerChannel)]!.syncFlags({ header: selector }, undefined, (set) => {
          const revision = revisionOf(set);
          if (seen < 0) firsts++;
          if (seen < awaited && revision >= awaited) arrived.push(performance.now() - started);
          seen = revision;
        });
      });
      while (firsts < n) await new Promise((resolve) => setTimeout(resolve, 20));
      const perStream = (rssBytes(server) - before) / n;
      const latencies: number[] = [];
      for (let change = 0; change < kChanges; change++) {
        // A random pause first: changes sent right after the last one arrived would fall at one phase of
        // the poller's interval every time, and measure that phase instead of a change made at any moment.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 250));
        arrived = [];
        started = performance.now();
        const patched = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.half}`, {
          token: world.writeToken,
          body: { trafficPercentage: 10 + change },
        });
        if (patched.status !== 200) throw new Error(`patch: ${patched.status} ${patched.text}`);
        awaited = Number(patched.headers.get('flagwire-revision'));
        const deadline = Date.now() + 60_000;
        while (arrived.length < n && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
        if (arrived.length < n) throw new Error(`${n - arrived.length} of ${n} streams not told within a minute`);
        latencies.push(...arrived);
        awaited = Number.POSITIVE_INFINITY;
      }
      latencies.sort((a, b) => a - b);
      rows.push(
        `| ${n.toLocaleString('en-US')} | ${kChanges} | ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)} | ` +
          // One stream's share is below the heap's own swings: memory is reported from 100 streams up.
          `${latencies[latencies.length - 1]!.toFixed(1)} | ${n < 100 ? '—' : (perStream / 1024).toFixed(1)} |`,
      );
      for (const stream of streams) stream.cancel();
      for (const client of clients) client.close();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await server.stop();
  }
  const m = machineInfo();
  console.log(`Command: \`${['node dist/bench/sync-fanout.bench.js', ...process.argv.slice(2)].join(' ')}\``);
  console.log(
    `${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; ${m.cores} cores, ${m.cpu}, node ${m.node}; load average ${loadavg()[0]!.toFixed(1)}\n`,
  );
  console.log('| streams | changes | commit to told, p50 ms | p99 ms | max ms | node memory per stream, KiB |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
  process.exit(0);
}

await main();

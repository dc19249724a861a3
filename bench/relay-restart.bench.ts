// A relay restarted while its upstream is down (issue 45, item 2: "serves its stored state within 1 s of
// start"): an embedded upstream and a relay that has caught up with it, then the upstream killed; the
// relay killed (-9) and started again on its data dir, `runs` times, each timed from the spawn to the
// first 200 of /ready and of an OFREP bulk evaluation. Beside it, in the same run, the same restart of
// an embedded node on the upstream's own data dir (the start every node pays).
// Run: npm run build && node dist/bench/relay-restart.bench.js [runs, default 10]
import { loadavg } from 'node:os';
import { buildEvalWorld } from '../test/evaluation/engine/eval-world.js';
import { cli } from '../test/helpers/cli.js';
import { call } from '../test/helpers/http.js';
import { startTestServer, tempDataDir, type TestServer } from '../test/helpers/server.js';
import { machineInfo } from './environment.js';

const kRuns = Number(process.argv[2] ?? 10);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** kill -9, then its exit. */
async function kill9(node: TestServer): Promise<void> {
  node.proc.kill('SIGKILL');
  await node.stop();
}

/** Starts a server and times its first answers from the spawn: listening, /ready 200, OFREP 200. */
async function timedStart(start: () => Promise<TestServer>, projectId: string): Promise<{ server: TestServer; ms: number[] }> {
  const t0 = performance.now();
  const server = await start();
  const listening = performance.now() - t0;
  const firstOk = async (ask: () => Promise<number>) => {
    while ((await ask()) !== 200) await new Promise((resolve) => setTimeout(resolve, 5));
    return performance.now() - t0;
  };
  const ready = await firstOk(async () => (await call(server.baseUrl, 'GET', '/ready')).status);
  const evaluated = await firstOk(
    async () =>
      (
        await call(server.baseUrl, 'POST', '/ofrep/v1/evaluate/flags', {
          body: { context: { targetingKey: 'u1' } },
          headers: { 'X-Flagwire-Project': projectId },
        })
      ).status,
  );
  return { server, ms: [listening, ready, evaluated] };
}

async function main(): Promise<void> {
  const world = buildEvalWorld();
  const projectId = world.ids.single;
  await world.store.close();
  const upstream = await startTestServer({ dataDir: world.dataDir, syncPort: 'free' });
  const key = await cli(world.dataDir, ['relay', 'key', 'create', '--name', 'bench']);
  if (key.code !== 0) throw new Error(key.stderr);
  const relayDir = tempDataDir();
  const relayEnv = { FLAGWIRE_UPSTREAM_URL: upstream.baseUrl, FLAGWIRE_UPSTREAM_TOKEN: key.json.secret as string };
  const startRelay = () => startTestServer({ dataDir: relayDir, env: relayEnv });
  let relay = await startRelay();
  for (;;) {
    const r = await call(relay.baseUrl, 'GET', '/ready');
    if (r.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await kill9(upstream);
  const rows: string[] = [];
  const variants: [string, () => Promise<TestServer>][] = [
    ['relay, upstream down', startRelay],
    ['embedded node (the upstream, alone)', () => startTestServer({ dataDir: world.dataDir })],
  ];
  for (const [name, start] of variants) {
    const times: number[][] = [];
    for (let i = 0; i < kRuns; i++) {
      if (name.startsWith('relay')) await kill9(relay);
      const run = await timedStart(start, projectId);
      times.push(run.ms);
      if (name.startsWith('relay')) relay = run.server;
      else await kill9(run.server);
    }
    const col = (i: number) => median(times.map((m) => m[i]!)).toFixed(0);
    const max = (i: number) => Math.max(...times.map((m) => m[i]!)).toFixed(0);
    rows.push(`| ${name} | ${kRuns} | ${col(0)} | ${col(1)} | ${col(2)} | ${max(2)} |`);
  }
  await relay.stop();
  const info = machineInfo();
  console.log(`Command: node dist/bench/relay-restart.bench.js ${kRuns}`);
  console.log(
    `${new Date().toISOString()}; ${info.cores} cores, ${info.cpu}, node ${process.version}; load average ${loadavg()[0]!.toFixed(1)}`,
  );
  console.log('');
  console.log('| start | runs | listening, median ms | /ready 200, median ms | OFREP 200, median ms | OFREP 200, max ms |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
}

await main();

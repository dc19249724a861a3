// Readers that do not read, on the sync port (issue 55, item 2). One node, a project whose flag set is
// about 300 KB, and:
//   1. N SyncFlags streams (raw HTTP/2, 100 per connection) whose readers read nothing, so the node's
//      write of the set to each waits in HTTP/2's queues: the node's resident memory before, with the
//      streams open, and S seconds after their connections closed; and an evaluation of another flag
//      asked over and over meanwhile (one at a time), its slowest answers while the streams open against
//      its answers before;
//   2. 400 FetchAllFlags calls whose readers read nothing, on a node capped at 50
//      (FLAGWIRE_SYNC_MAX_STREAMS): how many the node took, and its memory growth.
// Run: npm run build && node dist/bench/sync-unread.bench.js [N, default 1000] [S, default 30]
import http2 from 'node:http2';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { kOperator, principalOf } from '../src/actor/audit-actor.js';
import { buildEvalWorld } from '../test/evaluation/engine/eval-world.js';
import { call } from '../test/helpers/http.js';
import { startTestServer, type TestServer } from '../test/helpers/server.js';
import { unreadCall } from '../test/helpers/sync-client.js';
import { machineInfo } from './environment.js';

const kStreams = Number(process.argv[2] ?? 1000);
const kSettleS = Number(process.argv[3] ?? 30);
const kPerConnection = 100;
const kUnary = 400;
const kUnaryCap = 50;

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

function rssBytes(server: TestServer): number {
  const status = readFileSync(`/proc/${server.proc.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `count` calls of `method` whose readers read nothing, on connections of 100; resolves once each was
 * answered headers, with their sessions and how many were refused (a status in the headers).
 */
async function unreadCalls(
  port: number,
  method: 'SyncFlags' | 'FetchAllFlags',
  selector: string,
  count: number,
): Promise<{ sessions: http2.ClientHttp2Session[]; refused: number }> {
  const sessions: http2.ClientHttp2Session[] = [];
  const answered: Promise<boolean>[] = [];
  for (let i = 0; i < count; i++) {
    if (i % kPerConnection === 0) {
      const session = http2.connect(`http://127.0.0.1:${port}`);
      session.on('error', () => undefined);
      sessions.push(session);
    }
    const request = unreadCall(sessions.at(-1)!, method, selector);
    answered.push(new Promise((resolve) => request.once('response', (headers) => resolve(headers['grpc-status'] !== undefined))));
  }
  const refused = (await Promise.all(answered)).filter((r) => r).length;
  return { sessions, refused };
}

/** Asks `ask` one at a time until `stop()`; the answers' times in ms, in order. */
function probe(ask: () => Promise<void>): { stop: () => Promise<number[]> } {
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await ask();
      times.push(performance.now() - started);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return times;
    },
  };
}

async function main(): Promise<void> {
  const world = buildEvalWorld();
  const { ids } = world;
  // About 300 KB of flag set: thirty flags with a 10 KB variant each.
  for (let i = 0; i < 30; i++) {
    world.run('flagCreate', {
      projectId: ids.single,
      body: { name: `big-${i}`, enabled: true, trafficPercentage: 100, variants: { a: 'a'.repeat(10_000) }, defaultVariant: 'a' },
      principal: kOperator,
    });
  }
  const read = world.run('tokenCreate', {
    projectId: ids.single,
    principal: principalOf(ids.owner),
    name: 'unread',
    permission: 'read',
  }).secret;
  await world.store.close();
  const selector = `flagSetId=${ids.single},token=${read}`;
  const env = { FLAGWIRE_RATE_LIMIT: '1000000000', FLAGWIRE_SYNC_MAX_STREAMS: '100000' };
  const server = await startTestServer({ dataDir: world.dataDir, syncPort: 'free', env });
  const evaluate = async () => {
    const r = await call(server.baseUrl, 'GET', `/v1/flags/${ids.on}?targetingKey=user-1`);
    if (r.status !== 200) throw new Error(`evaluation: ${r.status}`);
  };
  const setBytes = (await call(server.baseUrl, 'GET', `/v1/flag-sets/${ids.single}`, { token: read })).text.length;
  let streams: string[];
  try {
    for (let i = 0; i < 200; i++) await evaluate(); // warm
    await sleep(1000);
    const before = rssBytes(server);
    const quiet = probe(evaluate);
    await sleep(2000);
    const baseline = (await quiet.stop()).sort((a, b) => a - b);
    const busy = probe(evaluate);
    const opening = performance.now();
    const open = await unreadCalls(server.syncPort, 'SyncFlags', selector, kStreams);
    const openMs = performance.now() - opening;
    const during = (await busy.stop()).sort((a, b) => a - b);
    await sleep(2000);
    const held = rssBytes(server);
    for (const session of open.sessions) session.destroy();
    await sleep(kSettleS * 1000);
    const after = rssBytes(server);
    streams = [
      `| ${kStreams.toLocaleString('en-US')} streams not read | ${mib(before)} | ${mib(held)} | ${mib(after)} | ${openMs.toFixed(0)} | ` +
        `${percentile(baseline, 50).toFixed(1)} / ${percentile(baseline, 99).toFixed(1)} / ${baseline.at(-1)!.toFixed(1)} | ` +
        `${percentile(during, 50).toFixed(1)} / ${percentile(during, 99).toFixed(1)} / ${during.at(-1)!.toFixed(1)} |`,
    ];
  } finally {
    await server.stop();
  }
  const capped = await startTestServer({
    dataDir: world.dataDir,
    syncPort: 'free',
    env: { ...env, FLAGWIRE_SYNC_MAX_STREAMS: String(kUnaryCap) },
  });
  let unary: string;
  try {
    await call(capped.baseUrl, 'GET', `/v1/flags/${ids.on}?targetingKey=user-1`);
    await sleep(1000);
    const before = rssBytes(capped);
    const open = await unreadCalls(capped.syncPort, 'FetchAllFlags', selector, kUnary);
    await sleep(2000);
    const held = rssBytes(capped);
    unary = `| ${kUnary} FetchAllFlags not read, cap ${kUnaryCap} | ${kUnary - open.refused} | ${open.refused} | ${mib(held - before)} |`;
    for (const session of open.sessions) session.destroy();
  } finally {
    await capped.stop();
  }
  const m = machineInfo();
  console.log(`Command: \`${['node dist/bench/sync-unread.bench.js', ...process.argv.slice(2)].join(' ')}\``);
  console.log(
    `${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; ${m.cores} cores, ${m.cpu}, node ${m.node}; load average ${loadavg()[0]!.toFixed(1)}; flag set ${(setBytes / 1024).toFixed(0)} KB\n`,
  );
  console.log(
    `| case | RSS before, MiB | with them open | ${kSettleS} s after they closed | all opened in, ms | evaluation before: p50 / p99 / max ms | while they open |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const row of streams) console.log(row);
  console.log('\n| case | taken | refused | RSS growth, MiB |');
  console.log('|---|---:|---:|---:|');
  console.log(unary);
  process.exit(0);
}

await main();

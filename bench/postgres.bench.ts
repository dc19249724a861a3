// PostgreSQL as the system of record, measured on one machine: durable PATCHes per second (as (e):
// each a real change, answered after its commit) on a node with PostgreSQL beside a node on LMDB
// alone, and the replication lag under that write load: a probe PATCHes a flag on node A and times
// until evaluation on node B sees it (p50/p99), while the (e) load runs on A; and the same PATCH's
// webhook delivery: from the answer to a receiver on this machine getting the signed POST (issue 28).
// Run: npm run build && node dist/bench/postgres.bench.js [--seconds N]
// It starts a private PostgreSQL cluster (`scripts/ensure.sh postgres` installs it when missing).
import { setTimeout as sleep } from 'node:timers/promises';
import { kStoreLayout } from '../src/capabilities.js';
import { openForCli } from '../src/store/open-store.js';
import { runCommand, type CommandInput, type CommandName } from '../src/writer/thread/commands.js';
import { kOperator, principalOf } from '../src/actor/audit-actor.js';
import { startPostgres } from '../test/helpers/postgres.js';
import { startTestServer, tempDataDir, type TestServer } from '../test/helpers/server.js';
import { startReceiver } from '../test/helpers/webhook-receiver.js';

const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 10;
const kConnections = 16;
const kFlags = 64;
const kProbes = 200;
const kUnlimited = { FLAGWIRE_RATE_LIMIT: '1000000000', FLAGWIRE_AUTH_FAIL_LIMIT: '1000000000', FLAGWIRE_LOG_LEVEL: 'error' };
// The webhook receiver listens on loopback: allowed for the nodes on PostgreSQL.
const kWebhooks = { FLAGWIRE_WEBHOOK_ALLOW: '127.0.0.1' };

interface Data {
  secret: string;
  flags: string[];
  probe: string;
}

/** An org, a project, kFlags flags, a probe flag and a write token, written through the store's write path. */
async function seed(dataDir: string, databaseUrl: string | null): Promise<Data> {
  const { writes } = await openForCli(dataDir, kStoreLayout, databaseUrl);
  const run = async <N extends CommandName>(name: N, input: CommandInput<N>) => {
    const [r] = await writes.commit(() => [(w) => runCommand(w, name, input, Date.now())]);
    if (!r!.ok) throw r!.error;
    return r!.value;
  };
  const org = await run('orgCreate', { principal: kOperator, name: 'Bench', plan: 'teams' });
  const user = await run('userCreate', { email: 'bench@bench.test' });
  await run('orgAddMember', { principal: kOperator, orgId: org.id, userId: user.id, role: 'owner' });
  const project = await run('projectCreate', { principal: kOperator, name: 'Bench', orgId: org.id, kind: 'single' });
  const flags: string[] = [];
  for (let i = 0; i < kFlags; i++)
    flags.push((await run('flagCreate', { projectId: project.id, body: { name: `f${i}`, enabled: true }, principal: kOperator })).id);
  const probe = (await run('flagCreate', { projectId: project.id, body: { name: 'probe', trafficPercentage: 100 }, principal: kOperator }))
    .id;
  const token = await run('tokenCreate', { projectId: project.id, principal: principalOf(user.id), name: 'bench', permission: 'write' });
  await writes.close();
  return { secret: token.secret, flags, probe };
}

async function patch(node: TestServer, data: Data, flagId: string, body: unknown): Promise<number> {
  const r = await fetch(`${node.baseUrl}/api/v1/flags/${flagId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${data.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await r.arrayBuffer();
  return r.status;
}

/** (e): kConnections clients PATCHing distinct flags to new percentages until `stop`; answered 200s per second. */
async function writeLoad(node: TestServer, data: Data, stop: { done: boolean }): Promise<{ rps: number; failed: number }> {
  let ok = 0;
  let failed = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: kConnections }, async (_, c) => {
      for (let i = 0; !stop.done; i++) {
        const flag = data.flags[(c * 4 + (i % 4)) % data.flags.length]!;
        if ((await patch(node, data, flag, { trafficPercentage: (i * 7 + c) % 101 })) === 200) ok++;
        else failed++;
      }
    }),
  );
  return { rps: ok / ((performance.now() - start) / 1000), failed };
}

async function timed<T>(ms: number, fn: (stop: { done: boolean }) => Promise<T>): Promise<T> {
  const stop = { done: false };
  const running = fn(stop);
  await sleep(ms);
  stop.done = true;
  return running;
}

async function evaluate(node: TestServer, flagId: string): Promise<boolean> {
  const r = await fetch(`${node.baseUrl}/v1/flags/${flagId}?targetingKey=k`);
  return ((await r.json()) as { enabled: boolean }).enabled;
}

/** When the receiver got the probe's delivery with `enabled` (performance.now()), by the probe's number. */
const probeArrivals = new Map<number, number>();
let deliveredCount = () => 0;

/**
 * PATCH the probe on A, time until evaluation on B sees it and until the webhook's receiver has its
 * delivery; kProbes times. Probes run one after another, so the probe's deliveries arrive in order.
 */
async function lagProbes(a: TestServer, b: TestServer, data: Data, round: number): Promise<{ lags: number[]; deliveries: number[] }> {
  const lags: number[] = [];
  const deliveries: number[] = [];
  for (let i = 0; i < kProbes; i++) {
    const enabled = i % 2 === 0;
    const id = round * kProbes + i;
    if ((await patch(a, data, data.probe, { enabled })) !== 200) throw new Error('probe PATCH refused');
    const start = performance.now();
    while ((await evaluate(b, data.probe)) !== enabled) {
      if (performance.now() - start > 10_000) throw new Error('probe not seen in 10 s');
    }
    lags.push(performance.now() - start);
    while (!probeArrivals.has(id)) {
      if (performance.now() - start > 30_000)
        throw new Error(
          `probe ${id}'s delivery not received in 30 s (${probeArrivals.size} probe deliveries so far, ${deliveredCount()} in all)`,
        );
      await sleep(1);
    }
    deliveries.push(probeArrivals.get(id)! - start);
  }
  return { lags: lags.sort((x, y) => x - y), deliveries: deliveries.sort((x, y) => x - y) };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

const pg = await startPostgres();
const url = await pg.newDatabase();
const lmdbDir = tempDataDir();
const [pgData, lmdbData] = await Promise.all([seed(tempDataDir(), url), seed(lmdbDir, null)]);
const [a, b, solo] = await Promise.all([
  startTestServer({ env: { ...kUnlimited, ...kWebhooks, FLAGWIRE_DATABASE_URL: url } }),
  startTestServer({ env: { ...kUnlimited, ...kWebhooks, FLAGWIRE_DATABASE_URL: url } }),
  startTestServer({ dataDir: lmdbDir, env: kUnlimited }),
]);
try {
  for (const node of [a, b]) {
    while ((await fetch(`${node.baseUrl}/ready`)).status !== 200) await sleep(50);
  }
  const lmdb = await timed(seconds * 1000, (stop) => writeLoad(solo, lmdbData, stop));
  const onPg = await timed(seconds * 1000, (stop) => writeLoad(a, pgData, stop));
  // A webhook of every flag change, to a receiver that answers at once: under (e) it hears every PATCH.
  const receiver = await startReceiver();
  let probeSeq = 0;
  deliveredCount = () => receiver.received.length;
  receiver.onRequest = (body) => {
    const { audit } = (JSON.parse(body) as { data: { audit: { flagId: string } } }).data;
    if (audit.flagId === pgData.probe) probeArrivals.set(probeSeq++, performance.now());
  };
  const hook = await fetch(`${a.baseUrl}/api/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${pgData.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url, events: ['flag'] }),
  });
  if (hook.status !== 201) throw new Error(`webhook not made: ${hook.status} ${await hook.text()}`);
  const idle = await lagProbes(a, b, pgData, 0);
  const stop = { done: false };
  const load = writeLoad(a, pgData, stop);
  const stopLoad = () => {
    stop.done = true;
    return load;
  };
  // The load is stopped whatever the probes do: a probe that fails must not leave it running.
  const probes = await lagProbes(a, b, pgData, 1).finally(stopLoad);
  const loaded = { ...probes, load: await load };
  await receiver.close();
  console.log(`durable PATCHes/s, ${kConnections} clients, ${seconds} s:`);
  console.log(`  LMDB alone        ${lmdb.rps.toFixed(0).padStart(6)}  (refused ${lmdb.failed})`);
  console.log(`  PostgreSQL        ${onPg.rps.toFixed(0).padStart(6)}  (refused ${onPg.failed})`);
  console.log(`replication lag, PATCH on node A answered -> evaluation on node B sees it (${kProbes} probes):`);
  const line = (what: string, sorted: number[], extra = '') =>
    console.log(
      `  ${what.padEnd(18)}p50 ${pct(sorted, 50).toFixed(1)} ms  p99 ${pct(sorted, 99).toFixed(1)} ms  max ${pct(sorted, 100).toFixed(1)} ms${extra}`,
    );
  line('idle', idle.lags);
  line('under (e) on A', loaded.lags, `  (load: ${loaded.load.rps.toFixed(0)} PATCH/s)`);
  console.log(`webhook delivery, PATCH on node A answered -> the receiver has the signed POST (${kProbes} probes):`);
  line('idle', idle.deliveries);
  line('under (e) on A', loaded.deliveries, '  (every PATCH of the load is delivered too)');
} catch (err) {
  // A node that stopped answering says why in its log.
  for (const [name, node] of [
    ['A', a],
    ['B', b],
    ['LMDB', solo],
  ] as const)
    if (node.proc.exitCode !== null || node.proc.signalCode !== null) console.error(`node ${name} exited:\n${node.logs().slice(-4000)}`);
  throw err;
} finally {
  await Promise.all([a.stop(), b.stop(), solo.stop()]);
  await pg.destroy();
}

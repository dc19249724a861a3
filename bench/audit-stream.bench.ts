// A PATCH's latency beside the audit stream (issue 97 item 6): one server with no stream, then one
// streaming to a JSON-lines file and to Debian's rsyslog while rsyslog reads, and while it hangs
// (SIGSTOP) with a backlog of 100,000 entries it has not read. Each phase sends `N` PATCHes one at a
// time and prints their p50/p99/max.
// Run: npm run build && N=300 node dist/bench/audit-stream.bench.js
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { call } from '../test/helpers/http.js';
import { freePort } from '../test/helpers/free-port.js';
import { TestRsyslog } from '../test/helpers/rsyslog.js';
import { scratchDir } from '../test/helpers/scratch-dir.js';
import { startTestServer, tempDataDir, type TestServer } from '../test/helpers/server.js';
import { buildWorld } from '../test/helpers/world.js';
import { machineInfo } from './environment.js';

const kPatches = Number(process.env.N ?? 300);
const kBacklog = 100_000;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function patches(server: TestServer, flagId: string, token: string): Promise<string> {
  const took: number[] = [];
  for (let i = 0; i < kPatches; i++) {
    const began = performance.now();
    const r = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${flagId}`, { token, body: { trafficPercentage: i % 100 } });
    if (r.status !== 200) throw new Error(`PATCH answered ${r.status}: ${r.text}`);
    took.push(performance.now() - began);
  }
  return `${percentile(took, 50).toFixed(1)} / ${percentile(took, 99).toFixed(1)} / ${Math.max(...took).toFixed(1)}`;
}

function seeded(backlog: number): ReturnType<typeof buildWorld> & { dir: string } {
  const dir = tempDataDir();
  const world = buildWorld(dir);
  world.store.transact((w) => {
    for (let i = 0; i < backlog; i++) {
      w.appendAudit({
        at: Date.now(),
        projectId: world.ids.single,
        actor: 'operator',
        actorName: 'operator',
        action: 'flag.patch',
        flagId: world.ids.flag,
        env: null,
        changes: { trafficPercentage: { before: i % 100, after: (i + 1) % 100 } },
      });
    }
  });
  return { ...world, dir };
}

console.log(machineInfo(), `load ${loadavg()[0]!.toFixed(1)}`);
const rows: [string, string][] = [];
{
  const world = seeded(0);
  await world.store.close();
  const server = await startTestServer({ dataDir: world.dir });
  rows.push(['no stream', await patches(server, world.ids.flag, world.secrets.write)]);
  await server.stop();
}
{
  const world = seeded(kBacklog);
  await world.store.close();
  const rsyslog = TestRsyslog.create(await freePort());
  await rsyslog.start();
  const env = {
    FLAGWIRE_AUDIT_SYSLOG: `tcp://127.0.0.1:${rsyslog.port}`,
    FLAGWIRE_AUDIT_FILE: join(scratchDir('flagwire-bench-'), 'a.jsonl'),
  };
  const server = await startTestServer({ dataDir: world.dir, env });
  rows.push(['streaming, rsyslog reading (its backlog of 100,000 under way)', await patches(server, world.ids.flag, world.secrets.write)]);
  rsyslog.pause();
  rows.push(['streaming, rsyslog hung (SIGSTOP)', await patches(server, world.ids.flag, world.secrets.write)]);
  await server.stop();
  await rsyslog.stop();
}
console.log(`| phase (${kPatches} PATCHes, one at a time) | p50 / p99 / max (ms) |\n|---|---:|`);
for (const [phase, figures] of rows) console.log(`| ${phase} | ${figures} |`);

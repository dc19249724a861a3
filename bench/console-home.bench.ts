// The web console's home (GET /console/api/home, the first page after sign-in) on a node of many
// organisations: the demo's data and `orgs` more organisations its owner does not belong to, served by
// one node; the demo's owner signs in and asks for the home `requests` times in turn. Printed for each
// build: the node's CPU per home view (every thread, from /proc) and the wall time's median and p95. The
// home is answered on a front-end thread, which serves evaluations too. With `--baseline DIR` (another
// build's checkout, built, of schema 15: the copy it is given is written back to schema 15), that build's
// node answers the same after this one's.
// Run: npm run build && node dist/bench/console-home.bench.js [--orgs 1000] [--requests 200] [--baseline DIR]
import { cpSync, mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { kOperator } from '../src/actor/audit-actor.js';
import { kStoreLayout } from '../src/capabilities.js';
import { hashPassword } from '../src/model/passwords.js';
import { LmdbStore } from '../src/store/lmdb-store.js';
import { runCommand } from '../src/writer/thread/commands.js';
import { seedDemo } from '../src/writer/thread/demo-seed.js';
import { startTestServer } from '../test/helpers/server.js';
import { asSchema19Layout, dropRawKeys } from '../test/helpers/store.js';
import { consoleCall, kDemoOwner, signIn } from '../test/helpers/web-console.js';
import { machineInfo } from './environment.js';
import { builtBin } from './locations.js';
import { cpuSample } from './processes.js';
import { median, percentile } from './stats.js';

const { values } = parseArgs({
  options: { orgs: { type: 'string', default: '1000' }, requests: { type: 'string', default: '200' }, baseline: { type: 'string' } },
});
const kOrgs = Number(values.orgs);
const kRequests = Number(values.requests);
const kPassword = 'bench password 1234';

/** The demo and kOrgs more organisations in a fresh data dir. */
async function seeded(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-home-bench-'));
  const ownerPasswordHash = await hashPassword(kPassword);
  const store = LmdbStore.open(dir, { layout: kStoreLayout });
  store.transact((w) => seedDemo(w, { ownerPasswordHash }, Date.now()));
  for (let made = 0; made < kOrgs; made += 100) {
    store.transact((w) => {
      for (let i = made; i < Math.min(made + 100, kOrgs); i++)
        runCommand(w, 'orgCreate', { principal: kOperator, name: `Team ${i}` }, Date.now());
    });
  }
  await store.close();
  return dir;
}

/** A copy of `dir` as schema 15 wrote it (schema 19's layouts, no index of a person's organisations), for a build of that schema. */
async function asSchema15(dir: string): Promise<string> {
  const copy = mkdtempSync(join(tmpdir(), 'flagwire-home-bench-'));
  cpSync(dir, copy, { recursive: true });
  await asSchema19Layout(copy);
  await dropRawKeys(copy, 'auth', 'userOrg', { schemaVersion: 15 });
  return copy;
}

async function measure(dataDir: string, cli: string | undefined): Promise<{ cpuMs: number; wall: number[] }> {
  const server = await startTestServer({ dataDir, ...(cli === undefined ? {} : { cli }) });
  try {
    const session = await signIn(server.baseUrl, kDemoOwner, kPassword);
    const home = async () => {
      const r = await consoleCall(server.baseUrl, session, 'GET', 'home');
      if (r.status !== 200 || r.json.orgs.length !== 1) throw new Error(`home ${r.status}: ${JSON.stringify(r.json).slice(0, 200)}`);
    };
    for (let i = 0; i < 20; i++) await home();
    const pid = server.proc.pid!;
    const wall: number[] = [];
    const before = cpuSample(pid).total;
    for (let i = 0; i < kRequests; i++) {
      const t0 = performance.now();
      await home();
      wall.push(performance.now() - t0);
    }
    return { cpuMs: ((cpuSample(pid).total - before) * 1000) / kRequests, wall };
  } finally {
    await server.stop();
  }
}

const data = await seeded();
const builds: { name: string; cli: string | undefined; dir: string }[] = [{ name: 'this build', cli: undefined, dir: data }];
if (values.baseline !== undefined)
  builds.push({ name: `baseline (${values.baseline})`, cli: builtBin(values.baseline), dir: await asSchema15(data) });
const rows: string[] = [];
for (const build of builds) {
  const { cpuMs, wall } = await measure(build.dir, build.cli);
  const sorted = [...wall].sort((a, b) => a - b);
  rows.push(`| ${build.name} | ${cpuMs.toFixed(2)} | ${median(wall).toFixed(2)} | ${percentile(sorted, 95).toFixed(2)} |`);
}
console.log(
  `# ${JSON.stringify(machineInfo())}; the demo and ${kOrgs} more organisations, ${kRequests} home views each; load ${loadavg()[0]!.toFixed(1)}`,
);
console.log('| build | node CPU ms a home view | wall ms, median | p95 |');
console.log('|---|---:|---:|---:|');
for (const row of rows) console.log(row);

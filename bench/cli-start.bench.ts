// What a command-line command costs from spawn to exit (issue 57, item 1: `flagwire --help` at most
// 100 ms of wall time on a quiet machine, a store command at most 250 ms): `--help`, `flag list` and
// `token create` on the demo's data, `project create` and `project list --org` in the demo's
// organisation, and `org create`, each run `runs` times, as minimum / median / maximum of the wall time
// and of the process's CPU time (user + system, the child's as the kernel counts it). With `--projects N`,
// the data holds N more projects beside the demo's, ten to an organisation, and with `--orgs N` N more
// organisations: what a command costs on a node that serves many teams. With `--baseline DIR` (another
// build's checkout, built), the same commands of that build run in turn with this one's, on copies of the
// same data, so the two are compared in one run.
// Run: npm run build && node dist/bench/cli-start.bench.js [--runs N] [--projects N] [--orgs N] [--baseline DIR]
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { kOperator } from '../src/actor/audit-actor.js';
import { kStoreLayout } from '../src/capabilities.js';
import { LmdbStore } from '../src/store/lmdb-store.js';
import { runCommand } from '../src/writer/thread/commands.js';
import { kDemoProjectIds, seedDemo } from '../src/writer/thread/demo-seed.js';
import { kCli } from '../test/helpers/server.js';
import { hostSpeed, machineInfo } from './environment.js';
import { builtBin } from './locations.js';
import { getProject } from '../src/model/records/project-records.js';
import { listUsers } from '../src/model/records/org-records.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '20' },
    projects: { type: 'string', default: '0' },
    orgs: { type: 'string', default: '0' },
    baseline: { type: 'string' },
  },
});
const kRuns = Number(values.runs);
const kMoreProjects = Number(values.projects);
const kMoreOrgs = Number(values.orgs);

/** This process's waited-for children's CPU time so far, in ms (/proc/self/stat: cutime + cstime, in clock ticks). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // Fields 16 and 17 of stat(5), counted from the state (field 3) at index 0.
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
}

/** One run of `cli` with `args`: its wall and CPU time. */
function timed(cli: string, args: string[]): { wall: number; cpu: number } {
  const cpu0 = childrenCpuMs();
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, FLAGWIRE_DATA: '' } });
  const wall = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
  return { wall, cpu: childrenCpuMs() - cpu0 };
}

/** The demo's data in a fresh data dir, with kMoreProjects more projects ten to an organisation: its owner's and its organisation's ids. */
function seededDataDir(): { dir: string; ownerId: string; orgId: string } {
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-cli-bench-'));
  const store = LmdbStore.open(dir, { layout: kStoreLayout });
  const seeded = store.transact((w) => {
    seedDemo(w, {}, Date.now());
    return {
      ownerId: listUsers(w).find((u) => u.email === 'owner@demo.flagwire.test')!.id,
      orgId: getProject(w, kDemoProjectIds.shop)!.orgId!,
    };
  });
  const started = performance.now();
  for (let made = 0; made < kMoreProjects; made += 10) {
    store.transact((w) => {
      const org = runCommand(w, 'orgCreate', { principal: kOperator, name: `Team ${made / 10}` }, Date.now());
      for (let i = made; i < Math.min(made + 10, kMoreProjects); i++) {
        runCommand(w, 'projectCreate', { principal: kOperator, name: `Project ${i}`, orgId: org.id, kind: 'single' }, Date.now());
      }
    });
  }
  if (kMoreProjects > 0) {
    // Each create checks its name against its organisation's projects: with every project read instead, this grew with their square.
    console.log(`# ${kMoreProjects} projects made in process in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const orgsStarted = performance.now();
  for (let made = 0; made < kMoreOrgs; made += 500) {
    store.transact((w) => {
      for (let i = made; i < Math.min(made + 500, kMoreOrgs); i++)
        runCommand(w, 'orgCreate', { principal: kOperator, name: `Org ${i}` }, Date.now());
    });
  }
  if (kMoreOrgs > 0) {
    // Each create checks its name through the name lookup: with every organisation read instead, this grew with their square.
    console.log(`# ${kMoreOrgs} organisations made in process in ${((performance.now() - orgsStarted) / 1000).toFixed(1)} s`);
  }
  store.close();
  return { dir, ...seeded };
}

const seeded = seededDataDir();
const builds = [{ name: 'this build', cli: kCli, dir: seeded.dir }];
if (values.baseline !== undefined) {
  const copy = mkdtempSync(join(tmpdir(), 'flagwire-cli-bench-'));
  cpSync(seeded.dir, copy, { recursive: true });
  builds.push({ name: `baseline (${values.baseline})`, cli: builtBin(values.baseline), dir: copy });
}
const commands: { name: string; args: (dir: string, n: number) => string[] }[] = [
  { name: '--help', args: () => ['--help'] },
  { name: 'flag list', args: (dir) => ['flag', 'list', kDemoProjectIds.shop, '--data', dir, '--json'] },
  {
    name: 'token create',
    args: (dir, n) => [
      'token',
      'create',
      kDemoProjectIds.shop,
      '--as',
      seeded.ownerId,
      '--name',
      `bench-${n}`,
      '--permission',
      'read',
      '--data',
      dir,
      '--json',
    ],
  },
  {
    name: 'project create',
    args: (dir, n) => ['project', 'create', '--org', seeded.orgId, '--name', `bench-${n}`, '--data', dir, '--json'],
  },
  { name: 'project list --org', args: (dir) => ['project', 'list', '--org', seeded.orgId, '--data', dir, '--json'] },
  { name: 'org create', args: (dir, n) => ['org', 'create', '--name', `bench-${n}`, '--data', dir, '--json'] },
];

const samples = new Map<string, { wall: number[]; cpu: number[] }>();
const loads: number[] = [];
const speedBefore = hostSpeed();
for (let n = 0; n < kRuns; n++) {
  for (const command of commands) {
    // Alternated run by run, so a busy moment of the machine falls on both builds alike.
    for (const build of n % 2 === 0 ? builds : [...builds].reverse()) {
      const key = `${build.name}\t${command.name}`;
      const { wall, cpu } = timed(build.cli, command.args(build.dir, n));
      const s = samples.get(key) ?? { wall: [], cpu: [] };
      s.wall.push(wall);
      s.cpu.push(cpu);
      samples.set(key, s);
    }
  }
  loads.push(loadavg()[0]!);
}

const spread = (v: number[]) => {
  const sorted = [...v].sort((a, b) => a - b);
  const ms = (x: number) => x.toFixed(0);
  return `${ms(sorted[0]!)} / ${ms(sorted[Math.floor(sorted.length / 2)]!)} / ${ms(sorted.at(-1)!)}`;
};
console.log(
  `# ${JSON.stringify(machineInfo())}; ${kRuns} runs each; ${kMoreProjects} projects and ${kMoreOrgs} organisations beside the demo's; load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
);
console.log(`# host speed before the runs: ${speedBefore}; after: ${hostSpeed()}`);
console.log('| build | command | wall ms (min / median / max) | CPU ms (min / median / max) |');
console.log('|---|---|---:|---:|');
for (const [key, s] of samples) {
  const [build, command] = key.split('\t');
  console.log(`| ${build} | ${command} | ${spread(s.wall)} | ${spread(s.cpu)} |`);
}

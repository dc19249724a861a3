// OFREP bulk evaluation on one core (issue 45, item 3), measured as Unleash Edge publishes its figures
// (39k requests/s per CPU for a small flag set, 6.9k for a large one): POST /ofrep/v1/evaluate/flags
// with a context, for a project of 5 flags and one of 350 (dataset.ts generateBulkDataset: typed flags
// with rules, booleans at percentages, audiences, cohorts), answered 200 with every flag, and the same
// request revalidated with the project's ETag (If-None-Match: 304, no body).
//
// With `--route frontend`, the same for Unleash's front-end API (issue 60, item 1): GET /api/frontend as
// unleash-proxy-client asks it (the context as a query, `properties[name]=value`, the project's client key
// as Authorization), the same 7 attributes and rotating key, answered 200 with the toggles on for the
// context, and the same request revalidated with its ETag: Edge's own route beside Edge's figures.
// `--route frontend-all` asks GET /api/frontend/all, every toggle of the project, off ones too.
//
// Each node serves with one front-end thread and one eval worker (FLAGWIRE_HTTP_THREADS=1,
// FLAGWIRE_EVAL_WORKERS=1), every thread pinned to SERVER_CPUS (taskset -a); wrk runs pinned to WRK_CPUS.
// The node's CPU (all threads, /proc) and wrk's are measured over every run: req/s per CPU-second of the
// node is the figure comparable with Edge's "per CPU"; wrk's share says whether the generator was the
// ceiling. Targets are measured in turn, round after round (ABAB), so a busy moment of the shared machine
// falls on each of them alike; the medians are printed with the ratios.
//
//   npm run build && node dist/bench/ofrep-bulk.bench.js                 # the primary (started here)
//   node dist/bench/ofrep-bulk.bench.js --relay                          # and a relay of it, side by side
//   node dist/bench/ofrep-bulk.bench.js --projects P5,P350 NAME=URL ...  # nodes already running (nothing started)
//   node dist/bench/ofrep-bulk.bench.js --baseline /tmp/bulk-base       # and another build's node, side by side
//   node dist/bench/ofrep-bulk.bench.js --route frontend                 # Unleash's front-end API instead of OFREP
//   node dist/bench/ofrep-bulk.bench.js --route frontend-all             # its /all: every toggle, off ones too
// Options: --seconds 8 --rounds 3 --connections 64 --server-cpus 0 --wrk-cpus 1
//
// --baseline DIR starts a second node from DIR's build (DIR/dist: another worktree, built) on a copy of the
// same data, measured first in every round, so that a change and what it changes run in one run, turn
// about, on the same core: the ratio table then reads "primary ÷ baseline".
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateBulkDataset } from './dataset.js';
import { hostSpeed, machineInfo } from './environment.js';
import { freePort } from '../test/helpers/free-port.js';
import { kDist } from './locations.js';
import { log } from './log.js';
import { cpuSample, generatorCpuSeconds, killAllSync, startServer, stopAll, type Server } from './processes.js';
import { median } from './stats.js';
import { ensureWrk, runWrk } from './wrk.js';

interface Target {
  name: string;
  url: string;
  /** The node's pid when this bench started it (its CPU is then measured); null for a node given by URL. */
  pid: number | null;
}

interface Scenario {
  label: string;
  project: number;
  revalidate: boolean;
}

interface Figures {
  rps: number;
  p99Ms: number;
  /** The node's CPU over the run, cores (1.0 = one core busy all the time). */
  nodeCores: number;
  /** The node's main thread (HTTP, uWS) alone; the rest is mostly the eval worker. */
  mainCores: number;
  generatorCores: number;
  non2xx: number;
}

const kFlagCounts = [5, 350] as const;
const kEdgePerCpu = [39_000, 6_900];
const kKeys = 10_000;
const kFlagwireListening = /Flagwire listening on (http:\/\/[\d.:]+)/;
const kStartWithinMs = 60_000;
// The context of every request: every attribute the mix's audiences and rules read, the key rotating.
const kBody = JSON.stringify({
  context: {
    targetingKey: '{key}',
    userId: '{key}-7f3c',
    plan: 'beta',
    country: 'NL',
    version: '2.3.1',
    email: '{key}@example.com',
    tier: 'gold',
  },
});
const kRevalidatedBody = kBody.replaceAll('{key}', 'user-1');
// The front-end API's query: the same context as unleash-proxy-client writes it.
const kFrontendPath =
  '/api/frontend?userId={key}-7f3c&sessionId={key}&properties[plan]=beta&properties[country]=NL' +
  '&properties[version]=2.3.1&properties[email]={key}@example.com&properties[tier]=gold';

/** What a run asks: OFREP's bulk evaluation, or Unleash's front-end API (the toggles on, or all of them). */
type Route = 'ofrep' | 'frontend' | 'frontend-all';
const kRoutes: readonly Route[] = ['ofrep', 'frontend', 'frontend-all'];
const kRouteLabel: Record<Route, string> = { ofrep: '', frontend: 'front-end API, ', 'frontend-all': 'front-end API /all, ' };

/** A project as the requests name it: its id (OFREP's header) and its client key (the front-end API's). */
interface ProjectRef {
  id: string;
  frontendKey: string | null;
}

function parseArgs(argv: string[]) {
  const options = {
    seconds: 8,
    rounds: 3,
    connections: 64,
    serverCpus: '0',
    wrkCpus: '1',
    relay: false,
    projects: null as string[] | null,
    baseline: null as string | null,
    route: 'ofrep' as Route,
  };
  const given: { name: string; url: string }[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => argv[++i] ?? '';
    if (arg === '--seconds') options.seconds = Number(value());
    else if (arg === '--rounds') options.rounds = Number(value());
    else if (arg === '--connections') options.connections = Number(value());
    else if (arg === '--server-cpus') options.serverCpus = value();
    else if (arg === '--wrk-cpus') options.wrkCpus = value();
    else if (arg === '--relay') options.relay = true;
    else if (arg === '--projects') options.projects = value().split(',');
    else if (arg === '--baseline') options.baseline = value();
    else if (arg === '--route') {
      const name = value();
      const route = kRoutes.find((r) => r === name);
      if (route === undefined) throw new Error(`--route is one of ${kRoutes.join(', ')}, not ${name}`);
      options.route = route;
    } else if (/^[\w-]+=https?:\/\//.test(arg)) given.push({ name: arg.slice(0, arg.indexOf('=')), url: arg.slice(arg.indexOf('=') + 1) });
    else throw new Error(`unknown argument ${arg}`);
  }
  if (given.length > 0 && options.projects === null)
    throw new Error('nodes given by URL need --projects ID5,ID350 (the projects they serve)');
  if (given.length > 0 && options.route !== 'ofrep')
    throw new Error('--route frontend needs the nodes this bench starts (their client keys)');
  return { options, given };
}

function serverEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith('FLAGWIRE_')) delete env[name];
  return {
    ...env,
    FLAGWIRE_HTTP_THREADS: '1',
    FLAGWIRE_EVAL_WORKERS: '1',
    FLAGWIRE_RATE_LIMIT: '1000000000',
    FLAGWIRE_LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** Starts `flagwire serve ...args` (of the build in `dist`) and pins every thread it has (and will start) to `cpus`. */
async function startNode(name: string, args: string[], env: NodeJS.ProcessEnv, cpus: string, dist = kDist): Promise<Server> {
  const server = await startServer(
    name,
    [join(dist, 'src/cli/cli.js'), 'serve', '--port', '0', '--host', '127.0.0.1', ...args],
    env,
    kFlagwireListening,
    kStartWithinMs,
  );
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(server.pid)], { stdio: 'ignore' });
  return server;
}

/** The requests of a run on `route`: their path (with `{key}` for a rotating run), method, headers and body. */
function routeRequest(route: Route, project: ProjectRef, revalidated: boolean) {
  if (route !== 'ofrep') {
    const path = route === 'frontend' ? kFrontendPath : kFrontendPath.replace('/api/frontend?', '/api/frontend/all?');
    return {
      method: 'GET',
      path: revalidated ? path.replaceAll('{key}', 'user-1') : path,
      headers: { authorization: project.frontendKey! } as Record<string, string>,
      body: undefined,
    };
  }
  return {
    method: 'POST',
    path: '/ofrep/v1/evaluate/flags',
    headers: { 'content-type': 'application/json', 'x-flagwire-project': project.id } as Record<string, string>,
    body: revalidated ? kRevalidatedBody : kBody,
  };
}

async function bulk(url: string, route: Route, project: ProjectRef, etag?: string): Promise<Response> {
  const r = routeRequest(route, project, true);
  return fetch(`${url}${r.path}`, {
    method: r.method,
    headers: { ...r.headers, ...(etag ? { 'if-none-match': etag } : {}) },
    ...(r.body === undefined ? {} : { body: r.body }),
  });
}

/** The project's ETag as the node answers it, after checking that the node answers every flag (OFREP) or some (the front-end API) and a 304 to it. */
async function etagOf(target: Target, route: Route, project: ProjectRef, flags: number): Promise<string> {
  const first = await bulk(target.url, route, project);
  const text = await first.text();
  const body = JSON.parse(text) as { flags?: unknown[]; toggles?: unknown[] };
  log(`${target.name} ${route}, ${flags} flags: ${body.flags?.length ?? body.toggles?.length} entries, ${text.length} bytes`);
  const etag = first.headers.get('etag');
  // OFREP lists every flag twice, under its id and its name (docs/decisions.md: OFREP); the front-end API
  // lists the toggles on for the context, as Unleash's does.
  const listed = route === 'ofrep' ? body.flags?.length === 2 * flags : (body.toggles?.length ?? 0) > 0;
  if (first.status !== 200 || !listed || etag === null) {
    throw new Error(
      `${target.name}: ${route} answered ${first.status} with ${body.flags?.length ?? body.toggles?.length} entries (${flags} flags) and ETag ${etag}`,
    );
  }
  const again = await bulk(target.url, route, project, etag);
  if (again.status !== 304) throw new Error(`${target.name}: If-None-Match answered ${again.status}, not 304`);
  return etag;
}

async function measure(
  target: Target,
  route: Route,
  project: ProjectRef,
  etag: string | null,
  seconds: number,
  connections: number,
  wrkCpus: string,
): Promise<Figures> {
  const node0 = target.pid === null ? null : cpuSample(target.pid);
  const gen0 = generatorCpuSeconds();
  const rotating = routeRequest(route, project, false);
  const fixed = routeRequest(route, project, true);
  const run = runWrk({
    url: target.url,
    connections,
    durationSec: seconds,
    threads: 1,
    cpus: wrkCpus,
    // The ETag names the context (the request's body as sent), so it is one context's: a revalidation sends that context back
    // with its tag, as a client holding its answer does. A 200 run asks for a new targeting key each time.
    sequence:
      etag === null
        ? {
            kind: 'rotate',
            method: rotating.method,
            template: rotating.path,
            keys: kKeys,
            headers: rotating.headers,
            ...(rotating.body === undefined ? {} : { body: rotating.body }),
          }
        : {
            kind: 'fixed',
            request: {
              method: fixed.method,
              path: fixed.path,
              headers: { ...fixed.headers, 'if-none-match': etag },
              ...(fixed.body === undefined ? {} : { body: fixed.body }),
            },
          },
  });
  const r = await run.result;
  let nodeCores = Number.NaN;
  let mainCores = Number.NaN;
  if (node0 !== null) {
    const node1 = cpuSample(target.pid!);
    nodeCores = (node1.total - node0.total) / r.durationSec;
    mainCores = ((node1.threads.get('main') ?? 0) - (node0.threads.get('main') ?? 0)) / r.durationSec;
  }
  return {
    rps: r.rps,
    p99Ms: r.p99Ms,
    nodeCores,
    mainCores,
    generatorCores: (generatorCpuSeconds() - gen0) / r.durationSec,
    non2xx: r.non2xx + r.errors,
  };
}

/** Waits until the relay answers the primary's ETag for every project (it has caught up). */
async function caughtUp(primary: Target, relay: Target, projects: ProjectRef[]): Promise<void> {
  const deadline = Date.now() + kStartWithinMs;
  for (;;) {
    const tags = await Promise.all(
      projects.flatMap((project) =>
        [primary, relay].map((t) =>
          bulk(t.url, 'ofrep', project).then((r) => (r.status === 200 ? r.headers.get('etag') : `status ${r.status}`)),
        ),
      ),
    );
    let same = true;
    for (let i = 0; i < tags.length; i += 2) same &&= tags[i] === tags[i + 1];
    if (same) return;
    if (Date.now() > deadline) throw new Error(`the relay did not catch up within ${kStartWithinMs} ms: ${tags.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function main(): Promise<void> {
  const { options, given } = parseArgs(process.argv.slice(2));
  ensureWrk();
  const targets: Target[] = given.map((g) => ({ ...g, pid: null }));
  let projects: ProjectRef[] = (options.projects ?? []).map((id) => ({ id, frontendKey: null }));
  const work = mkdtempSync(join(tmpdir(), 'flagwire-ofrep-bulk-'));
  try {
    if (targets.length === 0) {
      const data = await generateBulkDataset(join(work, 'primary'), kFlagCounts);
      projects = data.projects.map((p) => ({ id: p.id, frontendKey: p.frontendKey }));
      if (options.baseline !== null) {
        // Copied before either node opens it: the same records, each node its own files.
        cpSync(join(work, 'primary'), join(work, 'baseline'), { recursive: true });
        const baseline = await startNode(
          'baseline',
          ['--data', join(work, 'baseline')],
          serverEnv({ FLAGWIRE_SYNC_PORT: '0' }),
          options.serverCpus,
          join(options.baseline, 'dist'),
        );
        targets.push({ name: 'baseline', url: baseline.url, pid: baseline.pid });
      }
      const syncPort = options.relay ? String(await freePort()) : '0';
      const primary = await startNode(
        'primary',
        ['--data', join(work, 'primary')],
        serverEnv({ FLAGWIRE_SYNC_PORT: syncPort }),
        options.serverCpus,
      );
      targets.push({ name: 'primary', url: primary.url, pid: primary.pid });
      const primaryTarget = targets[targets.length - 1]!;
      if (options.relay) {
        // The relay's credential, made on the primary's data dir (docs/api.md: relay keys); it prints the secret once.
        const created = execFileSync(process.execPath, [join(kDist, 'src/cli/cli.js'), 'relay', 'key', 'create', '--name', 'bench'], {
          env: { ...serverEnv({}), FLAGWIRE_DATA: join(work, 'primary') },
          encoding: 'utf8',
        });
        const secret = /fwr_\S+/.exec(created)?.[0];
        if (secret === undefined) throw new Error(`relay key create printed no secret: ${created}`);
        const relay = await startNode(
          'relay',
          ['--data', join(work, 'relay'), '--upstream', primary.url, '--upstream-token', secret],
          serverEnv({ FLAGWIRE_SYNC_PORT: '0' }),
          options.serverCpus,
        );
        const relayTarget = { name: 'relay', url: relay.url, pid: relay.pid };
        await caughtUp(primaryTarget, relayTarget, projects);
        targets.push(relayTarget);
      }
    }
    if (projects.length !== kFlagCounts.length) throw new Error(`--projects names ${projects.length} projects, not ${kFlagCounts.length}`);
    const route = options.route;
    const scenarios: Scenario[] = kFlagCounts.flatMap((flags, project) => [
      { label: `${kRouteLabel[route]}${flags} flags, 200`, project, revalidate: false },
      { label: `${kRouteLabel[route]}${flags} flags, 304 (one context revalidated)`, project, revalidate: true },
    ]);
    const etags = new Map<string, string>();
    for (const t of targets)
      for (const [p, project] of projects.entries()) etags.set(`${t.name} ${project.id}`, await etagOf(t, route, project, kFlagCounts[p]!));
    log(
      `targets: ${targets.map((t) => `${t.name} ${t.url}${t.pid === null ? '' : ` pid ${t.pid}`}`).join('; ')}; load ${loadavg()[0]!.toFixed(1)}`,
    );
    // Unmeasured: the first seconds of each route (JIT, the engine's caches) would count against it.
    for (const t of targets)
      for (const project of projects) await measure(t, route, project, null, 2, options.connections, options.wrkCpus);
    const runs = new Map<string, Figures[]>();
    const loads: number[] = [];
    // Sampled while the targets sit idle, before and after the rounds.
    const speed = { before: hostSpeed(), after: '' };
    for (let round = 0; round < options.rounds; round++) {
      for (const s of scenarios) {
        for (const t of targets) {
          const project = projects[s.project]!;
          const f = await measure(
            t,
            route,
            project,
            s.revalidate ? etags.get(`${t.name} ${project.id}`)! : null,
            options.seconds,
            options.connections,
            options.wrkCpus,
          );
          loads.push(loadavg()[0]!);
          const key = `${t.name}|${s.label}`;
          runs.set(key, [...(runs.get(key) ?? []), f]);
          log(
            `round ${round + 1} ${t.name} ${s.label}: ${Math.round(f.rps)} req/s, node ${f.nodeCores.toFixed(2)} cores, wrk ${f.generatorCores.toFixed(2)}, load ${loadavg()[0]!.toFixed(1)}`,
          );
        }
      }
    }
    speed.after = hostSpeed();
    report(options, targets, scenarios, runs, loads, speed);
  } finally {
    await stopAll();
    rmSync(work, { recursive: true, force: true });
  }
}

function report(
  options: ReturnType<typeof parseArgs>['options'],
  targets: Target[],
  scenarios: Scenario[],
  runs: Map<string, Figures[]>,
  loads: number[],
  speed: { before: string; after: string },
): void {
  const m = machineInfo();
  const med = (key: string, pick: (f: Figures) => number) => median((runs.get(key) ?? []).map(pick));
  console.log(`Command: \`${['node dist/bench/ofrep-bulk.bench.js', ...process.argv.slice(2)].join(' ')}\``);
  console.log(
    `${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}; ${m.cores} cores, ${m.cpu}, node ${m.node}; node on CPU ${options.serverCpus} (1 front-end thread, ` +
      `1 eval worker), wrk -t1 -c${options.connections} on CPU ${options.wrkCpus}; ${options.rounds} rounds × ${options.seconds} s, medians; ` +
      `load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)} during the runs`,
  );
  console.log(`Host speed before the rounds: ${speed.before}; after: ${speed.after}\n`);
  console.log(
    '| target | request | req/s | p99 ms | node CPU, cores (main thread) | req/s per node CPU-second | wrk CPU, cores | non-2xx/3xx | Unleash Edge, req/s per CPU |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const t of targets) {
    for (const s of scenarios) {
      const key = `${t.name}|${s.label}`;
      const rps = med(key, (f) => f.rps);
      const perCpu = med(key, (f) => f.rps / f.nodeCores);
      console.log(
        `| ${t.name} | ${s.label} | ${Math.round(rps).toLocaleString('en-US')} | ${med(key, (f) => f.p99Ms).toFixed(2)} | ${t.pid === null ? '—' : `${med(key, (f) => f.nodeCores).toFixed(2)} (${med(key, (f) => f.mainCores).toFixed(2)})`} | ` +
          `${Number.isFinite(perCpu) ? Math.round(perCpu).toLocaleString('en-US') : '—'} | ${med(key, (f) => f.generatorCores).toFixed(2)} | ` +
          `${med(key, (f) => f.non2xx)} | ${s.revalidate ? '—' : kEdgePerCpu[s.project]!.toLocaleString('en-US')} |`,
      );
    }
  }
  // Ratios of req/s per node CPU-second where the node's CPU was measured: on a shared machine the node
  // gets a different share of its core from run to run, and req/s moves with that share.
  const perCpu = targets.every((t) => t.pid !== null);
  const unit = perCpu ? 'req/s per node CPU-second' : 'req/s';
  const rate = (t: Target, s: Scenario) => med(`${t.name}|${s.label}`, (f) => (perCpu ? f.rps / f.nodeCores : f.rps));
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  const [small200, small304, large200, large304] = scenarios as [Scenario, Scenario, Scenario, Scenario];
  console.log(`\n| target (${unit}) | 350 ÷ 5 flags (200) | 304 ÷ 200, 5 flags | 304 ÷ 200, 350 flags |`);
  console.log('|---|---:|---:|---:|');
  for (const t of targets) {
    console.log(
      `| ${t.name} | ${ratio(rate(t, large200), rate(t, small200))} | ${ratio(rate(t, small304), rate(t, small200))} | ${ratio(rate(t, large304), rate(t, large200))} |`,
    );
  }
  if (targets.length > 1) {
    const [first, ...rest] = targets as [Target, ...Target[]];
    console.log(`\n| request (${unit}) | ${rest.map((t) => `${t.name} ÷ ${first.name}`).join(' | ')} |`);
    console.log(`|---|${rest.map(() => '---:').join('|')}|`);
    for (const s of scenarios) console.log(`| ${s.label} | ${rest.map((t) => ratio(rate(t, s), rate(first, s))).join(' | ')} |`);
  }
}

process.on('SIGINT', () => {
  killAllSync();
  process.exit(130);
});
try {
  await main();
} catch (err) {
  console.error(err);
  killAllSync();
  process.exitCode = 1;
}

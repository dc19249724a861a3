// What an OFREP bulk answer costs the eval worker's code, in-process (issue 57, item 3): the thread CPU
// (user + system) per answer of POST /ofrep/v1/evaluate/flags for the 5- and 350-flag projects of
// bench/dataset.ts and a project of 350 kill switches (no answer a context changes), rotating the
// targeting key over 1,000 contexts, the answers written eight to a batch into one batch buffer as the
// worker writes them (OfrepEvaluator.evaluateBulk into a ResultWriter, the buffer kept when it grew, as
// the batch channel keeps a grown slot). No sockets, no main thread: thread CPU, so a figure holds on a
// busy machine where req/s per node CPU-second does not (the server-level figure is
// bench/ofrep-bulk.bench.ts's). Beside it, the same for Unleash's front-end API (issue 60: GET
// /api/frontend as unleash-proxy-client asks it, the same contexts as its query, the client key checked
// per request) and for the Evaluation API's project route (GET /v1/flags/project/{id}, the same contexts
// as its query), since all three answer every flag of a project.
//
// With `--baseline DIR` (another build's checkout, built), both builds are loaded into one process, each
// over its own copy of the data, and measured in alternation: `--rounds` short slices of about 10 ms each,
// the order swapped every round. The 2-core machine's speed moves by nearly two to one within seconds
// (bench/RESULTS.md, Running the benches), so builds measured a process apart read differences either
// way for the same code; slices side by side see the same host. The ratio printed is the
// median of the rounds' paired ratios, with its quartiles.
//
//   npm run build && node dist/bench/ofrep-bulk-cpu.bench.js [--rounds 40] [--baseline DIR]
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { generateBulkDataset } from './dataset.js';
import { machineInfo } from './environment.js';
import { kDist } from './locations.js';
import { median, percentile } from './stats.js';

/** The projects measured, with the answers of one slice of each (about 10 ms of CPU on the 2-core machine). */
const kProjects = [
  { label: '5 flags', slice: 2_000 },
  { label: '350 flags', slice: 96 },
  { label: '350 switches', slice: 240 },
] as const;
const kBatch = 8;
const kContexts = 1000;

/**
 * The routes measured: OFREP's bulk evaluation, Unleash's front-end API where the build has it, and the
 * Evaluation API's project route (GET /v1/flags/project/{id}), the three that list a project's flags.
 */
const kRoutes = ['ofrep', 'unleash', 'evaluation'] as const;
type MeasuredRoute = (typeof kRoutes)[number];

interface Build {
  name: string;
  dist: string;
}

/** One build's evaluators over its own copy of the data; `run` answers `answers` requests of a project. */
interface Measured {
  readonly name: string;
  run(route: MeasuredRoute, project: number, answers: number): void;
  readonly routes: ReadonlySet<MeasuredRoute>;
}

const bodies = Array.from({ length: kContexts }, (_, i) =>
  JSON.stringify({
    context: {
      targetingKey: `user-${i}`,
      userId: `user-${i}-7f3c`,
      plan: 'beta',
      country: 'NL',
      version: '2.3.1',
      email: `user-${i}@example.com`,
      tier: 'gold',
    },
  }),
);
// The same contexts as the Evaluation API's query.
const evalQueries = Array.from(
  { length: kContexts },
  (_, i) => `targetingKey=user-${i}&userId=user-${i}-7f3c&plan=beta&country=NL&version=2.3.1&email=user-${i}%40example.com&tier=gold`,
);
// The same contexts as unleash-proxy-client writes them into GET /api/frontend's query.
const queries = Array.from(
  { length: kContexts },
  (_, i) =>
    `appName=web&environment=default&sessionId=${i}&userId=user-${i}&properties%5Bplan%5D=beta&properties%5Bcountry%5D=NL` +
    `&properties%5Bversion%5D=2.3.1&properties%5Bemail%5D=user-${i}%40example.com&properties%5Btier%5D=gold`,
);

/** `build`'s evaluators over `dataDir`; `projects`: the data's, with their front-end API keys. */
async function load(build: Build, dataDir: string, projects: { id: string; frontendKey: string }[]): Promise<Measured> {
  const module = (path: string) => import(pathToFileURL(join(build.dist, path)).href);
  const { LmdbStore } = await module('src/store/lmdb-store.js');
  const { EvalEngine } = await module('src/evaluation/engine/engine.js');
  const { ResultWriter } = await module('src/evaluation/engine/protocol.js');
  const { OfrepEvaluator } = await module('src/ofrep/evaluate.js');
  // A baseline built before Unleash's front-end API has no such module: its rows stay empty.
  const frontendModule = await module('src/unleash/frontend-evaluator.js').catch(() => null);
  const store = LmdbStore.open(dataDir, { readOnly: true });
  const engine = new EvalEngine(store, () => Date.now());
  const ofrep = new OfrepEvaluator(engine);
  const frontend = frontendModule === null ? null : new frontendModule.FrontendEvaluator(engine);
  let buffer: ArrayBufferLike = new SharedArrayBuffer(256 * 1024);
  let next = 0;
  return {
    name: build.name,
    routes: new Set(frontend === null ? ['ofrep', 'evaluation'] : kRoutes),
    run(route, p, answers) {
      const project = projects[p]!;
      const extra = `q${project.frontendKey}\n`;
      for (let i = 0; i < answers; i += kBatch) {
        engine.beginBatch();
        const out = new ResultWriter(buffer, kBatch);
        for (let j = 0; j < kBatch; j++) {
          const k = next++ % kContexts;
          if (route === 'ofrep') ofrep.evaluateBulk(project.id, bodies[k]!, '', out);
          else if (route === 'evaluation') engine.evaluateProject(project.id, evalQueries[k]!, out);
          else frontend.evaluate('enabled', '', queries[k]!, extra, out);
        }
        const answered = out.finish();
        if (answered instanceof SharedArrayBuffer) buffer = answered;
      }
    },
  };
}

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** µs of CPU per answer of each slice, per build, and per round the later builds' over the first's. */
function measure(builds: Measured[], route: MeasuredRoute, p: number, rounds: number) {
  const { slice } = kProjects[p]!;
  for (const build of builds) build.run(route, p, slice * 5);
  const perSlice = builds.map(() => [] as number[]);
  const ratios = builds.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++) {
    const order = builds.map((_, b) => b);
    if (round % 2 === 1) order.reverse();
    const spent: number[] = [];
    for (const b of order) {
      const before = cpuMicros();
      builds[b]!.run(route, p, slice);
      spent[b] = (cpuMicros() - before) / slice;
    }
    for (let b = 0; b < builds.length; b++) {
      perSlice[b]!.push(spent[b]!);
      ratios[b]!.push(spent[b]! / spent[0]!);
    }
  }
  return { perSlice, ratios };
}

const spread = (values: number[], digits: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${median(sorted).toFixed(digits)} (${percentile(sorted, 25).toFixed(digits)}-${percentile(sorted, 75).toFixed(digits)})`;
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '40' }, baseline: { type: 'string' } } });
  const rounds = Number(values.rounds);
  if (!(rounds >= 2)) throw new Error('--rounds is at least 2');
  const work = mkdtempSync(join(tmpdir(), 'flagwire-bulk-cpu-'));
  try {
    const data = await generateBulkDataset(join(work, 'data'), [5, 350], [350]);
    const projects = data.projects.map(({ id, frontendKey }) => ({ id, frontendKey }));
    const builds: Build[] = [{ name: 'this build', dist: kDist }];
    if (values.baseline !== undefined) builds.unshift({ name: `baseline (${values.baseline})`, dist: join(values.baseline, 'dist') });
    // Each build its own copy: one LMDB environment per file in a process.
    const measured: Measured[] = [];
    for (const [b, build] of builds.entries()) {
      const dataDir = join(work, `copy-${b}`);
      cpSync(join(work, 'data'), dataDir, { recursive: true });
      measured.push(await load(build, dataDir, projects));
    }
    const load0 = loadavg()[0]!;
    const rows: string[] = [];
    for (const route of kRoutes) {
      const taking = measured.filter((m) => m.routes.has(route));
      if (taking.length === 0) continue;
      const results = kProjects.map((_, p) => measure(taking, route, p, rounds));
      for (const [b, build] of taking.entries())
        rows.push(`| ${build.name} | ${route} | ${results.map((r) => spread(r.perSlice[b]!, 1)).join(' | ')} |`);
      if (taking.length === 2)
        rows.push(`| this build ÷ baseline | ${route} | ${results.map((r) => spread(r.ratios[1]!, 3)).join(' | ')} |`);
    }
    console.log(
      `# ${JSON.stringify(machineInfo())}; ${rounds} rounds of slices, builds in turn in one process; load ${load0.toFixed(1)}-${loadavg()[0]!.toFixed(1)}`,
    );
    console.log(`| build | route | ${kProjects.map((p) => `µs of CPU per answer, ${p.label} (median, quartiles)`).join(' | ')} |`);
    console.log(`|---|---|${kProjects.map(() => '---:').join('|')}|`);
    for (const row of rows) console.log(row);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();

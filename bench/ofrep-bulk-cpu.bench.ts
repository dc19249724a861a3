// What an OFREP bulk answer costs the eval worker's code, in-process (issue 57, item 3): the thread CPU
// (user + system) per answer of POST /ofrep/v1/evaluate/flags for the 5- and 350-flag projects of
// bench/dataset.ts, rotating the targeting key over 1,000 contexts, the answers written eight to a batch
// into one batch buffer as the worker writes them (OfrepEvaluator.evaluateBulk into a ResultWriter,
// the buffer kept when it grew, as the batch channel keeps a grown slot). No sockets, no main thread:
// thread CPU, so a figure holds on a busy machine where req/s per node CPU-second does not (the
// server-level figure is bench/ofrep-bulk.bench.ts's). Beside it, the same for Unleash's front-end API
// (issue 60: GET /api/frontend as unleash-proxy-client asks it, the same contexts as its query, the
// client key checked per request), since both answer every flag of a project.
//
// With `--baseline DIR` (another build's checkout, built), that build is measured in turn with this one,
// each round a fresh process per build on its own copy of the data: the ratio is side by side.
//
//   npm run build && node dist/bench/ofrep-bulk-cpu.bench.js [--rounds 5] [--baseline DIR]
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { generateBulkDataset } from './dataset.js';
import { machineInfo } from './environment.js';
import { kDist } from './locations.js';
import { median } from './stats.js';

const kFlagCounts = [5, 350] as const;
const kBatch = 8;
const kContexts = 1000;
/** Answers per measurement: about a second of CPU for each project. */
const kAnswers = { 5: 200_000, 350: 6_000 } as const;

/** The routes measured: OFREP's bulk evaluation, and Unleash's front-end API where the build has it. */
const kRoutes = ['ofrep', 'unleash'] as const;
type MeasuredRoute = (typeof kRoutes)[number];

/** µs of thread CPU per answer, by route and flag count; a route the build lacks is absent. */
type ChildFigures = Partial<Record<MeasuredRoute, Record<number, number>>>;

interface ChildInput {
  dist: string;
  dataDir: string;
  projects: { id: string; frontendKey: string }[];
}

/** In a child process: `dist`'s evaluators over the data dir, µs per answer for each route and project. */
async function measureHere({ dist, dataDir, projects }: ChildInput): Promise<ChildFigures> {
  const load = (path: string) => import(pathToFileURL(join(dist, path)).href);
  const { LmdbStore } = await load('src/store/lmdb-store.js');
  const { EvalEngine } = await load('src/eval-engine/engine.js');
  const { ResultWriter } = await load('src/eval-engine/protocol.js');
  const { OfrepEvaluator } = await load('src/ofrep/evaluate.js');
  // A baseline built before Unleash's front-end API has no such module: its column stays empty.
  const frontendModule = await load('src/unleash/frontend-evaluator.js').catch(() => null);
  const store = LmdbStore.open(dataDir, { readOnly: true });
  const engine = new EvalEngine(store, () => Date.now());
  const ofrep = new OfrepEvaluator(engine);
  const frontend = frontendModule === null ? null : new frontendModule.FrontendEvaluator(engine);
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
  // The same contexts as unleash-proxy-client writes them into GET /api/frontend's query.
  const queries = Array.from(
    { length: kContexts },
    (_, i) =>
      `appName=web&environment=default&sessionId=${i}&userId=user-${i}&properties%5Bplan%5D=beta&properties%5Bcountry%5D=NL` +
      `&properties%5Bversion%5D=2.3.1&properties%5Bemail%5D=user-${i}%40example.com&properties%5Btier%5D=gold`,
  );
  let buffer: ArrayBufferLike = new SharedArrayBuffer(256 * 1024);
  const run = (route: MeasuredRoute, project: ChildInput['projects'][number], answers: number) => {
    const extra = `q${project.frontendKey}\n`;
    for (let i = 0; i < answers; i += kBatch) {
      engine.beginBatch();
      const out = new ResultWriter(buffer, kBatch);
      for (let j = 0; j < kBatch; j++) {
        if (route === 'ofrep') ofrep.evaluateBulk(project.id, bodies[(i + j) % kContexts]!, '', out);
        else frontend.evaluate('enabled', '', queries[(i + j) % kContexts]!, extra, out);
      }
      const answered = out.finish();
      if (answered instanceof SharedArrayBuffer) buffer = answered;
    }
  };
  const figures: ChildFigures = {};
  for (const route of kRoutes) {
    if (route === 'unleash' && frontend === null) continue;
    const byFlags: Record<number, number> = {};
    for (const [p, flags] of kFlagCounts.entries()) {
      const answers = kAnswers[flags];
      run(route, projects[p]!, answers / 4);
      const before = process.cpuUsage();
      run(route, projects[p]!, answers);
      const used = process.cpuUsage(before);
      byFlags[flags] = (used.user + used.system) / answers;
    }
    figures[route] = byFlags;
  }
  await store.close();
  return figures;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { rounds: { type: 'string', default: '5' }, baseline: { type: 'string' }, child: { type: 'string' } },
  });
  if (values.child !== undefined) {
    process.stdout.write(JSON.stringify(await measureHere(JSON.parse(values.child) as ChildInput)));
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'flagwire-bulk-cpu-'));
  try {
    const data = await generateBulkDataset(join(work, 'data'), kFlagCounts);
    const projects = data.projects.map(({ id, frontendKey }) => ({ id, frontendKey }));
    const builds = [{ name: 'this build', dist: kDist }];
    if (values.baseline !== undefined) builds.unshift({ name: `baseline (${values.baseline})`, dist: join(values.baseline, 'dist') });
    const results = new Map<string, ChildFigures[]>();
    const loads: number[] = [];
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const build of builds) {
        // Each its own copy: one LMDB environment per process, never two builds' on one file.
        const dataDir = join(work, `copy-${round}-${results.size}`);
        cpSync(join(work, 'data'), dataDir, { recursive: true });
        const out = execFileSync(
          process.execPath,
          [join(kDist, 'bench/ofrep-bulk-cpu.bench.js'), '--child', JSON.stringify({ dist: build.dist, dataDir, projects })],
          { encoding: 'utf8' },
        );
        rmSync(dataDir, { recursive: true, force: true });
        results.set(build.name, [...(results.get(build.name) ?? []), JSON.parse(out) as ChildFigures]);
        loads.push(loadavg()[0]!);
      }
    }
    console.log(
      `# ${JSON.stringify(machineInfo())}; ${values.rounds} rounds, builds in turn; load ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}`,
    );
    console.log('| build | route | µs of CPU per answer, 5 flags (median, min-max) | 350 flags |');
    console.log('|---|---|---:|---:|');
    const medians = new Map<string, Record<number, number>>();
    for (const [name, runs] of results) {
      for (const route of kRoutes) {
        const measured = runs.map((r) => r[route]).filter((f): f is Record<number, number> => f !== undefined);
        if (measured.length === 0) continue;
        const cells = kFlagCounts.map((flags) => {
          const values = measured.map((r) => r[flags]!);
          return `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)})`;
        });
        medians.set(`${name} ${route}`, Object.fromEntries(kFlagCounts.map((flags) => [flags, median(measured.map((r) => r[flags]!))])));
        console.log(`| ${name} | ${route} | ${cells.join(' | ')} |`);
      }
    }
    if (builds.length === 2) {
      const [base, mine] = builds.map((b) => medians.get(`${b.name} ofrep`)!);
      console.log(`| this build ÷ baseline | ofrep | ${kFlagCounts.map((f) => (mine![f]! / base![f]!).toFixed(2)).join(' | ')} |`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();

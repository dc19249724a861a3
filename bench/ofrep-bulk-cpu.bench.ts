// What an OFREP bulk answer costs the eval worker's code, in-process (issue 57, item 3): the thread CPU
// (user + system) per answer of POST /ofrep/v1/evaluate/flags for the 5- and 350-flag projects of
// bench/dataset.ts, rotating the targeting key over 1,000 contexts, the answers written eight to a batch
// into one batch buffer as the worker writes them (OfrepEvaluator.evaluateBulk into a ResultWriter,
// the buffer kept when it grew, as the batch channel keeps a grown slot). No sockets, no main thread:
// thread CPU, so a figure holds on a busy machine where req/s per node CPU-second does not (the
// server-level figure is bench/ofrep-bulk.bench.ts's).
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

interface ChildFigures {
  /** µs of thread CPU per answer, by flag count. */
  [flags: number]: number;
}

/** In a child process: `dist`'s OfrepEvaluator over the data dir, µs per answer for each project. */
async function measureHere(dist: string, dataDir: string, projectIds: string[]): Promise<ChildFigures> {
  const load = (path: string) => import(pathToFileURL(join(dist, path)).href);
  const { LmdbStore } = await load('src/store/lmdb-store.js');
  const { EvalEngine } = await load('src/eval-engine/engine.js');
  const { ResultWriter } = await load('src/eval-engine/protocol.js');
  const { OfrepEvaluator } = await load('src/ofrep/evaluate.js');
  const store = LmdbStore.open(dataDir, { readOnly: true });
  const engine = new EvalEngine(store, () => Date.now());
  const ofrep = new OfrepEvaluator(engine);
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
  let buffer: ArrayBufferLike = new SharedArrayBuffer(256 * 1024);
  const run = (projectId: string, answers: number) => {
    for (let i = 0; i < answers; i += kBatch) {
      engine.beginBatch();
      const out = new ResultWriter(buffer, kBatch);
      for (let j = 0; j < kBatch; j++) ofrep.evaluateBulk(projectId, bodies[(i + j) % kContexts]!, '', out);
      const answered = out.finish();
      if (answered instanceof SharedArrayBuffer) buffer = answered;
    }
  };
  const figures: ChildFigures = {};
  for (const [p, flags] of kFlagCounts.entries()) {
    const answers = kAnswers[flags];
    run(projectIds[p]!, answers / 4);
    const before = process.cpuUsage();
    run(projectIds[p]!, answers);
    const used = process.cpuUsage(before);
    figures[flags] = (used.user + used.system) / answers;
  }
  await store.close();
  return figures;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { rounds: { type: 'string', default: '5' }, baseline: { type: 'string' }, child: { type: 'string' } },
  });
  if (values.child !== undefined) {
    const { dist, dataDir, projectIds } = JSON.parse(values.child) as { dist: string; dataDir: string; projectIds: string[] };
    process.stdout.write(JSON.stringify(await measureHere(dist, dataDir, projectIds)));
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'flagwire-bulk-cpu-'));
  try {
    const data = await generateBulkDataset(join(work, 'data'), kFlagCounts);
    const projectIds = data.projects.map((p) => p.id);
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
          [join(kDist, 'bench/ofrep-bulk-cpu.bench.js'), '--child', JSON.stringify({ dist: build.dist, dataDir, projectIds })],
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
    console.log('| build | µs of CPU per answer, 5 flags (median, min-max) | 350 flags |');
    console.log('|---|---:|---:|');
    const medians = new Map<string, ChildFigures>();
    for (const [name, runs] of results) {
      const cells = kFlagCounts.map((flags) => {
        const values = runs.map((r) => r[flags]!);
        return `${median(values).toFixed(1)} (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)})`;
      });
      medians.set(name, Object.fromEntries(kFlagCounts.map((flags) => [flags, median(runs.map((r) => r[flags]!))])));
      console.log(`| ${name} | ${cells.join(' | ')} |`);
    }
    if (builds.length === 2) {
      const [base, mine] = builds.map((b) => medians.get(b.name)!);
      console.log(`| this build ÷ baseline | ${kFlagCounts.map((f) => (mine![f]! / base![f]!).toFixed(2)).join(' | ')} |`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();

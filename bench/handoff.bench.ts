// Hand-off micro-bench: the main thread ↔ eval worker round trip, without HTTP, by requests per batch.
//
//   production  EvalPool + the batch protocol: requests encoded into one buffer, copied into a slot
//               of the worker's batch channel, answered in place (src/evaluation/engine/batch-channel.ts, protocol.ts)
//   clone       the naive variant: string arrays in, arrays of statuses and body strings out,
//               structured-cloned both ways (bench/handoff-clone-worker.ts), same engine
//
// Batch size 0 is an empty task: the fixed cost of one hop (plus the worker's snapshot renewal).
// "main µs/req" is the main thread's CPU per request (encode, hop, decode: what uWS competes with);
// "worker µs/req" is the eval threads' CPU per request. Requests are scenario (a) of bench/scenarios.ts.
//
//   node dist/bench/handoff.bench.js [--seconds S]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Piscina } from 'piscina';
import { Clock } from '../src/clock.js';
import { EvalPool } from '../src/evaluation/engine/pool.js';
import { RequestWriter, ResultReader } from '../src/evaluation/engine/protocol.js';
import { routeNumbers } from '../src/all-routes.js';
import { evaluationApiSpec, kEvaluationApiRoutes } from '../src/evaluation/engine/evaluation-api-routes.js';
import { generateDataset } from './dataset.js';
import type { CloneAnswer, CloneTask } from './handoff-clone-worker.js';
import { cpuSample } from './processes.js';

const at = process.argv.indexOf('--seconds');
const seconds = at === -1 ? 1.5 : Number(process.argv[at + 1]);
const kSizes = [0, 1, 8, 64, 512];

const dir = mkdtempSync(join(tmpdir(), 'flagwire-handoff-'));
const data = await generateDataset(join(dir, 'data'));
const flagId = data.evalFlag.id;
const queries = Array.from({ length: 10_000 }, (_, k) => `targetingKey=user-${k}&plan=beta`);
let sink = 0;
const kNeverAborted = { aborted: false, addEventListener() {}, removeEventListener() {} };

interface Row {
  variant: string;
  workers: number;
  inFlight: number;
  size: number;
  requests: number;
  batches: number;
  seconds: number;
  mainCpu: number;
  workerCpu: number;
}

/** Runs `inFlight` lanes, each sending one batch after the other, for `seconds`. */
async function measure(variant: string, workers: number, inFlight: number, size: number, batch: () => Promise<void>): Promise<Row> {
  let stop = false;
  let batches = 0;
  const lane = async () => {
    while (!stop) {
      await batch();
      batches++;
    }
  };
  const cpu0 = cpuSample(process.pid);
  const t0 = performance.now();
  const timer = setTimeout(() => (stop = true), seconds * 1000);
  await Promise.all(Array.from({ length: inFlight }, lane));
  clearTimeout(timer);
  const elapsed = (performance.now() - t0) / 1000;
  const cpu1 = cpuSample(process.pid);
  const main = (cpu1.threads.get('main') ?? 0) - (cpu0.threads.get('main') ?? 0);
  return {
    variant,
    workers,
    inFlight,
    size,
    requests: batches * size,
    batches,
    seconds: elapsed,
    mainCpu: main,
    workerCpu: cpu1.total - cpu0.total - main,
  };
}

const kNumbers = routeNumbers(kEvaluationApiRoutes);
const kRouteFlag = kNumbers.evaluateFlag;

async function production(workers: number, inFlight: number): Promise<Row[]> {
  const pool = await EvalPool.start({
    dataDir: join(dir, 'data'),
    workers,
    clock: Clock.create(),
    log: pino({ level: 'silent' }),
    batchesPerWorker: Math.ceil(inFlight / workers),
    routeSets: [evaluationApiSpec(kNumbers)],
  });
  const rows: Row[] = [];
  try {
    for (const size of kSizes) {
      let k = 0;
      const free: ArrayBuffer[] = [];
      rows.push(
        await measure('production', workers, inFlight, size, async () => {
          // As the batcher does: encode into a reused buffer, hand it to the pool, read the answers in place.
          const writer = new RequestWriter(free.pop() ?? new ArrayBuffer(64 * 1024));
          for (let j = 0; j < size; j++) writer.add(kRouteFlag, flagId, queries[k++ % queries.length]!);
          await new Promise<void>((resolve, reject) => {
            pool.run({ buffer: writer.buffer, bytes: writer.bytesUsed, count: size }, kNeverAborted, (err, answers) => {
              if (answers === null) return reject(err);
              const reader = new ResultReader(answers);
              for (let j = 0; j < size; j++) sink += reader.status(j) + reader.body(j).length;
              resolve();
            });
          });
          free.push(writer.buffer);
        }),
      );
    }
  } finally {
    await pool.destroy();
  }
  return rows;
}

async function cloned(inFlight: number): Promise<Row[]> {
  const piscina = new Piscina<CloneTask, CloneAnswer>({
    filename: fileURLToPath(new URL('./handoff-clone-worker.js', import.meta.url)),
    minThreads: 1,
    maxThreads: 1,
    idleTimeout: 2 ** 31 - 1,
    workerData: { dataDir: join(dir, 'data') },
  });
  const rows: Row[] = [];
  try {
    await piscina.run({ ids: [], queries: [] });
    for (const size of kSizes) {
      let k = 0;
      rows.push(
        await measure('clone', 1, inFlight, size, async () => {
          const ids: string[] = [];
          const qs: string[] = [];
          for (let j = 0; j < size; j++) {
            ids.push(flagId);
            qs.push(queries[k++ % queries.length]!);
          }
          const answer = await piscina.run({ ids, queries: qs });
          for (let j = 0; j < size; j++) sink += answer.statuses[j]! + Buffer.byteLength(answer.bodies[j]!);
        }),
      );
    }
  } finally {
    await piscina.destroy();
  }
  return rows;
}

function print(rows: Row[]): void {
  console.log('variant     workers in-flight batch      req/s   batches/s  main µs/req  worker µs/req  main µs/batch');
  for (const r of rows) {
    const perReq = (cpu: number) => (r.requests === 0 ? '–' : ((cpu * 1e6) / r.requests).toFixed(2));
    console.log(
      [
        r.variant.padEnd(11),
        String(r.workers).padStart(7),
        String(r.inFlight).padStart(9),
        String(r.size).padStart(5),
        Math.round(r.requests / r.seconds)
          .toLocaleString('en')
          .padStart(10),
        Math.round(r.batches / r.seconds)
          .toLocaleString('en')
          .padStart(11),
        perReq(r.mainCpu).padStart(12),
        perReq(r.workerCpu).padStart(14),
        ((r.mainCpu * 1e6) / Math.max(1, r.batches)).toFixed(1).padStart(14),
      ].join(' '),
    );
  }
}

try {
  console.log(
    `hand-off: ${seconds} s per row, requests of scenario (a) (flag with audience + 50%, rotating targetingKey); CPU from /proc at 10 ms resolution`,
  );
  const rows: Row[] = [];
  rows.push(...(await production(1, 1)));
  rows.push(...(await production(1, 2)));
  rows.push(...(await production(2, 4)));
  rows.push(...(await cloned(2)));
  print(rows);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (sink === 42) console.log('');

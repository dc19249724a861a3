// Micro-benchmarks of the evaluation hot path, in one process (no HTTP): bucketing, query parsing,
// the engine on a real store, and a whole batch through the protocol. Medians of 5 runs.
// Run: npx tsc -p . && node dist/bench/eval.bench.js
import { rmSync } from 'node:fs';
import { bucket } from '../src/evaluation/engine/bucket.js';
import { EvalEngine } from '../src/evaluation/engine/engine.js';
import { DecodedRequests, RequestWriter, ResultReader, ResultWriter } from '../src/evaluation/engine/protocol.js';
import { EvalQuery } from '../src/evaluation/engine/query.js';
import { routeNumbers } from '../src/all-routes.js';
import { kEvaluationApiRoutes } from '../src/evaluation/engine/evaluation-api-routes.js';
import { buildEvalWorld } from '../test/evaluation/engine/eval-world.js';

const kRouteFlag = routeNumbers(kEvaluationApiRoutes).evaluateFlag;

function measure(name: string, iterations: number, fn: (i: number) => void): void {
  const rates: number[] = [];
  for (let run = 0; run < 5; run++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) fn(i);
    const ns = Number(process.hrtime.bigint() - start);
    rates.push(iterations / (ns / 1e9));
  }
  rates.sort((a, b) => a - b);
  const median = rates[2]!;
  console.log(
    `${name.padEnd(52)} ${Math.round(median).toLocaleString('en').padStart(13)} ops/s  ${(1e9 / median).toFixed(0).padStart(6)} ns/op`,
  );
}

const keys = Array.from({ length: 1024 }, (_, i) => `user-${i}-7f3c2a9e`);
let sink = 0;

measure('bucket(flagId, key)', 2_000_000, (i) => {
  sink += bucket('flg_cHQLsDzwqQaBEiBh', keys[i & 1023]!);
});
measure('JSON-free baseline: string concat + Buffer.from', 2_000_000, (i) => {
  sink += Buffer.from(`flg_cHQLsDzwqQaBEiBh:${keys[i & 1023]!}`).length;
});

const query = new EvalQuery();
const queries = keys.map((k) => `targetingKey=${k}&plan=beta&country=NL`);
measure('EvalQuery.parse (targetingKey + 2 attributes)', 1_000_000, (i) => {
  query.parse(queries[i & 1023]!);
});
measure('URLSearchParams baseline (same query, 3 gets)', 1_000_000, (i) => {
  const p = new URLSearchParams(queries[i & 1023]!);
  sink += (p.get('targetingKey') ?? '').length + (p.get('plan') ?? '').length + (p.get('cohort') ?? '').length;
});

const world = buildEvalWorld();
const engine = new EvalEngine(world.store, () => Date.now());
engine.beginBatch();
const scratch = new ArrayBuffer(1 << 20);
const flagQueries = keys.map((k) => `targetingKey=${k}`);
measure('engine.evaluateFlag (cached flag, 50%, targetingKey)', 1_000_000, (i) => {
  if ((i & 1023) === 0) engine.beginBatch();
  const out = new ResultWriter(scratch, 1);
  engine.evaluateFlag(world.ids.half, flagQueries[i & 1023]!, out);
});
measure('engine.evaluateFlag (audience + targetingKey)', 1_000_000, (i) => {
  if ((i & 1023) === 0) engine.beginBatch();
  const out = new ResultWriter(scratch, 1);
  engine.evaluateFlag(world.ids.audHalf, queries[i & 1023]!, out);
});
measure('engine.evaluateProject (6 flags)', 200_000, (i) => {
  if ((i & 1023) === 0) engine.beginBatch();
  const out = new ResultWriter(scratch, 1);
  engine.evaluateProject(world.ids.single, queries[i & 1023]!, out);
});

// A whole batch of 64 as the main thread and a worker see it (minus the thread hop).
const decoded = new DecodedRequests();
measure('batch of 64: encode, decode, evaluate, read answers (per batch)', 20_000, () => {
  const writer = new RequestWriter(new ArrayBuffer(64 * 1024));
  for (let j = 0; j < 64; j++) writer.add(kRouteFlag, world.ids.half, flagQueries[j]!);
  decoded.readRequests(writer.buffer, 64);
  engine.beginBatch();
  const out = new ResultWriter(writer.buffer, 64);
  for (let j = 0; j < 64; j++) engine.evaluateFlag(decoded.ids[j]!, decoded.queries[j]!, out);
  const reader = new ResultReader(out.finish());
  for (let j = 0; j < 64; j++) sink += reader.body(j).length;
});

await world.store.close();
rmSync(world.dataDir, { recursive: true, force: true });
if (sink === 42) console.log('');

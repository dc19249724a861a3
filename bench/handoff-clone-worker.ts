// Bench-only eval worker for the naive hand-off that bench/handoff.bench.ts compares against: requests
// arrive as structured-cloned string arrays and answers go back as arrays of statuses and body strings
// (what "piscina.run with plain objects" gives), evaluated by the same engine as production.
import { workerData } from 'node:worker_threads';
import { Clock } from '../src/clock.js';
import { EvalEngine } from '../src/evaluation/engine/engine.js';
import { ResultReader, ResultWriter } from '../src/evaluation/engine/protocol.js';
import { LmdbStore } from '../src/store/lmdb-store.js';

export interface CloneTask {
  ids: string[];
  queries: string[];
}

export interface CloneAnswer {
  statuses: number[];
  bodies: string[];
}

const { dataDir } = workerData as { dataDir: string };
const store = LmdbStore.open(dataDir, { readOnly: true });
const clock = Clock.create();
const engine = new EvalEngine(store, () => clock.now());
let scratch = new ArrayBuffer(64 * 1024);

export default function evaluateCloned(task: CloneTask): CloneAnswer {
  engine.beginBatch();
  const count = task.ids.length;
  const out = new ResultWriter(scratch, count);
  for (let i = 0; i < count; i++) engine.evaluateFlag(task.ids[i]!, task.queries[i]!, out);
  // Over an ArrayBuffer, the answers come back in one (the same, or a grown one).
  scratch = out.finish() as ArrayBuffer;
  const reader = new ResultReader(scratch);
  const statuses: number[] = [];
  const bodies: string[] = [];
  for (let i = 0; i < count; i++) {
    statuses.push(reader.status(i));
    bodies.push(reader.bodyText(i));
  }
  return { statuses, bodies };
}

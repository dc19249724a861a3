// Piscina worker entry: opens the LMDB environment read-only (memory-mapped; readers never block the
// writer), loads each evaluation route set's worker module (routes.ts), then serves its batch channel
// (batch-channel.ts): one batch at a time, for the worker's life. See protocol.ts for the batch format
// and engine.ts for the freshness rule.
import { parentPort, workerData } from 'node:worker_threads';
import { Clock } from '../../clock.js';
import { LmdbStore } from '../../store/lmdb-store.js';
import { byRoute, type RouteEvaluator, type EvalRoutesSpec, type RouteEvaluatorFactory } from './routes.js';
import { EvalEngine } from './engine.js';
import { type ChannelShared, serveChannel, SlotKind } from './batch-channel.js';
import { DecodedRequests, encodeUsage, ResultWriter } from './protocol.js';
import { startBatchBudget } from '../../targeting/work-budget.js';

export interface EvalWorkerData {
  dataDir: string;
  /** The server's Clock buffer: trial ends are judged by the same (test-adjustable) time everywhere. */
  clock: SharedArrayBuffer;
  /** The evaluation route sets whose requests the batches carry (pool.ts sends their specs; functions cannot cross threads). */
  routeSets: EvalRoutesSpec[];
  /**
   * Test hook for crash recovery (FLAGWIRE_TEST_EVAL_CRASH_ID): a batch holding a request for this
   * flag id ends the worker thread, as a native fault would. Null in normal operation.
   */
  crashFlagId: string | null;
  /**
   * Test hook for a stuck worker (FLAGWIRE_TEST_EVAL_HANG_ID): a batch holding a request for this flag
   * id never finishes, as a native call that never returns would. Null in normal operation.
   */
  hangFlagId: string | null;
}

const start = workerData as EvalWorkerData;
// Every route set's module is requested at once, before the store opens, not one after the other: a
// replaced worker (after a crash or a stuck batch) is ready sooner.
const evaluatorModules = Promise.all(
  start.routeSets.map((routeSet) => import(routeSet.workerModule) as Promise<{ default: RouteEvaluatorFactory }>),
);
// Evaluation reads the node's local LMDB copy, whatever the system of record (src/store/open-store.ts).
const store = LmdbStore.open(start.dataDir, { readOnly: true });
const clock = new Clock(start.clock);
const engine = new EvalEngine(store, () => clock.now());
// Every route set evaluates over this one engine: same compiled flags, same caches, same freshness rule.
// Both tables are indexed by route number, so choosing a request's route set is one array read; each
// evaluator is built once per worker, nothing per request. (Two route sets claiming one route make this
// module throw, and so the pool's start fail: byRoute.)
const evaluatorOf = new Map<EvalRoutesSpec, RouteEvaluator>();
for (const [i, module] of (await evaluatorModules).entries())
  evaluatorOf.set(start.routeSets[i]!, module.default(engine, start.routeSets[i]!.routes));
const evaluators = byRoute(start.routeSets, (routeSet) => evaluatorOf.get(routeSet)!);
const errorBodies = byRoute(start.routeSets, (routeSet) => routeSet.internalErrorBody);
// Reused for every batch: decoding allocates the strings and nothing else.
const requests = new DecodedRequests();

/** The worker's one Piscina task (pool.ts): serves its batch channel until the pool stops it. */
export default function serve(shared: ChannelShared): Promise<void> {
  return serveChannel(shared, handleSlot);
}

function handleSlot(kind: SlotKind, buffer: ArrayBufferLike, count: number): ArrayBufferLike {
  if (kind === SlotKind.Probe) {
    // Readiness probe (pool.ts): this worker can renew its snapshot and read the store.
    engine.beginBatch();
    store.resetReadTxn();
    return buffer;
  }
  // Usage (usage.ts): the counts since this worker was last asked; nothing is read from the store.
  if (kind === SlotKind.Usage) return encodeUsage(engine.takeUsage());
  return evaluateBatch(buffer, count);
}

/**
 * The stuck-worker hook's hang: blocked on a word no one ever notifies, until the pool terminates the
 * thread (a termination ends the wait as it would end a loop). Blocked, not spinning: a spin held a core
 * for the whole batch timeout (5 s), twice per run of test/evaluation/engine/stuck-worker.test.ts, on a 2-core machine.
 */
function hangForever(): never {
  const word = new Int32Array(new SharedArrayBuffer(4));
  for (;;) Atomics.wait(word, 0, 0);
}

function evaluateBatch(buffer: ArrayBufferLike, count: number): ArrayBufferLike {
  requests.readRequests(buffer, count);
  if (start.crashFlagId !== null) for (let i = 0; i < requests.count; i++) if (requests.ids[i] === start.crashFlagId) process.exit(70);
  if (start.hangFlagId !== null) for (let i = 0; i < requests.count; i++) if (requests.ids[i] === start.hangFlagId) hangForever();
  // Renew the read snapshot before answering anything (engine.ts: freshness rule).
  engine.beginBatch();
  // The batch's rules may do this much work together (src/targeting/work-budget.ts): never a stuck batch.
  startBatchBudget();
  // The answers overwrite the requests in the same buffer (already decoded above).
  // The batch's revision goes back once in the buffer's header, for the main thread to name in every answer.
  const out = new ResultWriter(buffer, requests.count, engine.revision);
  const { routes, ids, queries, extras } = requests;
  let failure: unknown = null;
  for (let i = 0; i < requests.count; i++) {
    try {
      const route = routes[i]!;
      evaluators[route]!(route, ids[i]!, queries[i]!, extras[i]!, out);
    } catch (err) {
      // One request's failure (an unreadable record) is that request's 500; the others still get answers.
      failure ??= err;
      out.put(500, errorBodies[routes[i]!]!);
    }
  }
  // Release the snapshot until the next batch: an idle worker waits on its channel, and an open read
  // snapshot there keeps LMDB from reusing freed pages, so the data file would grow with every write
  // instead of reusing the pages each write frees.
  store.resetReadTxn();
  // The pool logs it (Piscina emits a worker's own messages as 'message'); once per batch at most.
  if (failure !== null)
    parentPort!.postMessage({ evalError: failure instanceof Error ? (failure.stack ?? failure.message) : String(failure) });
  return out.finish();
}

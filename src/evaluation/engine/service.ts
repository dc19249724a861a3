// The evaluation service: one batcher, one pool of eval workers and one engine per worker, behind
// every evaluation route set it is given (routes.ts; the server's start-up gives it the Evaluation API's,
// evaluation-api-routes.ts, and OFREP's, src/ofrep/routes.ts). The route sets share one queue bound, one set of workers
// and one set of caches. The main thread only routes: each route set's handlers copy the request into the
// current batch (batcher.ts) and it is answered when the batch comes back from the workers
// (worker.ts, engine.ts), which parse, read the store and evaluate.
import type { TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { kTestSwitches } from '../../test-switches.js';
import type { RouteGroup } from '../../http/http.js';
import type { InFlight } from '../../http/in-flight.js';
import type { RevisionWaiter } from '../../http/revisions.js';
import { EvalBatcher, type EvalMetrics } from './batcher.js';
import type { EvalRoutes } from './routes.js';
import { EvalPool } from './pool.js';
import { kMaxSlotBytes } from './batch-channel.js';
import { type UsageDestination, type UsageSink, UsageRecorder } from './usage.js';

export interface EvaluationOptions {
  config: Readonly<Config>;
  log: Logger;
  inFlight: InFlight;
  clock: Clock;
  /** The evaluation route sets, in the order their routes are registered. */
  routeSets: readonly EvalRoutes[];
  /** Null when metrics are off. */
  metrics?: EvalMetrics | null;
  /** Where the flag usage counted by the workers goes, once a minute (usage.ts): this node's writer, or a relay's upstream. */
  usage: UsageDestination;
  /** Where requests with a Flagwire-Min-Revision wait (the front end's, shared with the Management API). */
  revisions: RevisionWaiter;
}

/** The evaluation service: its routes, plus what readiness and metrics read. */
export interface Evaluation extends RouteGroup, UsageSink {
  /** Readiness probe: every worker answers a probe task within `timeoutMs` (pool.ts). */
  probe(timeoutMs: number): Promise<{ answered: number; workers: number }>;
  /** Accepted, unanswered requests (every evaluation route set's). */
  readonly pendingRequests: number;
  /** Batches on workers or waiting for one. */
  readonly tasksInFlight: number;
  /** Batches waiting for a worker's free slot (pool.ts). */
  readonly poolQueueSize: number;
  readonly workers: number;
  /** Collects the workers' evaluation counts and writes them now (the test hook; otherwise once a minute). */
  flushUsage(): Promise<void>;
}

/** Requests per batch at most. */
const kMaxBatchRequests = 1024;
/** Accepted, unanswered requests at most; beyond, 503 at once (bounded queue). */
const kMaxPendingRequests = 32 * 1024;
/** Request bytes per batch; past it the batch is closed (OFREP bodies may be up to 1 MiB each). */
const kMaxBatchBytes = 1024 * 1024;
/** Request bytes accepted and unanswered at most; beyond, 503 at once. */
const kMaxPendingBytes = 64 * 1024 * 1024;
/** A batch takes micro- to milliseconds; one out this long has a stuck worker: its requests get 500. */
const kTaskTimeoutMs = 5000;
/** How long shutdown waits for queued batches before stopping the workers (their requests then get 500). */
const kCloseWaitMs = 2000;

export async function createEvaluation(options: EvaluationOptions): Promise<Evaluation> {
  const { config, log, inFlight, clock, routeSets } = options;
  const metrics = options.metrics ?? null;
  // Two batches per worker: while the main thread answers one, the worker already evaluates the next.
  const batchesPerWorker = 2;
  const maxTasksInFlight = config.evalWorkers * batchesPerWorker;
  const pool = await EvalPool.start({
    dataDir: config.dataDir,
    workers: config.evalWorkers,
    clock,
    log,
    routeSets,
    batchesPerWorker,
    // Fault injection for the crash and stuck-worker tests (null unless the test hooks are on).
    crashFlagId: kTestSwitches.evalCrashFlagId,
    hangFlagId: kTestSwitches.evalHangFlagId,
  });
  const batcher = new EvalBatcher({
    runner: pool,
    inFlight,
    maxTasksInFlight,
    maxBatchRequests: kMaxBatchRequests,
    maxPendingRequests: kMaxPendingRequests,
    maxBatchBytes: kMaxBatchBytes,
    maxBatchAnswerBytes: kMaxSlotBytes,
    maxPendingBytes: kMaxPendingBytes,
    taskTimeoutMs: kTaskTimeoutMs,
    onBatchError: (err, requests) => log.error({ err, requests }, 'evaluation batch failed; its requests were answered 500'),
    metrics,
    routeSets,
    revisions: options.revisions,
  });
  const usage = new UsageRecorder(pool, options.usage, log);
  usage.start();

  return {
    register(app: TemplatedApp) {
      for (const routeSet of routeSets) routeSet.register(app, batcher);
    },
    probe: (timeoutMs) => pool.probe(timeoutMs),
    get pendingRequests() {
      return batcher.size;
    },
    get tasksInFlight() {
      return batcher.tasksInFlight;
    },
    get poolQueueSize() {
      return pool.queueSize;
    },
    get workers() {
      return pool.threads;
    },
    flushUsage: () => usage.flush(),
    addUsage: (counts) => usage.add(counts),
    async close() {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([batcher.close(), new Promise((resolve) => (timer = setTimeout(resolve, kCloseWaitMs)))]);
      clearTimeout(timer);
      // After the last batches, before the workers stop: their counts are written, not lost.
      await usage.stop();
      await pool.destroy();
    },
  };
}

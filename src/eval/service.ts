// The Evaluation API (spec: Evaluation API; design §1-§2): GET /v1/flags/{flag_id} and
// GET /v1/flags/project/{project_id}. No credentials. The main thread only routes: it copies the id and
// the raw query string into the current batch (batcher.ts) and answers when the batch comes back from
// the eval workers (worker.ts, engine.ts), which parse, read the store and evaluate.
//
// OFREP (src/ofrep) is a second front door onto the same batcher, pool and engine: its routes are
// registered here too, so both doors share one queue bound, one set of workers and one set of caches.
import type { HttpRequest, TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { BodyBudget } from '../http/body.js';
import { send, trackAbort, type PendingResponse, type RouteGroup } from '../http/http.js';
import type { InFlight } from '../http/in-flight.js';
import type { Metrics } from '../metrics/metrics.js';
import { registerOfrepRoutes } from '../ofrep/routes.js';
import { EvalBatcher } from './batcher.js';
import { kOverloadedBody } from './bodies.js';
import { EvalPool } from './pool.js';
import { kRouteFlag, kRouteProject, type Route } from './protocol.js';

export interface EvaluationOptions {
  config: Readonly<Config>;
  log: Logger;
  inFlight: InFlight;
  clock: Clock;
  /** The process's request-body budget (OFREP bodies read from it). */
  bodies: BodyBudget;
  /** Null when metrics are off. */
  metrics?: Metrics | null;
}

/** The evaluation service: its routes, plus what readiness and metrics read. */
export interface Evaluation extends RouteGroup {
  /** Readiness probe: every worker answers a probe task within `timeoutMs` (pool.ts). */
  probe(timeoutMs: number): Promise<{ answered: number; workers: number }>;
  /** Accepted, unanswered requests (both front doors). */
  readonly pendingRequests: number;
  /** Batches on workers or in Piscina's queue. */
  readonly tasksInFlight: number;
  /** Tasks waiting in Piscina's queue. */
  readonly poolQueueSize: number;
  readonly workers: number;
}

/** Requests per batch at most (one Piscina task). */
const kMaxBatchRequests = 1024;
/** Accepted, unanswered requests at most; beyond, 503 at once (bounded queue). */
const kMaxPendingRequests = 32 * 1024;
/** Request bytes per batch; past it the batch is closed (OFREP bodies may be up to 1 MiB each). */
const kMaxBatchBytes = 1024 * 1024;
/** Request bytes accepted and unanswered at most; beyond, 503 at once. */
const kMaxPendingBytes = 64 * 1024 * 1024;
/** A batch takes micro- to milliseconds; one out this long has a stuck worker: its requests get 500. */
const kTaskTimeoutMs = 5000;
const kRetryAfter = [['Retry-After', '1']] as const;
/** How long shutdown waits for queued batches before stopping the workers (their requests then get 500). */
const kCloseWaitMs = 2000;
const kTestHooks = process.env.FLAGWIRE_TEST_HOOKS === '1';

export async function createEvaluation(options: EvaluationOptions): Promise<Evaluation> {
  const { config, log, inFlight, clock } = options;
  const metrics = options.metrics ?? null;
  // Two batches per worker: while the main thread answers one, the worker already evaluates the next.
  const maxTasksInFlight = config.evalWorkers * 2;
  const pool = await EvalPool.start({
    dataDir: config.dataDir,
    workers: config.evalWorkers,
    clock,
    log,
    maxQueue: maxTasksInFlight,
    // Fault injection for the crash and stuck-worker tests: only with the test hooks switched on.
    crashFlagId: kTestHooks ? process.env.FLAGWIRE_TEST_EVAL_CRASH_ID || null : null,
    hangFlagId: kTestHooks ? process.env.FLAGWIRE_TEST_EVAL_HANG_ID || null : null,
  });
  const batcher = new EvalBatcher({
    runner: pool,
    inFlight,
    maxTasksInFlight,
    maxBatchRequests: kMaxBatchRequests,
    maxPendingRequests: kMaxPendingRequests,
    maxBatchBytes: kMaxBatchBytes,
    maxPendingBytes: kMaxPendingBytes,
    taskTimeoutMs: kTaskTimeoutMs,
    onBatchError: (err, requests) => log.error({ err, requests }, 'evaluation batch failed; its requests were answered 500'),
    metrics,
  });

  // Read everything off `req` first (it is stack-allocated), register onAborted, then hand off.
  // Per request the main thread allocates only what uWS makes unavoidable: the id and query strings,
  // and the onAborted callback (uWS calls it without arguments, so it must close over `res`). The
  // strings are copied into the batch buffer at once; nothing is parsed here.
  const handle = (res: PendingResponse, req: HttpRequest, route: Route): void => {
    const id = req.getParameter(0) ?? '';
    const query = req.getQuery() ?? '';
    trackAbort(res);
    if (!batcher.add(res, route, id, query)) {
      metrics?.request(route, 503);
      send(res, 503, kOverloadedBody, 'application/json', kRetryAfter);
    }
  };

  return {
    register(app: TemplatedApp) {
      app.get('/v1/flags/project/:project_id', (res, req) => handle(res, req, kRouteProject));
      app.get('/v1/flags/:flag_id', (res, req) => handle(res, req, kRouteFlag));
      registerOfrepRoutes(app, (res, route, id, body, extra) => batcher.add(res, route, id, body, extra), options.bodies, metrics);
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
    async close() {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([batcher.close(), new Promise((resolve) => (timer = setTimeout(resolve, kCloseWaitMs)))]);
      clearTimeout(timer);
      await pool.destroy();
    },
  };
}

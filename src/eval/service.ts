// The Evaluation API (spec: Evaluation API; design §1-§2): GET /v1/flags/{flag_id} and
// GET /v1/flags/project/{project_id}. No credentials. The main thread only routes: it copies the id and
// the raw query string into the current batch (batcher.ts) and answers when the batch comes back from
// the eval workers (worker.ts, engine.ts), which parse, read the store and evaluate.
import type { HttpRequest, TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { send, trackAbort, type PendingResponse, type RouteGroup } from '../http/http.js';
import type { InFlight } from '../http/in-flight.js';
import { EvalBatcher } from './batcher.js';
import { kOverloadedBody } from './bodies.js';
import { EvalPool } from './pool.js';
import { kRouteFlag, kRouteProject, type Route } from './protocol.js';

export interface EvaluationOptions {
  config: Readonly<Config>;
  log: Logger;
  inFlight: InFlight;
  clock: Clock;
}

/** Requests per batch at most (one Piscina task). */
const kMaxBatchRequests = 1024;
/** Accepted, unanswered requests at most; beyond, 503 at once (bounded queue). */
const kMaxPendingRequests = 32 * 1024;
/** A batch takes micro- to milliseconds; one out this long has a stuck worker: its requests get 500. */
const kTaskTimeoutMs = 5000;
const kRetryAfter = [['Retry-After', '1']] as const;
/** How long shutdown waits for queued batches before stopping the workers (their requests then get 500). */
const kCloseWaitMs = 2000;

export async function createEvaluation(options: EvaluationOptions): Promise<RouteGroup> {
  const { config, log, inFlight, clock } = options;
  // Two batches per worker: while the main thread answers one, the worker already evaluates the next.
  const maxTasksInFlight = config.evalWorkers * 2;
  const pool = await EvalPool.start({
    dataDir: config.dataDir,
    workers: config.evalWorkers,
    clock,
    log,
    maxQueue: maxTasksInFlight,
    crashFlagId: process.env.FLAGWIRE_TEST_EVAL_CRASH_ID || null,
  });
  const batcher = new EvalBatcher({
    runner: pool,
    inFlight,
    maxTasksInFlight,
    maxBatchRequests: kMaxBatchRequests,
    maxPendingRequests: kMaxPendingRequests,
    taskTimeoutMs: kTaskTimeoutMs,
    onBatchError: (err, requests) => log.error({ err, requests }, 'evaluation batch failed; its requests were answered 500'),
  });

  // Read everything off `req` first (it is stack-allocated), register onAborted, then hand off.
  // Per request the main thread allocates only what uWS makes unavoidable: the id and query strings,
  // and the onAborted callback (uWS calls it without arguments, so it must close over `res`). The
  // strings are copied into the batch buffer at once; nothing is parsed here.
  const handle = (res: PendingResponse, req: HttpRequest, route: Route): void => {
    const id = req.getParameter(0) ?? '';
    const query = req.getQuery() ?? '';
    trackAbort(res);
    if (!batcher.add(res, route, id, query)) send(res, 503, kOverloadedBody, 'application/json', kRetryAfter);
  };

  return {
    register(app: TemplatedApp) {
      app.get('/v1/flags/project/:project_id', (res, req) => handle(res, req, kRouteProject));
      app.get('/v1/flags/:flag_id', (res, req) => handle(res, req, kRouteFlag));
    },
    async close() {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([batcher.close(), new Promise((resolve) => (timer = setTimeout(resolve, kCloseWaitMs)))]);
      clearTimeout(timer);
      await pool.destroy();
    },
  };
}

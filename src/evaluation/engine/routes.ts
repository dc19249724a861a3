// An evaluation route set: HTTP routes whose requests the eval workers answer, in the same
// batches, with the same engine and caches as every other route set's (service.ts). Evaluation knows a
// route set only through this contract; the server's start-up gives createEvaluation the list (the
// Evaluation API's, evaluation-api-routes.ts; OFREP's, src/ofrep/routes.ts; Unleash's front-end API's,
// src/unleash/hosted-routes.ts), each made with its routes' numbers (src/all-routes.ts derives them from
// the declarations). A new route set is two modules, its routes declared beside them and listed as a
// capability's hostedRoutes (the evaluation capability's, src/evaluation/capability.ts, or the capability
// whose protocol it speaks, as src/unleash/capability.ts lists its front-end API):
//
//   main thread   a EvalRoutes value: its route numbers, its worker module, its 500 body, and
//                 register(), whose handlers read each request off uWS and put it on the queue
//   eval worker   its worker module: the default export (a RouteEvaluatorFactory) builds, once per
//                 worker, the function that evaluates one request of its routes into the answers
//
// A function cannot be sent to a worker thread, so a worker learns a route set by module: the pool sends
// each route set's EvalRoutesSpec (plain data) and every worker imports the modules they name (worker.ts).
// Both threads find a request's route set by its route number in an array: one read per request.
import type { TemplatedApp } from 'uWebSockets.js';
import type { PendingResponse } from '../../http/http.js';
import type { EvalEngine } from './engine.js';
import type { ResultWriter, Route } from './protocol.js';

/** What evaluation knows of a route set on both threads: plain data, structured-cloned to every worker. */
export interface EvalRoutesSpec {
  /** Its route numbers, given when it is made (src/all-routes.ts derives them; each fits the batch's u8). */
  readonly routes: readonly Route[];
  /** URL of its worker module, whose default export is a RouteEvaluatorFactory. */
  readonly workerModule: string;
  /** The 500 body its requests get when their evaluation throws or their batch is lost (a dead worker). */
  readonly internalErrorBody: Uint8Array;
  /**
   * The 503 body (Retry-After: 1) its requests get when their batch did not come back within the
   * batcher's timeout (a stuck worker): the main thread answers it (batcher.ts).
   */
  readonly batchTimedOutBody: Uint8Array;
  /**
   * The 503 body its requests get when this node's copy does not reach their Flagwire-Min-Revision within
   * the wait (src/http/revisions.ts): the main thread answers it (batcher.ts).
   */
  readonly revisionNotReachedBody: Uint8Array;
}

/** Where a route set's handlers put requests (the batcher). */
export interface EvalQueue {
  /**
   * Queues a request whose onAborted is already attached; `id`, `query` and `extra` reach the route set's
   * evaluator as they are (protocol.ts). False when the queue is full or the server is stopping: the
   * route set answers it (503) at once. `minRevision`: its Flagwire-Min-Revision (src/http/revisions.ts,
   * minRevisionOf; 0 when absent): it is evaluated once this node's copy has that revision, or answered
   * 503 (revisionNotReachedBody) when the wait runs out.
   */
  add(res: PendingResponse, route: Route, id: string, query: string | Uint8Array, extra?: string, minRevision?: number): boolean;
  /**
   * Answers at once what the route set refuses itself (a bad header, 413, a full queue), with the
   * headers every evaluation answer has (Flagwire-Revision: the newest this front end knows).
   */
  refuse(res: PendingResponse, status: number, body: Uint8Array, retryAfter?: boolean, closeConnection?: boolean): void;
}

/** Main thread: an evaluation route set, given to createEvaluation by the server's start-up. */
export interface EvalRoutes extends EvalRoutesSpec {
  /** Registers its HTTP routes; their handlers put each request on `queue`. */
  register(app: TemplatedApp, queue: EvalQueue): void;
}

/** Worker: evaluates one request of the route set's routes, writing exactly one answer into `out`. */
export type RouteEvaluator = (route: Route, id: string, query: string, extra: string, out: ResultWriter) => void;

/**
 * A route set's worker module's default export: called once per worker, with that worker's engine.
 * `routes`: the route set's route numbers, in the order its EvalRoutesSpec lists them. Given here, not
 * imported from the route table, so a worker loads no more of the server than evaluation needs.
 */
export type RouteEvaluatorFactory = (engine: EvalEngine, routes: readonly Route[]) => RouteEvaluator;

/** `pick(route set)` at each of the route set's route numbers. Throws when two route sets claim one route. */
export function byRoute<T>(routeSets: readonly EvalRoutesSpec[], pick: (routeSet: EvalRoutesSpec) => T): T[] {
  const table: T[] = [];
  const claimed = new Set<Route>();
  for (const routeSet of routeSets) {
    for (const route of routeSet.routes) {
      if (!Number.isInteger(route) || route < 0 || route > 255)
        throw new Error(`evaluation route set route ${route} does not fit the batch's u8 (protocol.ts)`);
      if (claimed.has(route)) throw new Error(`two evaluation route sets claim route ${route}`);
      claimed.add(route);
      table[route] = pick(routeSet);
    }
  }
  return table;
}

// The service features beyond the spec's routes, built once at start-up: metrics (and the gauges they
// read at scrape time), readiness, and the change stream. start.ts wires them; app.ts registers them.
import type { TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import type { TestSwitches } from '../test-switches.js';
import type { Evaluation } from '../evaluation/engine/service.js';
import type { BodyBudgets } from '../http/body.js';
import type { Metrics } from '../metrics/metrics.js';
import { registerMetricsRoute } from '../metrics/route.js';
import type { SnapshotReader } from '../store/interfaces.js';
import { routeNumbers } from '../all-routes.js';
import { kStreamRoutes } from '../stream/routes.js';
import { ChangeFeed } from '../stream/change-feed.js';
import type { WriterClient } from '../writer/client.js';
import { Readiness } from './ready.js';

export interface ServiceRouteDeps {
  store: SnapshotReader;
  writer: WriterClient;
  evaluation: Evaluation;
  bodies: BodyBudgets;
  metrics: Metrics | null;
  log: Logger;
  /** The change streams this front end keeps open at once (FLAGWIRE_STREAM_MAX_CONNECTIONS). */
  maxStreams: number;
  test: Pick<TestSwitches, 'streamHeartbeatMs' | 'streamMaxStallMs'>;
  /** Readiness's probe of the eval workers: this front end's own, or every front-end thread's. */
  probe(timeoutMs: number): Promise<{ answered: number; workers: number }>;
  /** /metrics for the whole process when there are several front-end threads; null: this front end's own. */
  renderMetrics: (() => Promise<string>) | null;
}

export interface ServiceRoutes {
  readonly readiness: Readiness;
  readonly changes: ChangeFeed;
  /** What app.ts registers. */
  readonly routes: readonly { register(app: TemplatedApp): void }[];
  /** Shutdown has started: /ready answers 503 and every change stream ends. */
  stop(): void;
}

export function createServiceRoutes(deps: ServiceRouteDeps): ServiceRoutes {
  const { store, writer, metrics, log, test } = deps;
  const readiness = new Readiness({ readStore: () => store.configSeq(), writer, probe: deps.probe, metrics });
  // Test knobs: heartbeats every N ms instead of every 15 s, and a reader that has not drained for N ms
  // dropped at the next heartbeat instead of after 30 s, so a test sees a slow reader dropped in seconds.
  const { streamHeartbeatMs: heartbeatMs, streamMaxStallMs: maxStallMs } = test;
  const changes = new ChangeFeed({
    store,
    metrics,
    routes: routeNumbers(kStreamRoutes),
    maxConnections: deps.maxStreams,
    ...(heartbeatMs !== null ? { heartbeatMs } : {}),
    ...(maxStallMs !== null ? { maxStallMs } : {}),
    onError: (err) => log.error({ err }, 'change stream poll failed'),
  });
  const routes: { register(app: TemplatedApp): void }[] = [readiness, changes];
  if (metrics !== null) {
    registerGauges(metrics, deps, changes);
    const render = deps.renderMetrics ?? (() => Promise.resolve(metrics.render()));
    routes.push({ register: (app) => registerMetricsRoute(app, metrics, render) });
  }
  return {
    readiness,
    changes,
    routes,
    stop() {
      readiness.stop();
      changes.close();
    },
  };
}

/** The gauges read at scrape time: queue depths, the writer's and the replica's state, memory. */
function registerGauges(metrics: Metrics, deps: ServiceRouteDeps, changes: ChangeFeed): void {
  const { writer, evaluation, bodies } = deps;
  writer.onReply = (ms) => metrics.writerCommit.observe(ms / 1000);
  metrics.gauge(
    'flagwire_eval_pending_requests',
    'Evaluation requests (the Evaluation API and OFREP) accepted and not yet answered.',
    () => evaluation.pendingRequests,
  );
  metrics.gauge('flagwire_eval_tasks_in_flight', 'Evaluation batches on workers or waiting in the pool.', () => evaluation.tasksInFlight);
  metrics.gauge(
    'flagwire_eval_pool_queue_depth',
    'Evaluation batches waiting in the pool for a free worker.',
    () => evaluation.poolQueueSize,
  );
  metrics.gauge('flagwire_eval_workers', 'Evaluation worker threads.', () => evaluation.workers);
  metrics.gauge(
    'flagwire_writer_queue_depth',
    'Changes sent to the writer thread and not yet answered by it (refused ones included until it skips them).',
    () => writer.queueDepth,
  );
  // The replica's state is the writer thread's, heard alike by every front-end thread: counted once.
  metrics.gauge(
    'flagwire_writer_busy',
    '1 while a change has waited over a second for the writer thread (another process holds the write lock; writes may be refused with 503 Storage busy), else 0.',
    () => (writer.busy ? 1 : 0),
    'max',
  );
  if (writer.replica !== null) {
    metrics.gauge(
      'flagwire_replica_revision',
      "The revision of PostgreSQL this node's copy (its LMDB) is at.",
      () => writer.replica?.revision ?? 0,
      'process',
    );
    metrics.gauge(
      'flagwire_replica_lag_seconds',
      "Replication lag: from the last change followed from another node's commit (PostgreSQL's clock) to its being readable here (this node's clock).",
      () => (writer.replica?.lagMs ?? 0) / 1000,
      'process',
    );
    metrics.gauge(
      'flagwire_replica_connected',
      '1 while this node reads PostgreSQL, 0 while it cannot (evaluation goes on from the copy; writes are refused).',
      () => (writer.replica?.connected === true ? 1 : 0),
      'process',
    );
  }
  metrics.gauge('flagwire_stream_connections', 'Open change-stream connections.', () => changes.size);
  metrics.gauge(
    'flagwire_http_body_buffered_bytes',
    "Request body bytes reserved from the process's body budget (bodies being read or held).",
    () => bodies.bytes,
    'process',
  );
  metrics.scrapedCounter(
    'flagwire_http_body_refused_total',
    'Requests with a body refused (503, connection closed) because the body budget was spent.',
    () => bodies.refused,
    'process',
  );
  metrics.gauge('process_resident_memory_bytes', 'Resident memory of the server process.', () => process.memoryUsage.rss(), 'process');
}

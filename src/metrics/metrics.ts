// Flagwire's metrics, served at GET /metrics in the Prometheus text format (registry.ts).
//
// What a request costs: one Float64Array increment (route × status). What an evaluation batch costs:
// two histogram observations and one performance.now(). Queue depths are read when scraped, never
// maintained on the hot path. FLAGWIRE_METRICS=off turns all of it off (no object, null checks only).
import { kRouteLabels, routeNumber } from '../all-routes.js';
import type { EvalMetrics } from '../evaluation/engine/batcher.js';
import { header, Histogram, kBatchSizeBuckets, kCommitBuckets, kLatencyBuckets, labelValue, type HistogramSnapshot } from './registry.js';

// The service's own routes' numbers (src/routes/route-table.ts), derived from the declarations by
// src/all-routes.ts and read here once, at load. A capability's routes are given theirs at start-up.
export const kRouteHealth = routeNumber('health');
export const kRouteReady = routeNumber('ready');
export const kRouteMetrics = routeNumber('metrics');
export const kRouteOpenApi = routeNumber('openApi');
export const kRouteDocs = routeNumber('docs');
export const kRouteUnmatched = routeNumber('unmatched');

const kStatuses = 600;

/**
 * How a scraped value adds up over the front-end threads: 'sum' (each thread counts its own: requests
 * pending, connections), 'max' (a state: 1 while any thread sees it), 'process' (the same for every
 * thread: memory, the shared body budget; taken once).
 */
export type Merge = 'sum' | 'max' | 'process';

type Scraped = { name: string; type: 'gauge' | 'counter'; help: string; read: () => number; merge: Merge };

/** What one thread's Metrics hold, as plain data: a front-end thread sends it for the process's sum. */
export interface MetricsSnapshot {
  requests: Float64Array;
  evalDuration: HistogramSnapshot;
  evalBatchSize: HistogramSnapshot;
  writerCommit: HistogramSnapshot;
  counters: Record<CounterName, number>;
  scraped: { name: string; type: 'gauge' | 'counter'; help: string; value: number; merge: Merge }[];
}

const kCounters = ['evalBatchFailures', 'rateLimited', 'authFailures', 'authLockouts', 'streamDropped', 'framingRefused'] as const;
type CounterName = (typeof kCounters)[number];

export class Metrics implements EvalMetrics {
  private readonly requests = new Float64Array(kRouteLabels.length * kStatuses);
  readonly evalDuration = new Histogram(kLatencyBuckets);
  readonly evalBatchSize = new Histogram(kBatchSizeBuckets);
  readonly writerCommit = new Histogram(kCommitBuckets);
  evalBatchFailures = 0;
  rateLimited = 0;
  authFailures = 0;
  authLockouts = 0;
  streamDropped = 0;
  framingRefused = 0;
  private readonly scraped: Scraped[] = [];

  request(route: number, status: number): void {
    this.requests[route * kStatuses + (status < kStatuses ? status : 0)]!++;
  }

  batch(size: number, seconds: number): void {
    this.evalBatchSize.observe(size);
    // Every request of the batch is counted with the batch's time: an upper bound for each of them
    // (they were accepted within the batch's first event-loop turn or while it waited for a worker).
    this.evalDuration.observe(seconds, size);
  }

  batchFailed(): void {
    this.evalBatchFailures++;
  }

  /** A value read at scrape time (queue depths, connection counts). */
  gauge(name: string, help: string, read: () => number, merge: Merge = 'sum'): void {
    this.scraped.push({ name, type: 'gauge', help, read, merge });
  }

  /** A count kept by its owner (it only ever grows), read at scrape time. */
  scrapedCounter(name: string, help: string, read: () => number, merge: Merge = 'sum'): void {
    this.scraped.push({ name, type: 'counter', help, read, merge });
  }

  snapshot(): MetricsSnapshot {
    const counters = {} as Record<CounterName, number>;
    for (const name of kCounters) counters[name] = this[name];
    return {
      requests: this.requests.slice(),
      evalDuration: this.evalDuration.snapshot(),
      evalBatchSize: this.evalBatchSize.snapshot(),
      writerCommit: this.writerCommit.snapshot(),
      counters,
      scraped: this.scraped.map(({ name, type, help, read, merge }) => ({ name, type, help, value: read(), merge })),
    };
  }

  /** This thread's metrics in the text format (the process's when it is the only front-end thread). */
  render(): string {
    return renderMetrics([this.snapshot()]);
  }
}

/**
 * The text format of the process's metrics: the sum of every front-end thread's `snapshots` (merged
 * as each scraped value's Merge says), and each thread's request count.
 */
export function renderMetrics(snapshots: readonly MetricsSnapshot[]): string {
  const out: string[] = [];
  renderRequests(out, snapshots);
  renderEvaluationAndCounters(out, snapshots);
  renderScraped(out, snapshots);
  out.push('');
  return out.join('\n');
}

/** Requests by route and status, summed over the threads, and each thread's total. */
function renderRequests(out: string[], snapshots: readonly MetricsSnapshot[]): void {
  const requests = new Float64Array(kRouteLabels.length * kStatuses);
  for (const s of snapshots) for (let i = 0; i < requests.length; i++) requests[i]! += s.requests[i]!;
  header(out, 'flagwire_http_requests_total', 'counter', 'HTTP requests answered, by route and status.');
  for (let r = 0; r < kRouteLabels.length; r++) {
    const route = labelValue(kRouteLabels[r]!);
    for (let s = 0; s < kStatuses; s++) {
      const n = requests[r * kStatuses + s]!;
      if (n !== 0) out.push(`flagwire_http_requests_total{route="${route}",status="${s === 0 ? 'other' : s}"} ${n}`);
    }
  }
  header(
    out,
    'flagwire_http_thread_requests_total',
    'counter',
    'HTTP requests answered by each front-end thread (FLAGWIRE_HTTP_THREADS), all routes.',
  );
  for (const [thread, s] of snapshots.entries()) {
    out.push(`flagwire_http_thread_requests_total{thread="${thread}"} ${s.requests.reduce((a, b) => a + b, 0)}`);
  }
}

/** The histograms (summed bucket by bucket) and the counters (summed). */
function renderEvaluationAndCounters(out: string[], snapshots: readonly MetricsSnapshot[]): void {
  const total = (name: CounterName) => snapshots.reduce((sum, s) => sum + s.counters[name], 0);
  header(
    out,
    'flagwire_eval_duration_seconds',
    'histogram',
    'Evaluation latency on the server (Evaluation API and OFREP): from the moment the first request of a batch was accepted to when the batch was answered, counted once per request.',
  );
  Histogram.sum(
    kLatencyBuckets,
    snapshots.map((s) => s.evalDuration),
  ).render(out, 'flagwire_eval_duration_seconds');
  header(out, 'flagwire_eval_batch_size', 'histogram', 'Requests per evaluation batch (one worker task).');
  Histogram.sum(
    kBatchSizeBuckets,
    snapshots.map((s) => s.evalBatchSize),
  ).render(out, 'flagwire_eval_batch_size');
  counter(
    out,
    'flagwire_eval_batch_failures_total',
    'Evaluation batches whose worker died (every request of them got a 500) or timed out (a 503 with Retry-After).',
    total('evalBatchFailures'),
  );
  header(
    out,
    'flagwire_writer_commit_duration_seconds',
    'histogram',
    'Time from a change being sent to the writer until it was committed and flushed to disk (queueing and group commit included).',
  );
  Histogram.sum(
    kCommitBuckets,
    snapshots.map((s) => s.writerCommit),
  ).render(out, 'flagwire_writer_commit_duration_seconds');
  counter(
    out,
    'flagwire_rate_limited_total',
    'Management API requests refused by the per-IP rate limit (plain 429).',
    total('rateLimited'),
  );
  counter(
    out,
    'flagwire_auth_failures_total',
    'Failed authentications (no, malformed or unknown token) on the Management API.',
    total('authFailures'),
  );
  counter(
    out,
    'flagwire_auth_lockouts_total',
    'Management API requests refused because their address is locked out after failed authentications.',
    total('authLockouts'),
  );
  counter(
    out,
    'flagwire_http_framing_refused_total',
    'Requests refused with a 400 and a closed connection for framing a proxy could read differently (conflicting Content-Length, a Transfer-Encoding other than chunked).',
    total('framingRefused'),
  );
  counter(
    out,
    'flagwire_stream_dropped_total',
    'Change-stream connections closed because the client read too slowly.',
    total('streamDropped'),
  );
}

/** The thread count, and the values read at scrape time, merged as each one's Merge says. */
function renderScraped(out: string[], snapshots: readonly MetricsSnapshot[]): void {
  header(out, 'flagwire_http_threads', 'gauge', 'Front-end threads serving HTTP (FLAGWIRE_HTTP_THREADS).');
  out.push(`flagwire_http_threads ${snapshots.length}`);
  for (const first of snapshots[0]?.scraped ?? []) {
    const values = snapshots.map((s) => s.scraped.find((m) => m.name === first.name)?.value ?? 0);
    const value = first.merge === 'process' ? values[0]! : first.merge === 'max' ? Math.max(...values) : values.reduce((a, b) => a + b, 0);
    header(out, first.name, first.type, first.help);
    out.push(`${first.name} ${value}`);
  }
}

function counter(out: string[], name: string, help: string, value: number): void {
  header(out, name, 'counter', help);
  out.push(`${name} ${value}`);
}

export const kMetricsContentType = 'text/plain; version=0.0.4; charset=utf-8';

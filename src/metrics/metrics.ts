// Flagwire's metrics, served at GET /metrics in the Prometheus text format (registry.ts).
//
// What a request costs: one Float64Array increment (route × status). What an evaluation batch costs:
// two histogram observations and one performance.now(). Queue depths are read when scraped, never
// maintained on the hot path. FLAGWIRE_METRICS=off turns all of it off (no object, null checks only).
import { header, Histogram, kBatchSizeBuckets, kCommitBuckets, kLatencyBuckets, labelValue } from './registry.js';

/**
 * Route labels, by route number: every route's number is its index here. A front door's routes onto
 * evaluation (src/eval/door.ts) carry their number in the batch (a u8, src/eval/protocol.ts), so they
 * must stay below 256; their doors import them from here like every other route does.
 */
export const kRouteLabels = [
  '/v1/flags/{flag_id}',
  '/v1/flags/project/{project_id}',
  '/ofrep/v1/evaluate/flags/{key}',
  '/ofrep/v1/evaluate/flags',
  '/api/v1/token',
  '/api/v1/flags',
  '/api/v1/flags/{flag_id}',
  '/api/v1/*',
  '/v1/stream/project/{project_id}',
  '/health',
  '/ready',
  '/metrics',
  '/api/v1/openapi.json',
  '/docs',
  'unmatched',
  '/ofrep/v1/stream/project/{project_id}',
] as const;
/** GET /v1/flags/{flag_id}: the Evaluation API's door (src/eval/api-door.ts). */
export const kRouteFlag = 0;
/** GET /v1/flags/project/{project_id}: the Evaluation API's door. */
export const kRouteProject = 1;
/** POST /ofrep/v1/evaluate/flags/{key}: OFREP's door (src/ofrep/door.ts). */
export const kRouteOfrepFlag = 2;
/** POST /ofrep/v1/evaluate/flags: OFREP's door. */
export const kRouteOfrepBulk = 3;
export const kRouteApiToken = 4;
export const kRouteApiFlags = 5;
export const kRouteApiFlag = 6;
export const kRouteApiOther = 7;
export const kRouteStream = 8;
export const kRouteHealth = 9;
export const kRouteReady = 10;
export const kRouteMetrics = 11;
export const kRouteOpenApi = 12;
export const kRouteDocs = 13;
export const kRouteUnmatched = 14;
/** GET /ofrep/v1/stream/project/{project_id}: the change stream in OFREP's form (src/stream/change-feed.ts). */
export const kRouteOfrepStream = 15;

const kStatuses = 600;

/** What the evaluation batcher reports (src/eval/batcher.ts). */
export interface EvalMetrics {
  request(route: number, status: number): void;
  /** One answered batch of `size` requests, `seconds` after its first request was accepted. */
  batch(size: number, seconds: number): void;
  batchFailed(): void;
}

type Scraped = { name: string; type: 'gauge' | 'counter'; help: string; read: () => number };

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

  /** A Management API answer, labelled by the path's route (matchRoute's table in src/api/management.ts). */
  apiRequest(path: string, status: number): void {
    let route = kRouteApiOther;
    if (path === '/api/v1/token') route = kRouteApiToken;
    else if (path === '/api/v1/flags') route = kRouteApiFlags;
    else if (path.startsWith('/api/v1/flags/') && path.indexOf('/', 14) === -1 && path.length > 14) route = kRouteApiFlag;
    this.request(route, status);
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
  gauge(name: string, help: string, read: () => number): void {
    this.scraped.push({ name, type: 'gauge', help, read });
  }

  /** A count kept by its owner (it only ever grows), read at scrape time. */
  scrapedCounter(name: string, help: string, read: () => number): void {
    this.scraped.push({ name, type: 'counter', help, read });
  }

  render(): string {
    const out: string[] = [];
    header(out, 'flagwire_http_requests_total', 'counter', 'HTTP requests answered, by route and status.');
    for (let r = 0; r < kRouteLabels.length; r++) {
      const route = labelValue(kRouteLabels[r]!);
      for (let s = 0; s < kStatuses; s++) {
        const n = this.requests[r * kStatuses + s]!;
        if (n !== 0) out.push(`flagwire_http_requests_total{route="${route}",status="${s === 0 ? 'other' : s}"} ${n}`);
      }
    }
    header(out, 'flagwire_eval_duration_seconds', 'histogram',
      'Evaluation latency on the server (Evaluation API and OFREP): from the moment the first request of a batch was accepted to when the batch was answered, counted once per request.');
    this.evalDuration.render(out, 'flagwire_eval_duration_seconds');
    header(out, 'flagwire_eval_batch_size', 'histogram', 'Requests per evaluation batch (one worker task).');
    this.evalBatchSize.render(out, 'flagwire_eval_batch_size');
    counter(out, 'flagwire_eval_batch_failures_total', 'Evaluation batches whose worker died or timed out (every request of them got a 500).', this.evalBatchFailures);
    header(out, 'flagwire_writer_commit_duration_seconds', 'histogram',
      'Time from a change being sent to the writer until it was committed and flushed to disk (queueing and group commit included).');
    this.writerCommit.render(out, 'flagwire_writer_commit_duration_seconds');
    counter(out, 'flagwire_rate_limited_total', 'Management API requests refused by the per-IP rate limit (plain 429).', this.rateLimited);
    counter(out, 'flagwire_auth_failures_total', 'Failed authentications (no, malformed or unknown token) on the Management API.', this.authFailures);
    counter(out, 'flagwire_auth_lockouts_total', 'Management API requests refused because their address is locked out after failed authentications.', this.authLockouts);
    counter(out, 'flagwire_http_framing_refused_total',
      'Requests refused with a 400 and a closed connection for framing a proxy could read differently (conflicting Content-Length, a Transfer-Encoding other than chunked).', this.framingRefused);
    counter(out, 'flagwire_stream_dropped_total', 'Change-stream connections closed because the client read too slowly.', this.streamDropped);
    for (const m of this.scraped) {
      header(out, m.name, m.type, m.help);
      out.push(`${m.name} ${m.read()}`);
    }
    out.push('');
    return out.join('\n');
  }
}

function counter(out: string[], name: string, help: string, value: number): void {
  header(out, name, 'counter', help);
  out.push(`${name} ${value}`);
}

export const kMetricsContentType = 'text/plain; version=0.0.4; charset=utf-8';

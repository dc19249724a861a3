// Main-thread side of evaluation: collects the requests that arrive in one event-loop turn into a
// batch, hands each batch to the pool as one task, and answers every response of the batch corked.
//
//   uWS handlers (poll phase) ── add() ──▶ open batch ──setImmediate (check phase)──▶ pump()
//                                              │ full (maxBatchRequests)                │ ≤ maxTasksInFlight
//                                              ▼                                        ▼
//                                          full batches ──────────────────────────▶ runner.run(task)
//                                                                                       │ one ArrayBuffer back
//   answer() (answer-writer.ts): res.cork → headers, body slice ◀──────────────────────┘
//
// While every task slot is taken the open batch stays open and keeps growing, so under load batches
// get larger (fewer hand-offs) instead of queueing many small tasks. A batch is closed at
// maxBatchRequests requests, at maxBatchBytes bytes of requests, or before its answers are expected to
// outgrow maxBatchAnswerBytes. The number and the bytes of accepted, unanswered requests are bounded;
// past either bound a request is answered 503 at once. A task that fails (its worker died, the pool was
// destroyed) answers every request of its batch with the 500 eval body. A task that has not come back
// within `taskTimeoutMs` (a stuck worker) answers every request of its batch 503 with Retry-After: 1 (its
// route set's batchTimedOutBody), and its worker is replaced: never a hang. Why 503 and not 500: a
// batch carries every project's requests, and what holds a worker that long is one request of it (a
// context or rule past what the bounds foresaw); the others, another project's among them, are not at
// fault and are told to retry, which OpenFeature providers and SDKs do on a 503, not that the server
// failed. Re-running them without the slow one would need to know which it was, which only the worker
// that is stuck could tell (docs/decisions.md: A timed-out batch is a 503).
//
// The same batches carry every evaluation route set's requests (routes.ts): a request body travels in the query
// slot, and an answer may carry an ETag (protocol.ts; OFREP's bulk answers do), written as a header,
// with a 304 answered without a body.
//
// Every answer names the store revision it was computed at (Flagwire-Revision, src/http/revisions.ts):
// its batch's, which the worker read in the batch's snapshot and sent back once in the buffer. A
// request asking for at least a revision this node's copy does not have yet waits outside any batch
// (RevisionWaiter), counted against the same bounds as every accepted request, then joins a batch,
// or is answered 503 when the wait runs out.
import { maxUtf8Bytes } from '../../bytes/utf8.js';
import { trackAbort, type PendingResponse } from '../../http/http.js';
import type { InFlight } from '../../http/in-flight.js';
import type { RevisionWaiter } from '../../http/revisions.js';
import type { RouteCounts } from '../../routes/route-table.js';
import { AnswerHeads, answer, answerRefusal, answerTagged } from './answer-writer.js';
import { byRoute, type EvalRoutesSpec, type EvalQueue } from './routes.js';
import { RequestWriter, ResultReader, type EvalTask, type Route } from './protocol.js';

/**
 * What a runner listens on to cancel a task: a batch still out at `taskTimeoutMs` is aborted, and the
 * pool then ends the worker running it and starts a new one (pool.ts).
 */
export interface BatchAbortSignal {
  readonly aborted: boolean;
  addEventListener(name: 'abort', listener: () => void): void;
  removeEventListener(name: 'abort', listener: () => void): void;
}

/** How a runner answers a batch: the answers (readable during the call only), or the error that lost them. */
export type BatchDone = (err: unknown, answers: ArrayBufferLike | null) => void;

/** What the batcher reports: each answer by route number and status, and each batch (src/metrics/metrics.ts). */
export interface EvalMetrics extends RouteCounts {
  /** One answered batch of `size` requests, `seconds` after its first request was accepted. */
  batch(size: number, seconds: number): void;
  batchFailed(): void;
}
/**
 * Runs one batch on a worker. The requests are copied before run() returns (`task.buffer` stays the
 * caller's); `done` is called once, never from inside run().
 */
export interface BatchRunner {
  run(task: EvalTask, signal: BatchAbortSignal, done: BatchDone): void;
}

export interface BatcherOptions {
  runner: BatchRunner;
  inFlight: InFlight;
  /** Batches on workers (running or queued in the pool) at once; more wait and grow on this thread. */
  maxTasksInFlight: number;
  /** Requests per task at most. */
  maxBatchRequests: number;
  /** Accepted, unanswered requests at most; `add` refuses beyond it. */
  maxPendingRequests: number;
  /**
   * A batch is closed once its requests take this many bytes. Evaluation requests are a few hundred
   * bytes, but an OFREP body may be 1 MiB: without it one batch (and the buffer it leaves for reuse)
   * could grow to maxBatchRequests MiB.
   */
  maxBatchBytes: number;
  /**
   * A batch is closed before its answers are expected to take more than this many bytes (requests × the
   * bytes per answer of the batch answered last): the most a batch channel's slot keeps (batch-channel.ts,
   * kMaxSlotBytes). Answers that outgrow it are written into a fresh buffer each batch, whose pages the
   * kernel faults in one by one: large OFREP bulk answers in the batches many connections make cost the
   * eval worker far more CPU per answer than smaller batches (issue 57, bench/RESULTS.md).
   */
  maxBatchAnswerBytes: number;
  /** Bytes of accepted, unanswered requests at most; `add` refuses beyond it (memory stays bounded). */
  maxPendingBytes: number;
  /** A batch not back after this long is answered 503 with Retry-After (checked about once a second). */
  taskTimeoutMs: number;
  /** Called once per failed batch. */
  onBatchError(err: unknown, requests: number): void;
  /** Request, batch and failure counts (null: metrics off, nothing measured). */
  metrics?: EvalMetrics | null;
  /** The evaluation route sets whose requests it takes (their 500 and 503 bodies). */
  routeSets: readonly EvalRoutesSpec[];
  /** Where requests with a Flagwire-Min-Revision wait (the front end's); absent: served at once (unit tests, benches). */
  revisions?: RevisionWaiter | null;
}

/**
 * One batch: its requests' responses, and its own abort signal (a field and two methods on an object
 * made per batch anyway, rather than an AbortController per batch on the hot path).
 */
class Batch implements BatchAbortSignal {
  readonly responses: PendingResponse[] = [];
  /** Route of each response (metrics labels, and which 500 body a failed batch answers with). */
  readonly routes: Route[] = [];
  sentAt = 0;
  /** Answered (or failed, or timed out): a late result of a timed-out task is dropped. */
  settled = false;
  aborted = false;
  private onAbort: (() => void) | null = null;

  constructor(
    readonly writer: RequestWriter,
    /** performance.now() when the batch's first request was accepted (metrics only; 0 when off). */
    readonly openedAt: number,
    /** InFlight handle: one per batch, not per request (graceful shutdown waits for every batch). */
    readonly done: () => void,
  ) {}

  addEventListener(_name: 'abort', listener: () => void): void {
    this.onAbort = listener;
  }

  removeEventListener(_name: 'abort', listener: () => void): void {
    if (this.onAbort === listener) this.onAbort = null;
  }

  /** Cancels the task running this batch (its worker is replaced). */
  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listener = this.onAbort;
    this.onAbort = null;
    listener?.();
  }
}

/** Initial size of a batch buffer; requests and answers of a typical batch fit without growing. */
const kBufferBytes = 64 * 1024;
const kMaxFreeBuffers = 16;

export class EvalBatcher implements EvalQueue {
  private open: Batch | null = null;
  private readonly full: Batch[] = [];
  private tasks = 0;
  private pending = 0;
  private pendingBytes = 0;
  /** Bytes of the answers' buffer per answer in the batch answered last (0 before the first): what maxBatchAnswerBytes expects. */
  private answerBytes = 0;
  private scheduled = false;
  private closing = false;
  private readonly freeBuffers: ArrayBuffer[] = [];
  private readonly running = new Set<Batch>();
  // One unref'd interval for the batcher's life (not a timer per batch): checks for stuck tasks.
  private readonly watchdog: NodeJS.Timeout;
  private idle: (() => void)[] = [];
  // Bound once: the per-turn flush is scheduled with the same function every time.
  private readonly flushTurn = (): void => {
    this.scheduled = false;
    this.pump();
  };

  private readonly metrics: EvalMetrics | null;
  /** By route: what a request of a failed batch is answered (its route set's 500 body). */
  private readonly internalErrorBodies: Uint8Array[];
  /** By route: what a request of a timed-out batch is answered (its route set's 503 body). */
  private readonly timedOutBodies: Uint8Array[];
  /** By route: what a request whose revision was not reached in time is answered (its route set's 503 body). */
  private readonly notReachedBodies: Uint8Array[];
  private readonly revisions: RevisionWaiter | null;
  /** The newest revision a batch came back at: what an answer computed from no snapshot names (a refusal, a lost batch). */
  private latest = 0;
  /** The header lines every answer has, made once per revision (answer-writer.ts). */
  private readonly heads = new AnswerHeads();

  constructor(private readonly options: BatcherOptions) {
    this.metrics = options.metrics ?? null;
    const { routeSets } = options;
    this.internalErrorBodies = byRoute(routeSets, (routeSet) => routeSet.internalErrorBody);
    this.timedOutBodies = byRoute(routeSets, (routeSet) => routeSet.batchTimedOutBody);
    this.notReachedBodies = byRoute(routeSets, (routeSet) => routeSet.revisionNotReachedBody);
    this.revisions = options.revisions ?? null;
    this.watchdog = setInterval(() => this.checkTimeouts(), Math.min(1000, options.taskTimeoutMs)).unref();
  }

  /** Requests accepted and not yet answered. */
  get size(): number {
    return this.pending;
  }

  /** Batches sent to the pool and not yet answered. */
  get tasksInFlight(): number {
    return this.tasks;
  }

  /**
   * Queues a request whose `onAborted` is already registered. False when the queue is full or the
   * server is stopping: the caller answers it (503) at once.
   */
  add(res: PendingResponse, route: Route, id: string, query: string | Uint8Array, extra = '', minRevision = 0): boolean {
    const { options } = this;
    if (this.closing || this.pending >= options.maxPendingRequests || this.pendingBytes >= options.maxPendingBytes) return false;
    // Hot path: a request without Flagwire-Min-Revision (0) costs this one comparison.
    if (minRevision > 0 && this.revisions !== null && !this.revisions.has(minRevision))
      return this.waitForRevision(res, route, id, query, extra, minRevision, this.revisions);
    this.enqueue(res, route, id, query, extra);
    return true;
  }

  /** Answers at once what a route set refuses itself (413, 503), with the headers of every evaluation answer. */
  refuse(res: PendingResponse, status: number, body: Uint8Array, retryAfter = false, closeConnection = false): void {
    // Answered inside its handler, maybe with more than the socket takes at once: see send() in http.ts.
    if (!res.tracked) trackAbort(res);
    answerRefusal(res, status, body, this.heads.at(this.latestRevision()), retryAfter, closeConnection);
  }

  /**
   * A request that waits for its revision outside any batch: accepted (counted in the queue's bounds,
   * and by the shutdown's drain) from now on; it joins the open batch once this node's copy has the
   * revision, or is answered 503 when the wait runs out. False, nothing kept, when as many wait already
   * as the waiter allows: the route set refuses it as a full queue.
   */
  private waitForRevision(
    res: PendingResponse,
    route: Route,
    id: string,
    query: string | Uint8Array,
    extra: string,
    minRevision: number,
    revisions: RevisionWaiter,
  ): boolean {
    // A body is copied: the route set frees its own as soon as add() returns.
    const held = typeof query === 'string' ? query : query.slice();
    const bytes = maxUtf8Bytes(id) + (typeof held === 'string' ? maxUtf8Bytes(held) : held.length) + maxUtf8Bytes(extra);
    const done = this.options.inFlight.start();
    const waiting = revisions.wait(minRevision, (reached) => {
      this.pending--;
      this.pendingBytes -= bytes;
      done();
      if (reached && !res.aborted) this.enqueue(res, route, id, held, extra);
      else if (!res.aborted) {
        this.metrics?.request(route, 503);
        this.refuse(res, 503, this.notReachedBodies[route]!, true);
      }
      this.settleIdle();
    });
    if (!waiting) {
      done();
      return false;
    }
    this.pending++;
    this.pendingBytes += bytes;
    return true;
  }

  /** The newest revision this front end knows (its batches', and what the waiter read). */
  private latestRevision(): number {
    return this.revisions === null ? this.latest : this.revisions.latest;
  }

  /** Puts an accepted request into the open batch. */
  private enqueue(res: PendingResponse, route: Route, id: string, query: string | Uint8Array, extra: string): void {
    const { options } = this;
    let batch = this.open;
    if (batch === null) batch = this.open = this.newBatch();
    const writer = batch.writer;
    const before = writer.bytesUsed;
    writer.add(route, id, query, extra);
    this.pendingBytes += writer.bytesUsed - before;
    batch.responses.push(res);
    batch.routes.push(route);
    this.pending++;
    if (
      batch.responses.length >= options.maxBatchRequests ||
      writer.bytesUsed >= options.maxBatchBytes ||
      (batch.responses.length + 1) * this.answerBytes > options.maxBatchAnswerBytes
    ) {
      this.full.push(batch);
      this.open = null;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushTurn);
    }
  }

  /** Stops accepting, sends what is queued, and resolves once every accepted request is answered. */
  close(): Promise<void> {
    this.closing = true;
    this.pump();
    const idle = this.pending === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.idle.push(resolve));
    return idle.finally(() => clearInterval(this.watchdog));
  }

  private pump(): void {
    while (this.tasks < this.options.maxTasksInFlight) {
      let batch: Batch;
      if (this.full.length > 0) {
        batch = this.full.shift()!;
      } else if (this.open !== null) {
        batch = this.open;
        this.open = null;
      } else {
        return;
      }
      this.send(batch);
    }
  }

  private send(batch: Batch): void {
    this.tasks++;
    batch.sentAt = performance.now();
    this.running.add(batch);
    const { writer } = batch;
    const task: EvalTask = { buffer: writer.buffer, bytes: writer.bytesUsed, count: batch.responses.length };
    try {
      this.options.runner.run(task, batch, (err, answers) =>
        answers === null ? this.failBatch(batch, err) : this.answerBatch(batch, answers),
      );
    } catch (err) {
      this.failBatch(batch, err);
    }
  }

  private checkTimeouts(): void {
    const limit = performance.now() - this.options.taskTimeoutMs;
    for (const batch of this.running) {
      if (batch.sentAt > limit) continue;
      this.failBatch(batch, new Error(`eval batch not answered within ${this.options.taskTimeoutMs} ms`), true);
      // A stuck worker would otherwise hold its slot for good: aborting makes the pool replace it.
      batch.abort();
    }
  }

  private answerBatch(batch: Batch, buffer: ArrayBufferLike): void {
    if (batch.settled) return;
    let reader: ResultReader;
    try {
      reader = new ResultReader(buffer);
      if (reader.count !== batch.responses.length)
        throw new Error(`eval batch of ${batch.responses.length} came back with ${reader.count} answers`);
    } catch (err) {
      this.failBatch(batch, err);
      return;
    }
    const responses = batch.responses;
    this.answerBytes = reader.bytesUsed / reader.count;
    const metrics = this.metrics;
    // Every answer of the batch names its revision: the same bytes for all of them (and, until the next
    // write, for the batches after), so naming it allocates nothing per answer.
    if (reader.revision > this.latest) {
      this.latest = reader.revision;
      // This node's copy has it: a request asking for no more is served without a read.
      this.revisions?.saw(reader.revision);
    }
    const heads = this.heads.at(reader.revision);
    for (let i = 0; i < responses.length; i++) {
      const res = responses[i]!;
      const word = reader.word(i);
      if (metrics !== null) metrics.request(batch.routes[i]!, word & 0xffff);
      // An aborted client's response object is gone: skip it (onAborted set the flag).
      if (res.aborted) continue;
      if (word <= 0xffff) answer(res, word, reader.body(i), heads);
      else answerTagged(res, word & 0xffff, reader.body(i), reader.tag(i), heads);
    }
    if (metrics !== null) metrics.batch(responses.length, (performance.now() - batch.openedAt) / 1000);
    this.finish(batch);
  }

  /** Answers every request of a lost batch: 500, or, when it `timedOut`, 503 with Retry-After (see the top of the file). */
  private failBatch(batch: Batch, err: unknown, timedOut = false): void {
    if (batch.settled) return;
    this.options.onBatchError(err, batch.responses.length);
    const metrics = this.metrics;
    if (metrics !== null) metrics.batchFailed();
    // Computed from no snapshot: the newest revision known.
    const heads = this.heads.at(this.latestRevision());
    const status = timedOut ? 503 : 500;
    const bodies = timedOut ? this.timedOutBodies : this.internalErrorBodies;
    for (let i = 0; i < batch.responses.length; i++) {
      const route = batch.routes[i]!;
      if (metrics !== null) metrics.request(route, status);
      answerRefusal(batch.responses[i]!, status, bodies[route]!, heads, timedOut, false);
    }
    this.finish(batch);
  }

  private finish(batch: Batch): void {
    batch.settled = true;
    // The runner copied the requests: the buffer can carry the next batch. Only buffers of the initial
    // size are kept: one grown by large request bodies (OFREP's) is left to the GC.
    const { buffer } = batch.writer;
    if (buffer.byteLength === kBufferBytes && this.freeBuffers.length < kMaxFreeBuffers) this.freeBuffers.push(buffer);
    this.running.delete(batch);
    this.tasks--;
    this.pending -= batch.responses.length;
    this.pendingBytes -= batch.writer.bytesUsed;
    batch.done();
    this.pump();
    this.settleIdle();
  }

  /** Resolves close() once nothing accepted is left unanswered. */
  private settleIdle(): void {
    if (this.pending === 0 && this.idle.length > 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  private newBatch(): Batch {
    const buffer = this.freeBuffers.pop() ?? new ArrayBuffer(kBufferBytes);
    return new Batch(new RequestWriter(buffer), this.metrics === null ? 0 : performance.now(), this.options.inFlight.start());
  }
}

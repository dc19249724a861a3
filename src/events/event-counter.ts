// The front end's handle on events: batches are handed to the events thread (events-thread.ts), started
// with the first one, which reads, resolves and counts them; a key whose project the thread's rate
// refused has its batches refused here, before they are read, until the thread would read them
// (refused-keys.ts). An experiment's statistics are read on the events thread too, a bounded number at a
// time: a read of many rows never holds the front end's thread, where evaluations are answered, nor the
// writer's. So is each page of a raw-events export, and written as JSON lines there too. Erasures are the front end's own writes of the tally (tally-writes.ts: the tally file, or
// PostgreSQL's), opened on first use. A thread that dies (a fault of ours) fails the batches and reads it
// held with a 503, and the next batch or read starts another (thread-restarts.ts).
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { FlagwireError } from '../errors.js';
import type { ExperimentTally, TallyScope } from './tally/tally-file.js';
import type {
  BatchRefusal,
  BatchReply,
  BatchRequest,
  EventsThreadData,
  EventsThreadMessage,
  ExportPageReply,
  ExportPageRequest,
  ReceivedBatch,
  StatisticsReply,
  StatisticsRequest,
} from './events-thread.js';
import { rateRefusal } from './event-rate.js';
import type { JsonLinesPages } from './export.js';
import { cutByShutdown, ExportScratch } from './export-scratch.js';
import type { EventsAnswer } from './receive.js';
import { RefusedKeys } from './refused-keys.js';
import { TallyWrites } from './tally-writes.js';
import { ThreadRestarts } from './thread-restarts.js';

declare module '../routes/handler.js' {
  interface RouteServices {
    /** Events: the events thread, and the tally (src/events). */
    events: EventCounter;
  }
}

declare module '../console-route/call.js' {
  interface ApiCall {
    /** The tally's reads, for the console's experiment results (src/experiments/console-routes.ts). */
    events: EventCounter;
  }
}

/** What became of a batch: counted (the answer), or refused (the error, and seconds of Retry-After if it says when to retry). */
export type BatchOutcome = { answer: EventsAnswer } | BatchRefused;
export interface BatchRefused {
  refusal: FlagwireError;
  retryAfter: number | null;
}

/** A reply the thread settles a batch or a read with (a failure rejects it). */
type Settled = Exclude<BatchReply, { failure: string }> | StatisticsReply | ExportPageReply;

/**
 * Statistics reads one front end has on its events thread at once; past them a read is refused, 503
 * with Retry-After: each is bounded (docs/events.md: Statistics), and the bound keeps the memory of
 * those in flight, and the counting they delay, bounded too.
 */
export const kMaxStatisticsReads = 4;

/**
 * The refusal of a batch the thread held when it died: it may have been counted (its transaction may
 * have committed before the thread died) or not, and a batch id tells which when it is sent again.
 */
const kDiedHolding: BatchRefusal = {
  code: 'SERVER_BUSY',
  detail:
    "This node's events thread stopped while it held this batch (a fault of the node, logged; the next batch starts it again). The batch may or may not have been counted: send it again under its batchId, and it is counted once.",
  retryAfter: 1,
  refusedUntil: null,
};

interface Pending {
  resolve(reply: Settled): void;
  reject(err: Error): void;
  asked: Asked;
}

/** The refusal of a read the thread held when it died. */
const kDiedReading: BatchRefusal = {
  code: 'SERVER_BUSY',
  detail:
    "This node's events thread stopped while it read these statistics (a fault of the node, logged; the next read starts it again). Ask again.",
  retryAfter: 1,
  refusedUntil: null,
};

/** The refusal of an export's page the thread held when it died: the export is cut (a 503 before its first byte). */
const kDiedExporting: BatchRefusal = {
  code: 'SERVER_BUSY',
  detail:
    "This node's events thread stopped while it read this export's events (a fault of the node, logged; the next request starts it again). Export again.",
  retryAfter: 1,
  refusedUntil: null,
};

/** What the thread is asked: a batch, a statistics read or an export's page (each is refused in its own words). */
type Asked = 'batch' | 'read' | 'export';
const kDied: Readonly<Record<Asked, BatchRefusal>> = { batch: kDiedHolding, read: kDiedReading, export: kDiedExporting };
const kAskAgain: Readonly<Record<Asked, string>> = {
  batch: 'Nothing of this batch was counted: send it again',
  read: 'Ask for the statistics again',
  export: 'Export again',
};

export class EventCounter {
  private readonly writes: TallyWrites;
  private readonly threadData: EventsThreadData;
  private thread: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  /** Statistics reads on the thread now (kMaxStatisticsReads). */
  private reads = 0;
  private readonly refused = new RefusedKeys();
  private readonly restarts = new ThreadRestarts();
  /** Threads started before the one running: the test switch that kills a thread acts in the first only. */
  private startedBefore = 0;
  /** Set by close(): exports still reading are cut (exportPages). */
  private closing = false;

  constructor(
    config: Readonly<
      Pick<
        Config,
        'dataDir' | 'databaseUrl' | 'eventsPerSecond' | 'httpThreads' | 'eventSubjectsPerEnvironment' | 'rawEventBytesPerProject'
      >
    >,
    private readonly log: Logger,
    private readonly clock: Clock,
  ) {
    this.writes = new TallyWrites(config);
    const { dataDir, databaseUrl, eventsPerSecond, httpThreads } = config;
    const limits = { subjectsPerEnvironment: config.eventSubjectsPerEnvironment, rawBytesPerProject: config.rawEventBytesPerProject };
    this.threadData = { dataDir, databaseUrl, eventsPerSecond, httpThreads, limits, startedBefore: 0 };
    this.scratch = new ExportScratch(dataDir);
  }

  /** Where this node's Parquet exports write their scratch files (in the data dir). */
  readonly scratch: ExportScratch;

  /**
   * Where an export reads raw events as JSON lines, a page at a time, read and written on the events
   * thread (from PostgreSQL's tally, or the tally file); null while no tally file is on disk (an
   * embedded node never sent an event), so that an export there answers empty and creates no file.
   * Once the node closes the tally (shutdown, past the drain of in-flight requests, which waits for
   * exports), a page read refuses: an export still running is cut with that error (a 503 before its
   * first byte, its connection closed after), never ended as if whole by a page a closing tally read
   * as empty.
   */
  exportPages(): JsonLinesPages | null {
    if (this.countedNothing) return null;
    return {
      jsonLinesPage: async (scope, range, after) => {
        this.refuseIfClosing();
        const reply = await this.onThread({ id: this.nextId++, exportPage: { scope, range, after } });
        this.refuseIfClosing();
        if ('refusal' in reply) throw new FlagwireError(reply.refusal.code, reply.refusal.detail);
        if (!('page' in reply)) throw new Error("the events thread answered an export's page with something else");
        return reply.page;
      },
    };
  }

  private refuseIfClosing(): void {
    if (this.closing) throw cutByShutdown();
  }

  /** Whether nothing was ever counted here: an embedded node without a tally file (an erasure there erases nothing and creates none). */
  get countedNothing(): boolean {
    return this.threadData.databaseUrl === null && this.writes.existingFile === null;
  }

  /**
   * An experiment's arms and sums in `scope`, read now on the events thread: of every metric, or only of
   * `metrics` (what results and guards need). Refused, SERVER_BUSY, while kMaxStatisticsReads are in flight.
   */
  async experiment(scope: TallyScope, experiment: string, metrics: readonly string[] | null = null): Promise<ExperimentTally> {
    const reply = await this.read({ scope, experiment, metrics, view: null });
    if ('tally' in reply) return reply.tally;
    throw new Error('the events thread answered a read of sums with a view');
  }

  /**
   * The statistics route's answer for `experiment` in `scope` (statistics.ts: every metric), as JSON
   * text made on the events thread; `environment` as the view names it. Refused as `experiment` is.
   */
  async statisticsJson(scope: TallyScope, experiment: string, environment: string | null): Promise<string> {
    const reply = await this.read({ scope, experiment, metrics: null, view: { environment } });
    if ('json' in reply) return reply.json;
    throw new Error('the events thread answered a read of the view with sums');
  }

  private async read(statistics: StatisticsRequest['statistics']): Promise<StatisticsReply> {
    if (this.reads >= kMaxStatisticsReads)
      throw new FlagwireError(
        'SERVER_BUSY',
        `This node is reading ${kMaxStatisticsReads} experiments' statistics already, the most it reads at once: ask again after Retry-After.`,
      );
    this.reads++;
    try {
      const reply = await this.onThread({ id: this.nextId++, statistics });
      if ('refusal' in reply) throw new FlagwireError(reply.refusal.code, reply.refusal.detail);
      if ('answer' in reply || 'page' in reply) throw new Error('the events thread answered a read with something else');
      return reply;
    } finally {
      this.reads--;
    }
  }

  /** Erases `subject` of `scope` (TallyWrites.erase): whether anything of it was kept. */
  erase(scope: TallyScope, subject: string): Promise<boolean> {
    return this.writes.erase(scope, subject);
  }

  /**
   * The refusal of a batch sent with the client key `secret` at `now`, from its headers alone, while the
   * rate refuses the key's project (as the events thread would refuse it, in the same words and with the
   * same Retry-After); null when it is to be read and handed to the thread.
   */
  refusedBeforeReading(secret: string, now: number): BatchRefused | null {
    const seconds = this.refused.retryAfter(secret, now);
    return seconds === 0 ? null : { refusal: rateRefusal(this.threadData.eventsPerSecond, seconds), retryAfter: seconds };
  }

  /**
   * Hands `batch`, sent with the client key `secret`, to the events thread: settles once it is counted
   * (on disk) or refused. The secret stays on this thread: it is what refusedBeforeReading looks up.
   */
  async receive(batch: ReceivedBatch, secret: string): Promise<BatchOutcome> {
    const request: BatchRequest = { id: this.nextId++, ...batch };
    const reply = await this.onThread(request);
    if (!('answer' in reply || 'refusal' in reply)) throw new Error('the events thread answered a batch with something else');
    if ('answer' in reply) {
      this.refused.admit(secret);
      return { answer: reply.answer };
    }
    const { code, detail, retryAfter, refusedUntil } = reply.refusal;
    if (refusedUntil !== null) this.refused.refuse(secret, refusedUntil, batch.now);
    return { refusal: new FlagwireError(code, detail), retryAfter };
  }

  /** Hands `request` to the events thread (started if none runs); settles with its reply. */
  private onThread(request: BatchRequest | StatisticsRequest | ExportPageRequest): Promise<Settled> {
    const asked: Asked = 'statistics' in request ? 'read' : 'exportPage' in request ? 'export' : 'batch';
    return new Promise<Settled>((resolve, reject) => {
      const thread = this.started();
      if (thread === null) return resolve({ id: request.id, refusal: this.downRefusal(asked) });
      this.pending.set(request.id, { resolve, reject, asked });
      thread.postMessage(request satisfies EventsThreadMessage);
    });
  }

  /** The events thread, started if none runs; null while a thread that died may not be started again yet. */
  private started(): Worker | null {
    if (this.thread !== null) return this.thread;
    const now = this.clock.now();
    if (this.restarts.waitSeconds(now) > 0) return null;
    const workerData: EventsThreadData = { ...this.threadData, startedBefore: this.startedBefore++ };
    const thread = new Worker(new URL('./events-thread.js', import.meta.url), { workerData });
    this.restarts.started(now);
    // It never holds the process: a batch in flight is held by its request, and close() ends it.
    thread.unref();
    thread.on('message', (reply: BatchReply | StatisticsReply | ExportPageReply | 'closed') => this.settle(reply));
    // A thread that dies (a fault of ours, never a client's) refuses what it held with a 503 at once,
    // never leaving a request to hang; an uncaught error is reported by 'error', then 'exit' follows.
    let error: Error | null = null;
    thread.on('error', (err) => {
      error = err;
    });
    thread.on('exit', (code) => {
      if (this.thread !== thread) return;
      this.thread = null;
      this.restarts.died(this.clock.now());
      this.log.error({ err: error, exitCode: code, batchesHeld: this.pending.size }, 'the events thread died');
      for (const [id, { resolve, asked }] of this.pending) resolve({ id, refusal: kDied[asked] });
      this.pending.clear();
    });
    this.thread = thread;
    return thread;
  }

  /** The refusal of a batch (nothing of it is counted), a read or an export's page while the thread that died may not be started again. */
  private downRefusal(asked: Asked): BatchRefusal {
    const seconds = this.restarts.waitSeconds(this.clock.now());
    return {
      code: 'SERVER_BUSY',
      detail: `This node's events thread stopped (a fault of the node, logged) and is started again in ${seconds} s. ${kAskAgain[asked]} after Retry-After.`,
      retryAfter: seconds,
      refusedUntil: null,
    };
  }

  private settle(reply: BatchReply | StatisticsReply | ExportPageReply | 'closed'): void {
    if (reply === 'closed') return;
    const pending = this.pending.get(reply.id);
    if (pending === undefined) return;
    this.pending.delete(reply.id);
    if ('failure' in reply) pending.reject(new Error(`the events thread failed a batch or a read: ${reply.failure}`));
    else pending.resolve(reply);
  }

  /** Ends the events thread and closes the tally file, once the front end has drained (every answered batch is on disk by then). */
  async close(): Promise<void> {
    this.closing = true;
    const thread = this.thread;
    // Taken first: the thread's exit, below, is then no death.
    this.thread = null;
    if (thread !== null) {
      const closed = new Promise<void>((resolve) => {
        thread.on('message', (reply: BatchReply | 'closed') => reply === 'closed' && resolve());
        thread.once('exit', () => resolve());
      });
      thread.postMessage('close' satisfies EventsThreadMessage);
      await closed;
      await thread.terminate();
    }
    await this.writes.close();
    // A folder that cannot be removed now (a file system turned read-only) is the next start's to remove.
    await this.scratch.close().catch((err: unknown) => this.log.warn({ err }, 'an export scratch folder was left in the data dir'));
  }
}

/**
 * The refusal of every events route on a relay: it takes no writes (its copy is the upstream's), and a
 * relay's own tally would hold part of a subject's events. Embedded nodes and nodes on PostgreSQL count.
 */
export function refuseUnlessCounted(config: Readonly<Pick<Config, 'upstream'>>): void {
  if (config.upstream !== null)
    throw new FlagwireError(
      'NOT_FOUND',
      'Events are not counted on a relay: it relays another node and takes no writes. Send them to the node it relays (or any node on its PostgreSQL).',
    );
}

// The front end's handle on events: batches are handed to the events thread (events-thread.ts), started
// with the first one, which reads, resolves and counts them; a key whose project the thread's rate
// refused has its batches refused here, before they are read, until the thread would read them
// (refused-keys.ts). Erasures and the statistics are the front end's own writes and reads of the tally
// (tally-writes.ts: the tally file, or PostgreSQL's), opened on first use.
import { Worker } from 'node:worker_threads';
import type { Config } from '../config.js';
import { FlagwireError } from '../errors.js';
import type { TallyTouches } from '../store/pg/pg-tally.js';
import type { ExperimentTally, RawEventPages, TallyScope, TallyTxn } from '../store/tally-file.js';
import type { BatchReply, BatchRequest, EventsThreadData, EventsThreadMessage, ReceivedBatch } from './events-thread.js';
import { rateRefusal } from './event-rate.js';
import type { EventsAnswer } from './receive.js';
import { RefusedKeys } from './refused-keys.js';
import { TallyWrites } from './tally-writes.js';

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

/** A reply the thread settles a batch with (a failure rejects it). */
type Settled = Exclude<BatchReply, { failure: string }>;

interface Pending {
  resolve(reply: Settled): void;
  reject(err: Error): void;
}

export class EventCounter {
  private readonly writes: TallyWrites;
  private readonly threadData: EventsThreadData;
  private thread: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private readonly refused = new RefusedKeys();

  constructor(
    config: Readonly<
      Pick<
        Config,
        'dataDir' | 'databaseUrl' | 'eventsPerSecond' | 'httpThreads' | 'eventSubjectsPerEnvironment' | 'rawEventBytesPerProject'
      >
    >,
  ) {
    this.writes = new TallyWrites(config);
    const { dataDir, databaseUrl, eventsPerSecond, httpThreads } = config;
    const limits = { subjectsPerEnvironment: config.eventSubjectsPerEnvironment, rawBytesPerProject: config.rawEventBytesPerProject };
    this.threadData = { dataDir, databaseUrl, eventsPerSecond, httpThreads, limits };
  }

  /** The data dir: the tally file's, and where a Parquet export writes its scratch files. */
  get dataDir(): string {
    return this.threadData.dataDir;
  }

  /**
   * Where an export reads raw events: PostgreSQL's tally, or the tally file; null while no tally file
   * is on disk (an embedded node never sent an event), so that an export there answers empty and
   * creates no file.
   */
  rawPages(): Promise<RawEventPages | null> {
    return this.writes.rawPages();
  }

  /** Whether nothing was ever counted here: an embedded node without a tally file (an erasure there erases nothing and creates none). */
  get countedNothing(): boolean {
    return this.threadData.databaseUrl === null && this.writes.existingFile === null;
  }

  /** An experiment's arms and sums in `scope`, read now. */
  experiment(scope: TallyScope, experiment: string): Promise<ExperimentTally> {
    return this.writes.experiment(scope, experiment);
  }

  /** Runs `apply` in a write transaction of the tally of its own (an erasure): see TallyWrites.count. */
  count<T>(scope: TallyScope, touches: TallyTouches, apply: (txn: TallyTxn) => T): Promise<T> {
    return this.writes.count(scope, touches, apply);
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
    const id = this.nextId++;
    const request: BatchRequest = { id, ...batch };
    const reply = await new Promise<Settled>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.started().postMessage(request satisfies EventsThreadMessage);
    });
    if ('answer' in reply) {
      this.refused.admit(secret);
      return { answer: reply.answer };
    }
    const { code, detail, retryAfter, refusedUntil } = reply.refusal;
    if (refusedUntil !== null) this.refused.refuse(secret, refusedUntil, batch.now);
    return { refusal: new FlagwireError(code, detail), retryAfter };
  }

  private started(): Worker {
    if (this.thread !== null) return this.thread;
    const thread = new Worker(new URL('./events-thread.js', import.meta.url), { workerData: this.threadData });
    // It never holds the process: a batch in flight is held by its request, and close() ends it.
    thread.unref();
    thread.on('message', (reply: BatchReply | 'closed') => this.settle(reply));
    // A thread that fails (a fault of ours, never a client's) fails what it held; the next batch starts another.
    const failed = (err: Error) => {
      if (this.thread === thread) this.thread = null;
      for (const { reject } of this.pending.values()) reject(err);
      this.pending.clear();
    };
    thread.on('error', failed);
    thread.on('exit', (code) => failed(new Error(`the events thread ended (exit code ${code})`)));
    this.thread = thread;
    return thread;
  }

  private settle(reply: BatchReply | 'closed'): void {
    if (reply === 'closed') return;
    const pending = this.pending.get(reply.id);
    if (pending === undefined) return;
    this.pending.delete(reply.id);
    if ('failure' in reply) pending.reject(new Error(`the events thread failed a batch: ${reply.failure}`));
    else pending.resolve(reply);
  }

  /** Ends the events thread and closes the tally file, once the front end has drained (every answered batch is on disk by then). */
  async close(): Promise<void> {
    const thread = this.thread;
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

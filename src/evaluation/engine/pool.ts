// The pool of eval workers (worker.ts). Piscina starts them and replaces one that dies or is stopped;
// batches do not go through Piscina's task queue but through each worker's batch channel
// (batch-channel.ts): every worker runs one Piscina task for its life, serving its channel. So the pool
// is the one that notices a worker's end (that task fails) and decides what became of its batches: one
// it had taken is answered 500 by the batcher, one it never took goes to another worker. Each worker
// imports the worker module of every evaluation route set it is given (routes.ts).
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { Piscina } from 'piscina';
import type { Clock } from '../../clock.js';
import type { BatchAbortSignal, BatchDone, BatchRunner } from './batcher.js';
import { ChannelEnd, type ChannelShared, SlotKind, type SlotWork } from './batch-channel.js';
import type { EvalRoutesSpec } from './routes.js';
import type { UsageCount } from '../../model/flags.js';
import { decodeUsage, type EvalTask } from './protocol.js';
import type { EvalWorkerData } from './worker.js';

export interface EvalPoolOptions {
  dataDir: string;
  workers: number;
  clock: Clock;
  log: Logger;
  /** The evaluation route sets whose requests the batches carry. */
  routeSets: readonly EvalRoutesSpec[];
  /** Test hooks, see EvalWorkerData.crashFlagId and hangFlagId. */
  crashFlagId?: string | null;
  hangFlagId?: string | null;
  /** Batches on one worker at once (its channel's batch slots): while the main thread answers one, the worker evaluates the next. */
  batchesPerWorker: number;
}

const kWorkerFile = fileURLToPath(new URL('./worker.js', import.meta.url));
/** How long destroy() lets the workers finish what they took before Piscina ends them. */
const kStopWaitMs = 1000;
const kEmpty = new ArrayBuffer(0);

/** A batch on its way through the pool: the slot work, the channel it was posted to, and whether the batcher gave up on it. */
interface BatchWork extends SlotWork {
  channel: ChannelEnd | null;
  abandoned: boolean;
}

/**
 * One worker's place: its channel (batch slots, then one slot for probes and usage) and its Piscina task.
 * Each worker gets a channel of its own (see ChannelEnd.detach).
 */
class Seat {
  channel: ChannelEnd;
  /** Ends this seat's current worker (Piscina terminates a worker whose task is aborted). */
  stopper = new AbortController();
  /** The worker's one task: settles when the worker ends. */
  task: Promise<unknown> = Promise.resolve();

  constructor(
    readonly batchSlots: number,
    private readonly onFree: () => void,
  ) {
    this.channel = new ChannelEnd(batchSlots + 1, onFree);
  }

  /** A channel for the seat's next worker. */
  renewChannel(): void {
    this.channel = new ChannelEnd(this.batchSlots + 1, this.onFree);
  }

  get controlSlot(): number {
    return this.batchSlots;
  }

  /** A free batch slot, or -1. */
  freeSlot(): number {
    for (let slot = 0; slot < this.batchSlots; slot++) if (this.channel.isFree(slot)) return slot;
    return -1;
  }

  /** Batch slots taken (pump() spreads batches over the workers); batchSlots when none is free. */
  busySlots(): number {
    let busy = 0;
    for (let slot = 0; slot < this.batchSlots; slot++) if (!this.channel.isFree(slot)) busy++;
    return busy;
  }
}

export class EvalPool implements BatchRunner {
  private readonly seats: Seat[] = [];
  /** Batches waiting for a free slot (every worker's are taken, or a worker is being replaced). */
  private readonly waiting: BatchWork[] = [];
  private closing = false;
  /** The probe or usage run in progress (eachWorker): the next one starts after it. */
  private rounds: Promise<unknown> = Promise.resolve();

  private constructor(private readonly piscina: Piscina<ChannelShared, void>) {}

  /** Starts the workers and waits until each has opened the store and answered a probe. */
  static async start(options: EvalPoolOptions): Promise<EvalPool> {
    const { routeSets } = options;
    const workerData: EvalWorkerData = {
      dataDir: options.dataDir,
      clock: options.clock.state,
      // Only the plain data: a EvalRoutes's register() cannot be cloned to a worker.
      routeSets: routeSets.map(({ routes, workerModule, internalErrorBody, revisionNotReachedBody, batchTimedOutBody }) => ({
        routes,
        workerModule,
        internalErrorBody,
        revisionNotReachedBody,
        batchTimedOutBody,
      })),
      crashFlagId: options.crashFlagId ?? null,
      hangFlagId: options.hangFlagId ?? null,
    };
    const piscina = new Piscina<ChannelShared, void>({
      filename: kWorkerFile,
      minThreads: options.workers,
      maxThreads: options.workers,
      idleTimeout: 2 ** 31 - 1,
      // A replaced worker's task waits here while Piscina starts the new worker.
      maxQueue: options.workers,
      // Piscina delivers one task per worker life: its own atomics wait would gain nothing.
      atomics: 'disabled',
      recordTiming: false,
      workerData,
    });
    const { log } = options;
    // A worker error with no task to reject is emitted here; unhandled, it would end the process.
    piscina.on('error', (err: unknown) => log.error({ err }, 'eval worker failed'));
    piscina.on('message', (message: { evalError?: string }) => {
      if (message && typeof message.evalError === 'string') log.error({ err: message.evalError }, 'evaluation failed');
    });
    const pool = new EvalPool(piscina);
    for (let i = 0; i < options.workers; i++) {
      const seat = new Seat(options.batchesPerWorker, () => pool.pump());
      pool.seats.push(seat);
      pool.serve(seat);
    }
    try {
      await Promise.all(pool.seats.map((seat) => pool.control(seat, SlotKind.Probe, () => {})));
    } catch (err) {
      await pool.destroy();
      throw new Error(`the evaluation workers could not start: ${(err as Error).message}`);
    }
    return pool;
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  /** Batches waiting for a worker's free slot. */
  get queueSize(): number {
    return this.waiting.length;
  }

  /**
   * Runs one batch (the batcher's): its requests are copied into a worker's slot, so `task.buffer` stays
   * the caller's. `signal` aborting ends the worker holding it (a stuck batch; Piscina starts another).
   */
  run(task: EvalTask, signal: BatchAbortSignal, done: BatchDone): void {
    const work: BatchWork = {
      kind: SlotKind.Batch,
      requests: task.buffer,
      bytes: task.bytes,
      count: task.count,
      channel: null,
      abandoned: false,
      answered: (answer) => done(null, answer),
      lost: (err) => done(err, null),
    };
    signal.addEventListener('abort', () => this.abandon(work));
    this.waiting.push(work);
    this.pump();
  }

  /** Readiness: every current worker answers a probe within `timeoutMs` (see eachWorker). */
  probe(timeoutMs: number): Promise<{ answered: number; workers: number }> {
    return this.eachWorker(timeoutMs, SlotKind.Probe, () => {});
  }

  /**
   * Flag usage (usage.ts): every worker's evaluation counts since it was last asked, each answer handed
   * to `onCounts`, also one that comes after `timeoutMs` (a worker's counts are taken when it answers).
   */
  async collectUsage(timeoutMs: number, onCounts: (counts: readonly UsageCount[]) => void): Promise<void> {
    await this.eachWorker(timeoutMs, SlotKind.Usage, (answer) => onCounts(decodeUsage(answer)));
  }

  /** Stops every worker once it has answered what it took; after kStopWaitMs, Piscina ends it. */
  async destroy(): Promise<void> {
    this.closing = true;
    for (const seat of this.seats) seat.channel.stop();
    let timer: NodeJS.Timeout | undefined;
    const stopped = Promise.allSettled(this.seats.map((seat) => seat.task));
    await Promise.race([stopped, new Promise((resolve) => (timer = setTimeout(resolve, kStopWaitMs)))]);
    clearTimeout(timer);
    await this.piscina.destroy();
    for (const work of this.waiting.splice(0)) work.lost(new Error('the evaluation workers were stopped'));
  }

  /** Gives `seat` a worker: a Piscina task serving the seat's channel for the worker's life. */
  private serve(seat: Seat): void {
    const shared = seat.channel.forWorker();
    seat.stopper = new AbortController();
    seat.task = this.piscina.run(shared, { transferList: [shared.port], signal: seat.stopper.signal });
    seat.task.then(
      () => this.workerGone(seat, new Error('eval worker stopped')),
      (err: unknown) => this.workerGone(seat, err),
    );
  }

  /** A seat's worker ended: settle what it held, post again what it never took, and give the seat a new worker. */
  private workerGone(seat: Seat, err: unknown): void {
    const untaken = seat.channel.detach(err);
    for (let i = untaken.length - 1; i >= 0; i--) {
      const work = untaken[i]!;
      // A probe or usage run asks the workers there are now; a batch goes first in line, unless the batcher gave up on it.
      if (work.kind !== SlotKind.Batch) work.lost(err);
      else if (!(work as BatchWork).abandoned) this.waiting.unshift(work as BatchWork);
    }
    seat.renewChannel();
    if (!this.closing) this.serve(seat);
    this.pump();
  }

  /** Posts waiting batches into free slots, each to the worker with the fewest batches. */
  private pump(): void {
    while (this.waiting.length > 0 && !this.closing) {
      let best: Seat | null = null;
      let bestBusy = Infinity;
      for (const seat of this.seats) {
        const busy = seat.busySlots();
        if (busy < seat.batchSlots && busy < bestBusy) {
          best = seat;
          bestBusy = busy;
        }
      }
      if (best === null) return;
      const work = this.waiting.shift()!;
      work.channel = best.channel;
      best.channel.post(best.freeSlot(), work);
    }
  }

  /**
   * A batch the batcher gave up on (stuck): dropped if it still waits, else the worker it was posted to
   * is ended, if that worker still holds it. Never posted again: the batcher reuses its buffer.
   */
  private abandon(work: BatchWork): void {
    work.abandoned = true;
    const at = this.waiting.indexOf(work);
    if (at !== -1) {
      this.waiting.splice(at, 1);
      return;
    }
    for (const seat of this.seats) if (seat.channel === work.channel && seat.channel.holds(work)) seat.stopper.abort();
  }

  /**
   * Runs `kind` on every current worker until each has answered or `timeoutMs` passes; `onAnswer` reads
   * each answer, also one that comes later. One such run at a time (a probe waits for a usage collection).
   */
  private eachWorker(
    timeoutMs: number,
    kind: SlotKind,
    onAnswer: (answer: ArrayBufferLike) => void,
  ): Promise<{ answered: number; workers: number }> {
    const run = this.rounds.then(async () => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)));
      const answers = await Promise.all(
        this.seats.map((seat) =>
          Promise.race([
            this.control(seat, kind, onAnswer).then(
              () => true,
              () => false,
            ),
            timeout,
          ]),
        ),
      );
      clearTimeout(timer);
      return { answered: answers.filter(Boolean).length, workers: this.seats.length };
    });
    this.rounds = run.catch(() => {});
    return run;
  }

  /**
   * Posts `kind` into `seat`'s control slot; resolves once answered (after `onAnswer`), rejects if the
   * worker ended first or the slot is still taken by an earlier post that was never answered (a stuck worker).
   */
  private control(seat: Seat, kind: SlotKind, onAnswer: (answer: ArrayBufferLike) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      if (!seat.channel.isFree(seat.controlSlot)) return reject(new Error('the worker has not answered the last probe'));
      seat.channel.post(seat.controlSlot, {
        kind,
        requests: kEmpty,
        bytes: 0,
        count: 0,
        answered: (answer) => {
          onAnswer(answer);
          resolve();
        },
        lost: reject,
      });
    });
  }
}

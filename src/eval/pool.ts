// The Piscina pool of eval workers (worker.ts). Piscina replaces a worker that dies and rejects the
// task it held; the batcher turns that rejection into 500s for the batch's requests. Each worker
// imports the worker module of every evaluation route set it is given (routes.ts).
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { Piscina } from 'piscina';
import type { Clock } from '../clock.js';
import { kEvaluationApiRoutes } from './evaluation-api-routes.js';
import type { BatchAbortSignal, BatchRunner } from './batcher.js';
import type { EvalRoutesSpec } from './routes.js';
import type { FlagUsage } from '../model/flags.js';
import { decodeUsageAnswer, type EvalTask } from './protocol.js';
import type { EvalWorkerData } from './worker.js';

export interface EvalPoolOptions {
  dataDir: string;
  workers: number;
  clock: Clock;
  log: Logger;
  /** The evaluation route sets whose requests the batches carry; the Evaluation API's alone when not given. */
  routeSets?: readonly EvalRoutesSpec[];
  /** Test hooks, see EvalWorkerData.crashFlagId and hangFlagId. */
  crashFlagId?: string | null;
  hangFlagId?: string | null;
  /** Tasks that may wait in Piscina's queue beyond one per worker (the batcher keeps within it). */
  maxQueue: number;
}

const kWorkerFile = fileURLToPath(new URL('./worker.js', import.meta.url));

export class EvalPool implements BatchRunner {
  /** The probe or usage run in progress (eachWorker): the next one starts after it. */
  private rounds: Promise<void> = Promise.resolve();

  private constructor(private readonly piscina: Piscina<EvalTask, ArrayBuffer>) {}

  /** Starts the workers and waits until each has opened the store and answered an empty batch. */
  static async start(options: EvalPoolOptions): Promise<EvalPool> {
    const routeSets = options.routeSets ?? [kEvaluationApiRoutes];
    const workerData: EvalWorkerData = {
      dataDir: options.dataDir,
      clock: options.clock.state,
      // Only the plain data: a EvalRoutes's register() cannot be cloned to a worker.
      routeSets: routeSets.map(({ routes, workerModule, internalErrorBody, revisionNotReachedBody }) => ({
        routes,
        workerModule,
        internalErrorBody,
        revisionNotReachedBody,
      })),
      crashFlagId: options.crashFlagId ?? null,
      hangFlagId: options.hangFlagId ?? null,
    };
    const piscina = new Piscina<EvalTask, ArrayBuffer>({
      filename: kWorkerFile,
      minThreads: options.workers,
      maxThreads: options.workers,
      idleTimeout: 2 ** 31 - 1,
      maxQueue: options.maxQueue,
      // Piscina's default 'sync' atomics: an idle worker waits on Atomics.wait and reads the next task
      // without an event-loop turn. That is why worker.ts renews its LMDB snapshot explicitly.
      atomics: 'sync',
      recordTiming: false,
      workerData,
    });
    // A worker error with no task to reject is emitted here; unhandled, it would end the process.
    piscina.on('error', (err: unknown) => options.log.error({ err }, 'eval worker failed'));
    piscina.on('message', (message: { evalError?: string }) => {
      if (message && typeof message.evalError === 'string') options.log.error({ err: message.evalError }, 'evaluation failed');
    });
    const pool = new EvalPool(piscina);
    try {
      const warmups = [];
      for (let i = 0; i < options.workers; i++) warmups.push(pool.run({ buffer: new ArrayBuffer(8), count: 0 }));
      await Promise.all(warmups);
    } catch (err) {
      await piscina.destroy().catch(() => {});
      throw new Error(`the evaluation workers could not start: ${(err as Error).message}`);
    }
    return pool;
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  /** Tasks waiting in Piscina's queue for a free worker. */
  get queueSize(): number {
    return this.piscina.queueSize;
  }

  /** Readiness: every current worker thread answers a probe task within `timeoutMs` (see eachWorker). */
  probe(timeoutMs: number): Promise<{ answered: number; workers: number }> {
    return this.eachWorker(timeoutMs, { probe: true }, (answer) => new Int32Array(answer, 0, 1)[0]!);
  }

  /**
   * Flag usage (usage.ts): every worker's evaluation counts since it was last asked, each answer handed
   * to `onCounts`, also one that comes after `timeoutMs` (a worker's counts are taken when it answers).
   */
  async collectUsage(timeoutMs: number, onCounts: (counts: readonly FlagUsage[]) => void): Promise<void> {
    await this.eachWorker(timeoutMs, { usage: true }, (answer) => {
      const { threadId, counts } = decodeUsageAnswer(answer);
      onCounts(counts);
      return threadId;
    });
  }

  /**
   * Sends tasks of `kind` until every current worker thread has answered one, or `timeoutMs` passes;
   * `answered` reads the answer and says which thread it came from. Piscina cannot address a worker, so
   * tasks go out in rounds (one per worker not yet heard from); an idle pool answers in one round, a
   * busy one when its workers take them from the queue. One such run at a time (a probe waits for a
   * usage collection): together they could fill the queue room the batcher leaves (maxQueue).
   */
  private eachWorker(
    timeoutMs: number,
    kind: Pick<EvalTask, 'probe' | 'usage'>,
    answered: (answer: ArrayBuffer) => number,
  ): Promise<{ answered: number; workers: number }> {
    const run = this.rounds.then(() => this.roundsUntilEach(timeoutMs, kind, answered));
    this.rounds = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  private async roundsUntilEach(
    timeoutMs: number,
    kind: Pick<EvalTask, 'probe' | 'usage'>,
    answered: (answer: ArrayBuffer) => number,
  ): Promise<{ answered: number; workers: number }> {
    const expected = new Set(this.piscina.threads.map((t) => t.threadId));
    const seen = new Set<number>();
    const deadline = performance.now() + timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    try {
      while (seen.size < expected.size) {
        const left = deadline - performance.now();
        if (left <= 0) break;
        const round: Promise<void>[] = [];
        for (let i = seen.size; i < expected.size; i++) {
          const buffer = new ArrayBuffer(8);
          round.push(
            this.piscina.run({ buffer, count: 0, ...kind }, { transferList: [buffer] }).then(
              (answer) => void seen.add(answered(answer)),
              () => {},
            ),
          );
        }
        const before = seen.size;
        await Promise.race([Promise.all(round), new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
        clearTimeout(timer);
        // A round refused at once (Piscina's queue full) is retried after a pause, not in a busy loop.
        if (seen.size === before) await new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(25, left))));
      }
    } finally {
      clearTimeout(timer);
    }
    let count = 0;
    for (const id of expected) if (seen.has(id)) count++;
    return { answered: count, workers: expected.size };
  }

  run(task: EvalTask, signal?: BatchAbortSignal): Promise<ArrayBuffer> {
    return this.piscina.run(task, { transferList: [task.buffer], signal });
  }

  /** Stops every worker; a task still running is rejected. */
  async destroy(): Promise<void> {
    await this.piscina.destroy();
  }
}

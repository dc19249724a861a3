// The Piscina pool of eval workers (worker.ts). Piscina replaces a worker that dies and rejects the
// task it held; the batcher turns that rejection into 500s for the batch's requests. Each worker
// imports the worker module of every front door it is given (door.ts).
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { Piscina } from 'piscina';
import type { Clock } from '../clock.js';
import { kEvaluationApiDoor } from './api-door.js';
import type { BatchAbortSignal, BatchRunner } from './batcher.js';
import type { DoorSpec } from './door.js';
import type { EvalTask } from './protocol.js';
import type { EvalWorkerData } from './worker.js';

export interface EvalPoolOptions {
  dataDir: string;
  workers: number;
  clock: Clock;
  log: Logger;
  /** The front doors whose requests the batches carry; the Evaluation API's alone when not given. */
  doors?: readonly DoorSpec[];
  /** Test hooks, see EvalWorkerData.crashFlagId and hangFlagId. */
  crashFlagId?: string | null;
  hangFlagId?: string | null;
  /** Tasks that may wait in Piscina's queue beyond one per worker (the batcher keeps within it). */
  maxQueue: number;
}

const kWorkerFile = fileURLToPath(new URL('./worker.js', import.meta.url));

export class EvalPool implements BatchRunner {
  private constructor(private readonly piscina: Piscina<EvalTask, ArrayBuffer>) {}

  /** Starts the workers and waits until each has opened the store and answered an empty batch. */
  static async start(options: EvalPoolOptions): Promise<EvalPool> {
    const doors = options.doors ?? [kEvaluationApiDoor];
    const workerData: EvalWorkerData = {
      dataDir: options.dataDir,
      clock: options.clock.buffer,
      // Only the plain data: a FrontDoor's register() cannot be cloned to a worker.
      doors: doors.map(({ routes, workerModule, internalErrorBody }) => ({ routes, workerModule, internalErrorBody })),
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

  /**
   * Readiness: sends probe tasks until every current worker thread has answered one, or `timeoutMs`
   * passes. Piscina cannot address a worker, so probes go out in rounds (one per worker not yet heard
   * from); an idle pool answers in one round, a busy one when its workers take them from the queue.
   */
  async probe(timeoutMs: number): Promise<{ answered: number; workers: number }> {
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
          round.push(this.piscina.run({ buffer, count: 0, probe: true }, { transferList: [buffer] }).then(
            (answer) => void seen.add(new Int32Array(answer, 0, 1)[0]!),
            () => {},
          ));
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
    let answered = 0;
    for (const id of expected) if (seen.has(id)) answered++;
    return { answered, workers: expected.size };
  }

  run(task: EvalTask, signal?: BatchAbortSignal): Promise<ArrayBuffer> {
    return this.piscina.run(task, { transferList: [task.buffer], signal });
  }

  /** Stops every worker; a task still running is rejected. */
  async destroy(): Promise<void> {
    await this.piscina.destroy();
  }
}

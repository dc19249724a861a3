// The main thread's handle on the writer actor: `call` sends a command and resolves with its result
// once the change is committed to disk, or rejects with a FlagwireError.
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { fromErrorData, FlagwireError } from '../errors.js';
import type { CommandInput, CommandName, CommandOutput } from './commands.js';
import type { WriterReply, WriterRequest, WriterStart } from './protocol.js';

interface Pending {
  resolve(value: unknown): void;
  reject(err: FlagwireError): void;
  /** performance.now() when sent (commit latency). */
  sentAt: number;
}

export class WriterClient {
  private worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closing = false;
  /** Called with the milliseconds from sending a command to its reply (metrics); null when nobody measures. */
  onReply: ((ms: number) => void) | null = null;

  constructor(private readonly start: WriterStart, private readonly log: Logger) {
    this.worker = this.spawn();
  }

  static create(dataDir: string, clock: Clock, log: Logger): WriterClient {
    return new WriterClient({ dataDir, clock: clock.buffer }, log);
  }

  get queueDepth(): number {
    return this.pending.size;
  }

  call<N extends CommandName>(name: N, input: CommandInput<N>): Promise<CommandOutput<N>> {
    if (this.closing) return Promise.reject(new FlagwireError('STORE_UNAVAILABLE', 'The server is shutting down; retry shortly.'));
    const id = this.nextId++;
    return new Promise<CommandOutput<N>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, sentAt: performance.now() });
      const request: WriterRequest = { id, name, input };
      this.worker.postMessage(request);
    });
  }

  /**
   * Readiness: whether the writer thread answers a ping within `timeoutMs`. The actor answers pings
   * between transactions, without writing anything (a write would bump configSeq and drop every eval
   * worker's compiled flags on each probe).
   */
  ping(timeoutMs: number): Promise<boolean> {
    if (this.closing) return Promise.resolve(false);
    const id = this.nextId++;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(false);
      }, timeoutMs);
      this.pending.set(id, {
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
        reject: () => {
          clearTimeout(timer);
          resolve(false);
        },
        sentAt: -1,
      });
      const request: WriterRequest = { id, name: 'ping', input: null, ping: true };
      this.worker.postMessage(request);
    });
  }

  /**
   * Resolves once every command sent before this call is committed (or refused): a barrier through
   * the actor's queue, with no transaction of its own. Used by the test hook /__test/writer-idle.
   */
  idle(): Promise<void> {
    if (this.closing) return Promise.resolve();
    const id = this.nextId++;
    return new Promise<void>((resolve) => {
      this.pending.set(id, { resolve: () => resolve(), reject: () => resolve(), sentAt: -1 });
      const request: WriterRequest = { id, name: 'idle', input: null, idle: true };
      this.worker.postMessage(request);
    });
  }

  /** Waits for every command sent so far to be answered, then stops the actor. */
  async close(): Promise<void> {
    this.closing = true;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage('close');
    await exited;
  }

  private spawn(): Worker {
    const worker = new Worker(new URL('./actor.js', import.meta.url), { workerData: this.start });
    worker.on('message', (replies: WriterReply[]) => {
      for (const reply of replies) {
        const pending = this.pending.get(reply.id);
        if (!pending) continue;
        this.pending.delete(reply.id);
        if (this.onReply !== null && pending.sentAt >= 0) this.onReply(performance.now() - pending.sentAt);
        if (reply.ok) {
          pending.resolve(reply.value);
        } else {
          if (reply.log) this.log.error({ err: reply.log, code: reply.error.code }, 'writer command failed');
          pending.reject(fromErrorData(reply.error));
        }
      }
    });
    worker.on('error', (err) => this.log.error({ err }, 'writer thread failed'));
    worker.on('exit', (code) => {
      // Commands in flight when the thread died were not acknowledged: fail them, never leave them hanging.
      for (const [id, pending] of this.pending) {
        this.pending.delete(id);
        pending.reject(new FlagwireError('STORE_UNAVAILABLE', 'The writer stopped before the change was confirmed; it may not have been applied. Retry.'));
      }
      if (!this.closing) {
        this.log.error({ code }, 'writer thread exited; restarting it');
        this.worker = this.spawn();
      }
    });
    return worker;
  }
}

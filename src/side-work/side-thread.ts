// Where a front end does work that grows with what a request sent and reads the store, but changes
// nothing: a thread of its own, never the front end's, where every evaluation and request of the node
// would wait behind it, nor the writer's, where every project's changes would. Such work: a flag
// file's plan (src/flags-as-code, up to 2 MiB of rules to check and compare), a fragment's new rule
// parsed, checked as flagd would load it and checked with every flag that uses it (src/fragments). Each
// front end hands such jobs to one side thread, started at its first job, that reads the store through
// its own read-only handle: jobs wait for each other, nothing else waits for them. The front end closes
// it at its shutdown. A job is declared by the capability it belongs to (sideJob), as its module's URL
// and export: the thread imports it there, so this mechanism names no capability.
import { Worker } from 'node:worker_threads';
import { type ErrorData, fromErrorData } from '../errors.js';
import type { StoreRevision } from '../store/interfaces.js';

declare module '../routes/handler.js' {
  interface RouteServices {
    /** Where work that grows with a request's body and reads the store runs: never on the front end's thread. */
    sideThread: SideThread;
  }
}

declare module '../console-route/call.js' {
  interface ApiCall {
    /** As the Management API's (RouteServices.sideThread). */
    sideThread: SideThread;
  }
}

/**
 * A job of the side thread: the function `name` exported by the module at `module` (a URL), which takes
 * the thread's read-only store and `I`, and returns `O`, changing nothing; `O` crosses by a structured clone.
 */
export interface SideJob<I, O> {
  readonly module: string;
  readonly name: string;
  /** Never set: carries the job's types to run(). */
  readonly types?: (input: I) => O;
}

/** A job declared by its module (`import.meta.url`, where it is declared beside its function) and its export's name. */
export function sideJob<I, O>(module: string, name: string): SideJob<I, O> {
  return { module, name };
}

export interface SideRequest {
  id: number;
  module: string;
  name: string;
  input: unknown;
}

/** A job's answer: its value at the store revision it read, a refusal, or the text of a bug. */
export type SideReply =
  | { id: number; ok: true; value: unknown; storeRevision: StoreRevision }
  | { id: number; ok: false; error: ErrorData }
  | { id: number; ok: false; bug: string };

export interface SideThreadStart {
  dataDir: string;
}

/** A job's value, and the store revision it read. */
export interface SideAnswer<T> {
  value: T;
  storeRevision: StoreRevision;
}

/** How a job's input crosses: `move`, buffers handed over whole (a request body the caller reads no more); `release`, run once the thread holds them no more. */
export interface SideJobOptions {
  move?: readonly ArrayBuffer[];
  release?: () => void;
}

interface Pending {
  resolve(answer: SideAnswer<unknown>): void;
  reject(err: Error): void;
  release: (() => void) | undefined;
}

export class SideThread {
  private thread: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly dataDir: string) {}

  /** Whether a thread is running now (started by a job, not yet closed or ended). */
  get running(): boolean {
    return this.thread !== null;
  }

  /** Runs `job` on the side thread against the newest commit of the store. */
  run<I, O>(job: SideJob<I, O>, input: I, options: SideJobOptions = {}): Promise<SideAnswer<O>> {
    if (this.closed) {
      options.release?.();
      return Promise.reject(new Error('the side thread is closed (the node is shutting down)'));
    }
    const thread = this.thread ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as Pending['resolve'], reject, release: options.release });
      // Held while a job is under way, so that a process awaiting its answer lives to read it.
      thread.ref();
      thread.postMessage({ id, module: job.module, name: job.name, input } satisfies SideRequest, [...(options.move ?? [])]);
    });
  }

  /** Ends the side thread at shutdown; a job still under way is answered as a failure, and none starts after. */
  async close(): Promise<void> {
    this.closed = true;
    const thread = this.thread;
    this.thread = null;
    await thread?.terminate();
  }

  private start(): Worker {
    const workerData: SideThreadStart = { dataDir: this.dataDir };
    const thread = new Worker(new URL('./side-thread-entry.js', import.meta.url), { workerData });
    thread.on('message', (reply: SideReply) => this.answer(thread, reply));
    // A thread that failed (or was ended by close) fails what it held; the next job starts a new one.
    const ended = (why: Error) => {
      if (this.thread === thread) this.thread = null;
      for (const id of [...this.pending.keys()]) this.settle(id)?.reject(why);
    };
    thread.on('error', ended);
    thread.on('exit', (code) => ended(new Error(`the side thread ended (exit code ${code})`)));
    // The front end's listen socket keeps the process alive; an idle side thread must not (after the
    // listeners: adding one refs the thread again).
    thread.unref();
    this.thread = thread;
    return thread;
  }

  private answer(thread: Worker, reply: SideReply): void {
    const pending = this.settle(reply.id);
    if (this.pending.size === 0) thread.unref();
    if (pending === undefined) return;
    if (reply.ok) pending.resolve({ value: reply.value, storeRevision: reply.storeRevision });
    else if ('error' in reply) pending.reject(fromErrorData(reply.error));
    else pending.reject(new Error(`side thread: ${reply.bug}`));
  }

  private settle(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    if (pending === undefined) return undefined;
    this.pending.delete(id);
    pending.release?.();
    return pending;
  }
}

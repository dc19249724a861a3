// Where a front end plans a flag file (POST /api/v1/plan): a thread of its own, never the front end's.
// A plan parses the file, checks every rule as flagd would load it, reads the whole project and compares
// them: work that grows with the file (1 MiB at most, and what its $refs add, 1 MiB more at most:
// docs/operations.md, "Rules: resolved size"). The largest took 1.8-6.5 s on the shared 2-core machine;
// on the front-end thread every evaluation and request of the node waited that long behind it, and on
// the writer thread every project's changes would. So each front end hands its plans to one plan thread
// (started at its first plan) that reads the store through its own read-only handle: plans wait for each
// other, nothing else waits for them. Apply's plan stays in the writer, in the transaction that applies it.
import { Worker } from 'node:worker_threads';
import { type ErrorData, fromErrorData } from '../errors.js';
import { movableBuffers, type ReceivedBody } from '../model/request-body.js';
import type { StoreRevision } from '../store/interfaces.js';
import type { PlanResult } from './schemas.js';

declare module '../routes/handler.js' {
  interface RouteServices {
    /** Where plans run: never on the front end's thread. */
    planner: Planner;
  }
}

export interface PlanRequest {
  id: number;
  projectId: string;
  received: ReceivedBody;
  prune: boolean;
}

/**
 * A plan's answer: its result at the store revision it read (what Flagwire-Revision names; the plan's own
 * `revision` is the project's), a refusal, or the text of a bug.
 */
export type PlanReply =
  | { id: number; ok: true; value: PlanResult; storeRevision: StoreRevision }
  | { id: number; ok: false; error: ErrorData }
  | { id: number; ok: false; bug: string };

export interface PlanThreadStart {
  dataDir: string;
}

interface Pending {
  resolve(answer: { value: PlanResult; storeRevision: StoreRevision }): void;
  reject(err: Error): void;
  /** Frees the body's reservation: called once the plan thread holds its copy no more. */
  release(): void;
}

export class Planner {
  private thread: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(private readonly dataDir: string) {}

  /** The plan of `received` (the file as the request's body) against the project, as the API sees it. */
  plan(
    projectId: string,
    received: ReceivedBody,
    prune: boolean,
    release: () => void,
  ): Promise<{ value: PlanResult; storeRevision: StoreRevision }> {
    const thread = this.thread ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, release });
      // The body is moved, not copied: the request hands it over whole (ReceivedBody).
      thread.postMessage({ id, projectId, received, prune } satisfies PlanRequest, movableBuffers(received));
    });
  }

  /** Ends the plan thread; a plan still under way is answered as a failure. */
  async close(): Promise<void> {
    const thread = this.thread;
    this.thread = null;
    await thread?.terminate();
  }

  private start(): Worker {
    const workerData: PlanThreadStart = { dataDir: this.dataDir };
    const thread = new Worker(new URL('./plan-thread.js', import.meta.url), { workerData });
    // The front end's listen socket keeps the process alive; an idle plan thread must not.
    thread.unref();
    thread.on('message', (reply: PlanReply) => this.answer(reply));
    // A thread that failed (or was ended by close) fails what it held; the next plan starts a new one.
    const ended = (why: Error) => {
      if (this.thread === thread) this.thread = null;
      for (const id of [...this.pending.keys()]) this.settle(id)?.reject(why);
    };
    thread.on('error', ended);
    thread.on('exit', (code) => ended(new Error(`the plan thread ended (exit code ${code})`)));
    this.thread = thread;
    return thread;
  }

  private answer(reply: PlanReply): void {
    const pending = this.settle(reply.id);
    if (pending === undefined) return;
    if (reply.ok) pending.resolve({ value: reply.value, storeRevision: reply.storeRevision });
    else if ('error' in reply) pending.reject(fromErrorData(reply.error));
    else pending.reject(new Error(`plan thread: ${reply.bug}`));
  }

  private settle(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    if (pending === undefined) return undefined;
    this.pending.delete(id);
    pending.release();
    return pending;
  }
}

// Several front-end threads (FLAGWIRE_HTTP_THREADS > 1): the main thread starts them, listens on the
// port with an acceptor app that has no routes of its own, and uWS hands each accepted connection to
// the next thread's app in turn (addChildAppDescriptor). Chosen over every thread listening with
// SO_REUSEPORT: the port stays exclusive, so a second server on a busy port still fails at start
// instead of silently taking a share of the first one's connections, and port 0 (tests) names one port.
//
// What is the process's stays exact across the threads: the per-address rate limit and failed-auth
// counts and the body budget live in shared memory (src/http/address-table.ts, src/http/body.ts);
// every write goes through the one writer thread, and each thread's reads renew their LMDB snapshot
// per request, so a change answered by one thread is seen by the next request on any other. What must
// be summed or checked across threads (/metrics, /ready, test hooks) is collected from every thread
// through here. A front-end thread that dies ends the process (exit 1): its connections would
// otherwise be handed to an app that no longer exists, and every acknowledged write is on disk.
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { TemplatedApp } from 'uWebSockets.js';
import type { AuthFailures } from '../http/auth-failures.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { BodyBudgets } from '../http/body.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { SignInLimits } from '../http/sign-in-limits.js';
import type { WriterClient } from '../writer/client.js';
import type { CollectKind, FromFrontendThread, FrontendThreadStart, ToFrontendThread } from './frontend-messages.js';
import { childApps } from './listen.js';

export interface FrontendThreadsOptions {
  config: Readonly<Config>;
  log: Logger;
  clock: Clock;
  writer: WriterClient;
  rateLimiter: RateLimiter | null;
  authFailures: AuthFailures;
  signInLimits: SignInLimits;
  reportRate: RateLimiter;
  bodies: BodyBudgets;
  /** A random key made at start, the same on every front-end thread of this process: what a route signs ids the node alone issues with (MCP session ids). */
  nodeKey: Uint8Array;
}

/** How long a collection waits for every thread: readiness adds its own probe budget to it. */
const kCollectMs = 2000;

interface Thread {
  worker: Worker;
  descriptor: number;
}

export class FrontendThreads {
  private readonly waiting = new Map<number, { values: unknown[]; left: number; done: (values: unknown[]) => void }>();
  private nextId = 1;
  private closing = false;
  private acceptor: TemplatedApp | null = null;

  private constructor(
    private readonly threads: Thread[],
    private readonly log: Logger,
  ) {}

  /** Starts `config.httpThreads` front-end threads and waits until each has built its app. */
  static async start(options: FrontendThreadsOptions): Promise<FrontendThreads> {
    const { config, log, writer } = options;
    const started = await Promise.allSettled(
      Array.from({ length: config.httpThreads }, (_, thread) => {
        const channel = writer.connect();
        const start: FrontendThreadStart = {
          config: { ...config },
          thread,
          clock: options.clock.state,
          writer: channel,
          rateLimiter: options.rateLimiter?.state ?? null,
          authFailures: options.authFailures.state,
          signInLimits: options.signInLimits.state,
          reportRate: options.reportRate.state,
          bodies: options.bodies.state,
          nodeKey: options.nodeKey,
        };
        const worker = new Worker(new URL('./frontend-thread.js', import.meta.url), { workerData: start, transferList: [channel] });
        return new Promise<Thread>((resolve, reject) => {
          const onMessage = (msg: FromFrontendThread) => {
            if (msg.type === 'ready') resolve({ worker, descriptor: msg.descriptor });
            else if (msg.type === 'failed') reject(new Error(msg.message));
            else return;
            worker.off('message', onMessage);
          };
          worker.on('message', onMessage);
          worker.once('error', reject);
          worker.once('exit', (code) => reject(new Error(`front-end thread ${thread} exited with ${code} while starting`)));
        });
      }),
    );
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed !== undefined) {
      await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.worker.terminate() : undefined)));
      throw new Error(`the front-end threads could not start: ${(failed.reason as Error).message}`);
    }
    const fleet = new FrontendThreads(
      started.map((s) => (s as PromiseFulfilledResult<Thread>).value),
      log,
    );
    fleet.watch();
    // A restarted writer: every thread gets a channel to the new one.
    writer.onRestart = () =>
      fleet.threads.forEach(({ worker }) => {
        const channel = writer.connect();
        worker.postMessage({ type: 'writer', channel } satisfies ToFrontendThread, [channel]);
      });
    return fleet;
  }

  /** Hands `acceptor`'s connections to the threads' apps, in turn. */
  attach(acceptor: TemplatedApp): void {
    this.acceptor = acceptor;
    for (const { descriptor } of this.threads) childApps(acceptor).addChildAppDescriptor(descriptor);
  }

  /** The process listens on `port`: every thread's links name it. */
  async listening(port: number): Promise<void> {
    await this.collect('listening', port);
  }

  /** Shutdown's first step on every thread: readiness 503, change streams ended. */
  async stopServiceRoutes(): Promise<void> {
    await this.collect('stopServiceRoutes', 0);
  }

  /** Stops every thread: in-flight requests get up to `drainMs`, then each closes its pool and channel. */
  async close(drainMs: number): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.threads.map(({ worker, descriptor }) => {
        // No new connection goes to a thread that is stopping (or gone).
        if (this.acceptor !== null) childApps(this.acceptor).removeChildAppDescriptor(descriptor);
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        worker.postMessage({ type: 'stop', drainMs } satisfies ToFrontendThread);
        return exited;
      }),
    );
  }

  private watch(): void {
    this.threads.forEach(({ worker }, thread) => {
      worker.on('message', (msg: FromFrontendThread) => {
        if (msg.type === 'gather') {
          void this.collect(msg.kind, msg.arg).then((values) =>
            worker.postMessage({ type: 'gathered', id: msg.id, values } satisfies ToFrontendThread),
          );
        } else if (msg.type === 'collected') {
          this.collected(msg.id, thread, msg.value);
        }
      });
      worker.on('error', (err) => this.log.error({ err, thread }, 'front-end thread failed'));
      worker.on('exit', (code) => {
        if (this.closing) return;
        this.log.fatal({ thread, code }, 'a front-end thread stopped; the process exits (its connections cannot be served)');
        process.exit(1);
      });
    });
  }

  /** Asks every thread for `kind`; each value is undefined where that thread did not answer in time. */
  private collect(kind: CollectKind, arg: number): Promise<unknown[]> {
    const id = this.nextId++;
    const count = this.threads.length;
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(), kCollectMs + (kind === 'probe' ? arg : 0));
      const finish = () => {
        clearTimeout(timer);
        const entry = this.waiting.get(id);
        this.waiting.delete(id);
        resolve(entry?.values ?? []);
      };
      this.waiting.set(id, { values: new Array<unknown>(count).fill(undefined), left: count, done: finish });
      for (const { worker } of this.threads) worker.postMessage({ type: 'collect', id, kind, arg } satisfies ToFrontendThread);
    });
  }

  private collected(id: number, thread: number, value: unknown): void {
    const entry = this.waiting.get(id);
    if (entry === undefined) return;
    entry.values[thread] = value;
    if (--entry.left === 0) entry.done(entry.values);
  }
}

// Counts requests answered after their handler returned, so shutdown can wait for them, and says where
// the front end's shutdown is, so that a write is either answered or never applied: while it drains,
// every answer says `Connection: close` (a kept-alive client would otherwise send its next request into
// a drain that never goes quiet, and have it cut off unanswered once the drain budget runs out); once
// drained, a request still arriving on a kept-alive connection is closed unread (guardDrain), so it never
// reaches the writer, whose answer could no longer be sent.
import type { HttpRequest, TemplatedApp } from 'uWebSockets.js';
import { trackAbort, type PendingResponse } from './http.js';
import { interceptRoutes } from './intercept-routes.js';

export class InFlight {
  private count = 0;
  private idle: (() => void)[] = [];
  /** performance.now() of the last start(). */
  private lastStart = -Infinity;
  private phase: 'serving' | 'draining' | 'drained' = 'serving';

  /** From the first drained() call on: every answer closes its connection. */
  get draining(): boolean {
    return this.phase !== 'serving';
  }

  /** Call when a request goes async; call the returned function once it is answered. */
  start(): () => void {
    this.count++;
    this.lastStart = performance.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.count === 0) for (const resolve of this.idle.splice(0)) resolve();
    };
  }

  get size(): number {
    return this.count;
  }

  /**
   * Resolves once nothing is in flight and no request has started for `quietMs`, or after `timeoutMs`,
   * with the number of requests still in flight then (0: drained). The quiet time is for shutdown: the
   * listener is closed, but a connection accepted just before may not have sent its request yet, and
   * that request is served too, not refused.
   */
  async drained(timeoutMs: number, quietMs = 0): Promise<number> {
    this.phase = 'draining';
    await this.waitQuiet(timeoutMs, quietMs);
    this.phase = 'drained';
    return this.count;
  }

  /** Closes a request that arrives once drained, before anything of it is read. */
  refuseIfDrained(res: PendingResponse): boolean {
    if (this.phase !== 'drained') return false;
    trackAbort(res);
    res.close();
    return true;
  }

  private async waitQuiet(timeoutMs: number, quietMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) return;
      if (this.count > 0) {
        await this.settled(left);
        continue;
      }
      const quietFor = performance.now() - this.lastStart;
      if (quietFor >= quietMs) {
        // Timers run before the poll phase of their loop turn: requests that reached the sockets while
        // this thread had no core are read only after this one. A setImmediate runs after that poll, so
        // they are served (with Connection: close) instead of being closed unread once drained.
        const lastStart = this.lastStart;
        await new Promise((resolve) => setImmediate(resolve));
        if (this.count === 0 && this.lastStart === lastStart) return;
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(quietMs - quietFor, left)));
    }
  }

  /** Resolves when nothing is in flight, or after `timeoutMs`. */
  private settled(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/**
 * Guards every route registered on `app` from now on with `inFlight`'s shutdown: each response learns
 * whether to close its connection (closesConnection, read when it is answered, so an answer to a request
 * that arrived before the drain began closes too), and a request arriving once drained is closed unread.
 */
export function guardDrain(app: TemplatedApp, inFlight: InFlight): TemplatedApp {
  return interceptRoutes(app, (_method, _pattern, handler) => (res: PendingResponse, req: HttpRequest) => {
    if (inFlight.refuseIfDrained(res)) return;
    res.drain = inFlight;
    return handler(res, req);
  });
}

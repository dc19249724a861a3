// Routes for black-box tests only, registered when FLAGWIRE_TEST_HOOKS=1 (never in production):
// move the clock forward instead of sleeping through a 60 s window or 24 hours, flush token
// activity and flag usage now instead of waiting for the next interval, make the Management API meet an
// unexpected error (nothing a client can send does: the 500 path is otherwise untestable), and wait
// until the writer has committed everything sent to it (a fuzz test compares the store after a
// refused request only once nothing is pending).
import type { TemplatedApp } from 'uWebSockets.js';
import type { Clock } from '../clock.js';
import { sendJson, trackAbort } from '../http/http.js';
import { kRoutes, registerRoutes } from '../routes/route-table.js';
import type { RegisteredRoute } from './route-recorder.js';

/** Armed by `POST /__test/fault?count=N`: the next N reads through `withFaults` throw a plain Error. */
export class Faults {
  private armed = 0;

  arm(count: number): void {
    this.armed = count;
  }

  trip(): void {
    if (this.armed === 0) return;
    this.armed--;
    throw new Error('fault injected by POST /__test/fault');
  }
}

/** `reader` with every method call first passing `faults.trip()`. */
export function withFaults<T extends object>(reader: T, faults: Faults): T {
  return new Proxy(reader, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        faults.trip();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

export interface TestHookDeps {
  clock: Clock;
  faults: Faults;
  /** Token activity and flag usage written now (every front-end thread's). */
  flush(): Promise<void>;
  /** Every write sent so far committed (every front-end thread's). */
  idle(): Promise<void>;
  routes?: () => readonly RegisteredRoute[];
}

export function registerTestHooks(app: TemplatedApp, deps: TestHookDeps): void {
  // Every (method, pattern) registered on the app: the OpenAPI test checks each is documented.
  registerRoutes(app, kRoutes, {
    testRoutes: (res) => sendJson(res, 200, deps.routes?.() ?? []),
    // `advance=S` moves the clock S seconds on; `align=S` moves it to just after the next multiple of S
    // seconds (within the second after it), so a test can start a run of requests at a window boundary.
    testClock: (res, req) => {
      const query = new URLSearchParams(req.getQuery() ?? '');
      const seconds = Number(query.get('advance'));
      if (Number.isInteger(seconds)) deps.clock.advance(seconds);
      const period = Number(query.get('align'));
      if (Number.isInteger(period) && period > 0) {
        const periodMs = period * 1000;
        deps.clock.advance(Math.ceil((periodMs - (deps.clock.now() % periodMs)) / 1000));
      }
      sendJson(res, 200, { now: deps.clock.now() });
    },
    testFault: (res, req) => {
      const count = Number(new URLSearchParams(req.getQuery() ?? '').get('count') ?? '1');
      if (Number.isInteger(count) && count >= 0) deps.faults.arm(count);
      sendJson(res, 200, { armed: count });
    },
    testFlush: (res) => {
      trackAbort(res);
      void deps.flush().then(() => sendJson(res, 200, { flushed: true }));
    },
    // Answers once every command sent to the writer before this request is committed.
    testWriterIdle: (res) => {
      trackAbort(res);
      void deps.idle().then(() => sendJson(res, 200, { idle: true }));
    },
  });
}

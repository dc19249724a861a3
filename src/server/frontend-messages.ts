// Messages between the main thread and the front-end threads (frontend-threads.ts, frontend-thread.ts).
import type { MessagePort } from 'node:worker_threads';
import type { AuthFailuresState } from '../http/auth-failures.js';
import type { Config } from '../config.js';
import type { BodyBudgetsState } from '../http/body.js';
import type { RateLimiterState } from '../http/rate-limit.js';
import type { SignInLimitsState } from '../http/sign-in-limits.js';

/** What a front-end thread starts with: the process's shared state, and its channel to the writer. */
export interface FrontendThreadStart {
  config: Config;
  /** This thread's number, 0-based. */
  thread: number;
  clock: SharedArrayBuffer;
  writer: MessagePort;
  /** Null only in the bench's twin without the limiter (a test hook). */
  rateLimiter: RateLimiterState | null;
  authFailures: AuthFailuresState;
  signInLimits: SignInLimitsState;
  /** Unleash SDK reports per project (src/unleash/report-rate.ts). */
  reportRate: RateLimiterState;
  bodies: BodyBudgetsState;
  /** A random key made at start, the same on every front-end thread of this process: what a route signs ids the node alone issues with (MCP session ids). */
  nodeKey: Uint8Array;
}

/**
 * What the main thread asks of every front-end thread at once: a readiness probe of its eval workers,
 * its metrics, token activity and flag usage written now, its writes committed, the listen port, or
 * readiness and change streams stopped (the first step of shutdown).
 */
export type CollectKind = 'probe' | 'metrics' | 'flush' | 'idle' | 'listening' | 'stopServiceRoutes';

export type ToFrontendThread =
  | { type: 'collect'; id: number; kind: CollectKind; arg: number }
  /** The answer to this thread's own `gather`: every thread's value, undefined where one did not answer. */
  | { type: 'gathered'; id: number; values: unknown[] }
  /** A channel to the restarted writer. */
  | { type: 'writer'; channel: MessagePort }
  | { type: 'stop'; drainMs: number };

export type FromFrontendThread =
  /** The app is built: its uWS descriptor, for the main thread's acceptor. */
  | { type: 'ready'; descriptor: number }
  | { type: 'failed'; message: string }
  | { type: 'collected'; id: number; value: unknown }
  /** A request answered by this thread needs every thread's figures (/ready, /metrics, test hooks). */
  | { type: 'gather'; id: number; kind: CollectKind; arg: number }
  | { type: 'stopped' };

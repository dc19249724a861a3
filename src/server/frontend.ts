// One front end: a uWebSockets.js app serving every route, with what its handlers need (evaluation
// and its pool of eval workers, the Management API's memo and activity, readiness, change stream,
// metrics). With one front-end thread the main thread builds it and listens on it (start.ts); with
// several, each front-end thread builds its own (frontend-thread.ts) and the main thread's acceptor hands
// it connections (frontend-threads.ts). What must be the process's, not the thread's (the writer, the
// per-address limits, the body budget), is given.
import type { TemplatedApp } from 'uWebSockets.js';
import type { Logger } from 'pino';
import { ActivityRecorder } from '../tokens/activity.js';
import { FlagSetReadRecorder } from '../sync/read-recorder.js';
import type { AuthFailures } from '../http/auth-failures.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { kTestSwitches } from '../test-switches.js';
import { routeNumbers } from '../all-routes.js';
import { evaluationApiRoutes, kEvaluationApiRoutes } from '../evaluation/engine/evaluation-api-routes.js';
import { SideThread } from '../side-work/side-thread.js';
import { EventCounter } from '../events/event-counter.js';
import { createEvaluation, type Evaluation } from '../evaluation/engine/service.js';
import { writtenUsage } from '../evaluation/engine/usage.js';
import { forwardedUsage } from '../relay/usage-forwarder.js';
import type { BodyBudgets } from '../http/body.js';
import { TrustedProxies } from '../http/client-address.js';
import { InFlight } from '../http/in-flight.js';
import { RevisionWaiter } from '../http/revisions.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { Metrics } from '../metrics/metrics.js';
import { kOfrepRoutes, ofrepRoutes } from '../ofrep/routes.js';
import type { Store } from '../store/interfaces.js';
import { kUnleashFrontendRoutes, unleashFrontendRoutes } from '../unleash/hosted-routes.js';
import { MemoReader } from '../store/memo-reader.js';
import type { WriterClient } from '../writer/client.js';
import type { SignInLimits } from '../http/sign-in-limits.js';
import { createApp } from './app.js';
import { createServiceRoutes, type ServiceRoutes } from './service-routes.js';
import { registeredRoutes } from './route-recorder.js';
import { Faults, registerTestHooks, withFaults } from './test-hooks.js';

/** The process-wide answers a front end gives when it is one of several threads (frontend-threads.ts). */
export interface Fleet {
  /** Every thread's eval workers probed (readiness). */
  probe(timeoutMs: number): Promise<{ answered: number; workers: number }>;
  /** Every thread's metrics, summed, in the text format. */
  metrics(): Promise<string>;
  /** Every thread's token activity, flag usage and flag set reads written now (test hook). */
  flush(): Promise<void>;
  /** Every thread's writes committed (test hook). */
  idle(): Promise<void>;
}

export interface FrontendOptions {
  config: Readonly<Config>;
  log: Logger;
  clock: Clock;
  /** What this front end reads (the Management API, readiness, the change stream); it writes through `writer`. */
  store: Store;
  writer: WriterClient;
  bodies: BodyBudgets;
  rateLimiter: RateLimiter | null;
  authFailures: AuthFailures;
  signInLimits: SignInLimits;
  /** Unleash SDK reports per project, the process's (src/unleash/report-rate.ts). */
  reportRate: RateLimiter;
  /** A random key made at start, the same on every front-end thread of this process: what a route signs ids the node alone issues with (MCP session ids). */
  nodeKey: Uint8Array;
  /** Eval workers of this front end's own pool. */
  evalWorkers: number;
  /** Null with one front-end thread: its own figures are the process's. */
  fleet: Fleet | null;
}

/**
 * Shutdown serves on until no request has started for this long (within the drain budget): a
 * connection accepted just before the listener closed gets its request answered, not refused.
 */
const kDrainQuietMs = 100;
/**
 * Requests (Management API, Evaluation API, OFREP) that may wait for a revision at once per front end:
 * past it they are refused 503 at once. Evaluation's also count in its queue's bounds, the Management
 * API's bodies in its body budget.
 */
const kMaxWaitingForRevision = 10_000;

export interface Frontend {
  readonly app: TemplatedApp;
  readonly evaluation: Evaluation;
  readonly activity: ActivityRecorder;
  readonly flagSetReads: FlagSetReadRecorder;
  readonly features: ServiceRoutes;
  readonly metrics: Metrics | null;
  /** The port is known once the process listens: the Management API's links name it. */
  setListenConfig(config: Readonly<Config>): void;
  /** Readiness 503 and change streams ended: the first step of shutdown. */
  stopServiceRoutes(): void;
  /** Waits for in-flight requests (up to `drainMs`), then stops evaluation, activity and the app. */
  close(drainMs: number): Promise<void>;
}

export async function createFrontend(options: FrontendOptions): Promise<Frontend> {
  const { config, log, clock, store, writer, bodies, fleet } = options;
  const inFlight = new InFlight();
  const metrics = config.metrics ? new Metrics() : null;
  // Flagwire-Min-Revision's waits (src/http/revisions.ts), read from this front end's snapshot.
  const revisions = new RevisionWaiter({
    current: () => {
      store.resetReadTxn();
      return store.revision();
    },
    waitMs: config.minRevisionWaitMs,
    maxWaiting: kMaxWaitingForRevision,
  });
  // The evaluation route sets onto evaluation, each from its own module: the Evaluation API's, OFREP's and
  // Unleash's front-end API's, each given its routes' numbers (derived from the declarations) once, here.
  const routeSets = [
    evaluationApiRoutes(metrics, routeNumbers(kEvaluationApiRoutes)),
    ofrepRoutes({
      bodies: bodies.credentialFree,
      evalBytes: bodies.evalBytes,
      clock,
      proxies: config.trustedProxies.length === 0 ? null : new TrustedProxies(config.trustedProxies),
      metrics,
      numbers: routeNumbers(kOfrepRoutes),
    }),
    unleashFrontendRoutes({
      bodies: bodies.credentialFree,
      evalBytes: bodies.evalBytes,
      clock,
      metrics,
      numbers: routeNumbers(kUnleashFrontendRoutes),
    }),
  ];
  // A relay writes nothing: no token activity; its flag usage goes upstream (docs/deployment.md: relays).
  const recordsTo = config.upstream === null ? writer : null;
  const evaluation = await createEvaluation({
    config: { ...config, evalWorkers: options.evalWorkers },
    log,
    inFlight,
    clock,
    metrics,
    routeSets,
    usage: config.upstream === null ? writtenUsage(writer, log) : forwardedUsage(config.upstream, log),
    revisions,
  });
  const activity = new ActivityRecorder(recordsTo, log, kTestSwitches.activityFlushMs ?? undefined);
  activity.start();
  // GET /v1/flag-sets' reads, for the lifecycle's "usage unknown" (src/sync/read-recorder.ts).
  const flagSetReads = new FlagSetReadRecorder(recordsTo, log, clock);
  await flagSetReads.start();
  // Readiness, metrics, change stream (src/server/service-routes.ts).
  const features = createServiceRoutes({
    store,
    writer,
    evaluation,
    bodies,
    metrics,
    log,
    maxStreams: config.streamMaxConnections,
    test: kTestSwitches,
    probe: fleet === null ? (ms) => evaluation.probe(ms) : (ms) => fleet.probe(ms),
    renderMetrics: fleet === null ? null : () => fleet.metrics(),
  });
  const faults = kTestSwitches.hooks ? new Faults() : null;
  // The Management API's reads go through a memo renewed per request (src/store/memo-reader.ts).
  const reader = new MemoReader(store);
  const sideThread = new SideThread(config.dataDir);
  const events = new EventCounter(config, log, clock);
  const deps = {
    store: faults === null ? reader : withFaults(reader, faults),
    writer,
    sideThread,
    events,
    clock,
    config,
    log,
    inFlight,
    bodies: bodies.management,
    revisions,
    evaluation,
    usage: evaluation,
    changes: features.changes,
    activity,
    flagSetReads,
    rateLimiter: options.rateLimiter,
    authFailures: options.authFailures,
    signInLimits: options.signInLimits,
    reportRate: options.reportRate,
    nodeKey: options.nodeKey,
    metrics,
    features: features.routes,
    // The web console's sign-in and edit bodies: credential-free until signed in, so that share.
    consoleBodies: bodies.credentialFree,
  };
  const app = createApp(deps);
  if (faults !== null) {
    registerTestHooks(app, {
      clock,
      faults,
      routes: () => registeredRoutes(app),
      flush:
        fleet === null
          ? () => Promise.all([activity.flush(), evaluation.flushUsage(), flagSetReads.flush()]).then(() => {})
          : () => fleet.flush(),
      idle: fleet === null ? () => writer.idle() : () => fleet.idle(),
    });
  }
  return {
    app,
    evaluation,
    activity,
    flagSetReads,
    features,
    metrics,
    setListenConfig(listening) {
      deps.config = listening;
    },
    stopServiceRoutes: () => features.stop(),
    async close(drainMs) {
      features.stop();
      const cutOff = await inFlight.drained(drainMs, kDrainQuietMs);
      // Said, because these clients get no answer (or a 503 below): an operator sees why, and the tests
      // prove by this line's absence that nothing held a shutdown, not by how long it took.
      if (cutOff > 0) log.warn({ inFlight: cutOff, drainMs }, 'shutdown: the drain budget ended with requests in flight');
      // Requests still waiting for a revision past the drain budget are answered 503 now.
      revisions.close();
      // Each writes its last counts through the writer; side by side, so closing waits for one round trip
      // and not three of the second the deadline leaves after the drain (src/server/start.ts).
      await Promise.all([evaluation.close(), activity.stop(), flagSetReads.stop()]);
      await sideThread.close();
      await events.close();
      app.close();
    },
  };
}

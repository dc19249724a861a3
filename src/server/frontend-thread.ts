// A front-end thread (FLAGWIRE_HTTP_THREADS > 1): builds its own front end (frontend.ts) on the process's
// shared state, hands the main thread's acceptor its app, and answers what the main thread collects
// from every thread (frontend-threads.ts). It reads the store through its own read-only handle and writes
// through its own channel to the one writer thread.
import { parentPort, workerData } from 'node:worker_threads';
import { AuthFailures } from '../http/auth-failures.js';
import { Clock } from '../clock.js';
import { evalWorkersOfThread, withListenPort } from '../config.js';
import { BodyBudgets } from '../http/body.js';
import { RateLimiter } from '../http/rate-limit.js';
import { SignInLimits } from '../http/sign-in-limits.js';
import { renderMetrics, type MetricsSnapshot } from '../metrics/metrics.js';
import { openStore } from '../store/open-store.js';
import { kStoreLayout } from '../capabilities.js';
import { WriterClient } from '../writer/client.js';
import { createFrontend, type Frontend } from './frontend.js';
import type { CollectKind, FromFrontendThread, FrontendThreadStart, ToFrontendThread } from './frontend-messages.js';
import { childApps } from './listen.js';
import { createLogger } from './logger.js';

const start = workerData as FrontendThreadStart;
const main = parentPort!;
const post = (msg: FromFrontendThread) => main.postMessage(msg);
const { config } = start;
const log = createLogger(config.logLevel).child({ thread: start.thread });
// With its layout: the approvals' views read how each change kind bears on an environment (src/store/interfaces.ts: EnvironmentBearing).
const store = openStore(config.dataDir, { readOnly: true, layout: kStoreLayout });
const writer = WriterClient.over(start.writer, config, config.writeTimeoutMs, log);

/** This thread's requests that wait for every thread's answer (gather), by id. */
const gathering = new Map<number, (values: unknown[]) => void>();
let nextGather = 1;
const gather = (kind: CollectKind, arg = 0) =>
  new Promise<unknown[]>((resolve) => {
    const id = nextGather++;
    gathering.set(id, resolve);
    post({ type: 'gather', id, kind, arg });
  });

let frontend: Frontend | null = null;
try {
  frontend = await createFrontend({
    config,
    log,
    clock: new Clock(start.clock),
    store,
    writer,
    bodies: new BodyBudgets(start.bodies),
    rateLimiter: start.rateLimiter === null ? null : new RateLimiter(start.rateLimiter),
    authFailures: new AuthFailures(start.authFailures),
    signInLimits: new SignInLimits(start.signInLimits),
    reportRate: new RateLimiter(start.reportRate),
    nodeKey: start.nodeKey,
    evalWorkers: evalWorkersOfThread(config, start.thread),
    fleet: {
      async probe(timeoutMs) {
        const values = await gather('probe', timeoutMs);
        return (values as ({ answered: number; workers: number } | undefined)[]).reduce<{ answered: number; workers: number }>(
          // A thread that did not answer counts with its workers unanswered.
          (sum, v, thread) =>
            v === undefined
              ? { answered: sum.answered, workers: sum.workers + evalWorkersOfThread(config, thread) }
              : { answered: sum.answered + v.answered, workers: sum.workers + v.workers },
          { answered: 0, workers: 0 },
        );
      },
      metrics: async () => renderMetrics((await gather('metrics')).filter((v): v is MetricsSnapshot => v !== undefined)),
      flush: async () => void (await gather('flush')),
      idle: async () => void (await gather('idle')),
    },
  });
} catch (err) {
  post({ type: 'failed', message: (err as Error).message });
  await store.close();
  process.exit(1);
}
const ours = frontend!;

async function collect(kind: CollectKind, arg: number): Promise<unknown> {
  switch (kind) {
    case 'probe':
      return ours.evaluation.probe(arg);
    case 'metrics':
      return ours.metrics?.snapshot();
    case 'flush':
      await Promise.all([ours.activity.flush(), ours.evaluation.flushUsage(), ours.flagSetReads.flush()]);
      return true;
    case 'idle':
      await writer.idle();
      return true;
    case 'listening':
      ours.setListenConfig(withListenPort(config, arg));
      return true;
    case 'stopServiceRoutes':
      ours.stopServiceRoutes();
      return true;
  }
}

main.on('message', (msg: ToFrontendThread) => {
  switch (msg.type) {
    case 'collect':
      void collect(msg.kind, msg.arg).then(
        (value) => post({ type: 'collected', id: msg.id, value }),
        (err: unknown) => {
          log.error({ err, kind: msg.kind }, 'front-end thread could not answer');
          post({ type: 'collected', id: msg.id, value: undefined });
        },
      );
      return;
    case 'gathered':
      gathering.get(msg.id)?.(msg.values);
      gathering.delete(msg.id);
      return;
    case 'writer':
      writer.reconnect(msg.channel);
      return;
    case 'stop':
      void (async () => {
        await ours.close(msg.drainMs);
        await writer.close();
        await store.close();
        post({ type: 'stopped' });
        process.exit(0);
      })();
  }
});
post({ type: 'ready', descriptor: childApps(ours.app).getDescriptor() });

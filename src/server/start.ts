// Starts the service: store, writer actor, evaluation pool, HTTP front end; stops it on SIGTERM/SIGINT.
import * as uWS from 'uWebSockets.js';
import { Clock } from '../clock.js';
import { withListenPort, type Config } from '../config.js';
import { evaluationApiDoor } from '../eval/api-door.js';
import { createEvaluation } from '../eval/service.js';
import { ofrepDoor } from '../ofrep/door.js';
import { MemoReader } from '../store/memo-reader.js';
import type { Store } from '../store/interfaces.js';
import { openStore, verifyStore } from '../store/open-store.js';
import { WriterClient } from '../writer/client.js';
import type { DemoSeed } from '../writer/demo-seed.js';
import { ActivityRecorder } from '../api/activity.js';
import { AuthFailures } from '../api/auth-failures.js';
import { RateLimiter } from '../http/rate-limit.js';
import { Mailer } from '../mail/mailer.js';
import { createApp } from './app.js';
import { listenExclusive } from './listen.js';
import { Faults, registerTestHooks, withFaults } from './test-hooks.js';
import { InFlight } from '../http/in-flight.js';
import { BodyBudgets } from '../http/body.js';
import { createLogger } from './logger.js';
import { Metrics } from '../metrics/metrics.js';
import { createFeatures } from './features.js';
import { registeredRoutes } from './route-recorder.js';

export interface RunningServer {
  port: number;
  close(): Promise<void>;
}

export interface StartOptions {
  demo: boolean;
  /** Install SIGTERM/SIGINT handlers that stop the server and exit the process. */
  handleSignals?: boolean;
}

/** Whole shutdown budget: in-flight requests get most of it, closing the rest. */
const kShutdownDrainMs = 3500;
/**
 * After a signal the process exits within this time even if some part of closing hangs (a stuck worker
 * thread): every acknowledged write is already on disk, so nothing is lost by exiting, and an orchestrator
 * waiting on the process is never held past its grace period (commonly 5 s or more).
 */
const kShutdownDeadlineMs = 4500;

export async function startServer(config: Readonly<Config>, options: StartOptions): Promise<RunningServer> {
  const log = createLogger(config.logLevel);
  // A damaged data file is refused here, with a message, not by a crash at the first request reading it.
  await verifyStore(config.dataDir, config.databaseUrl);
  const store: Store = openStore(config.dataDir);
  const clock = new Clock();
  const inFlight = new InFlight();
  // One budget for every request body the process buffers (OFREP and the Management API).
  const bodies = new BodyBudgets(config.maxBufferedBodyBytes);
  const writer = WriterClient.create(config.dataDir, clock, config.writeTimeoutMs, log, config.databaseUrl);
  // Through the writer, so that with PostgreSQL the seed goes there (and only into an empty database).
  const seed = options.demo ? await writer.call('seedDemo', {}).catch(async (err: unknown) => {
    await writer.close();
    await store.close();
    throw err;
  }) : null;
  const metrics = config.metrics ? new Metrics() : null;
  // The front doors onto evaluation, each from its own module: the Evaluation API's and OFREP's.
  const doors = [evaluationApiDoor(metrics), ofrepDoor({ bodies: bodies.credentialFree, metrics })];
  const evaluation = await createEvaluation({ config, log, inFlight, clock, metrics, doors, writer }).catch(async (err: unknown) => {
    await writer.close();
    await store.close();
    throw err;
  });
  const activity = new ActivityRecorder(writer, log);
  activity.start();
  // Readiness, metrics, change stream (src/server/features.ts).
  const features = createFeatures({ store, writer, evaluation, bodies, metrics, log, test: config.test });
  const faults = config.test.hooks ? new Faults() : null;
  // The Management API's reads go through a memo renewed per request (src/store/memo-reader.ts).
  const reader = new MemoReader(store);
  const deps = {
    store: faults === null ? reader : withFaults(reader, faults), writer, clock, config, log, inFlight, bodies: bodies.management, evaluation, activity,
    // The bench measures the limiter's cost against a twin without it (bench/run.ts, (j) and (k)):
    // switched off only together with the test hooks, so no production setting can drop the spec's limit.
    rateLimiter: config.test.rateLimitOff ? null : new RateLimiter({ limit: config.rateLimit }),
    authFailures: new AuthFailures(config.authFailLimit),
    metrics,
    features: features.routes,
  };
  const mailer = config.smtpUrl === null ? null : new Mailer(config.smtpUrl, store, writer, clock, log);
  mailer?.start();
  const app = createApp(deps);
  if (faults !== null) registerTestHooks(app, { clock, activity, usage: evaluation, faults, writer, routes: () => registeredRoutes(app) });

  // A port that cannot be bound is a ConfigError: the console prints one line naming the setting, exit 2.
  const listenSocket = await listenExclusive(app, config.host, config.port).catch(async (err: unknown) => {
    features.stop();
    await mailer?.stop();
    await evaluation.close();
    await activity.stop();
    await writer.close();
    await store.close();
    throw err;
  });
  const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket);
  deps.config = withListenPort(config, port);
  log.info({ host: config.host, port, dataDir: config.dataDir }, 'flagwire listening');
  if (seed) printDemo(seed, `http://${config.host}:${port}`, config.dataDir);
  process.stdout.write(`Flagwire listening on http://${config.host}:${port} (data: ${config.dataDir})\n`);

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      features.stop();
      // Started first so that its wait for a send in progress (src/mail/mailer.ts) runs during the
      // drain, not after it; the writer it records through stays open until both are done.
      const mailStopped = mailer?.stop();
      uWS.us_listen_socket_close(listenSocket);
      await inFlight.drained(kShutdownDrainMs);
      await evaluation.close();
      await activity.stop();
      await mailStopped;
      await writer.close();
      app.close();
      await store.close();
      log.info('flagwire stopped');
    })();
    return closing;
  };
  if (options.handleSignals) {
    const onSignal = (signal: NodeJS.Signals) => {
      log.info({ signal }, 'shutting down');
      setTimeout(() => {
        log.error({ deadlineMs: kShutdownDeadlineMs }, 'shutdown did not finish in time; exiting');
        process.exit(1);
      }, kShutdownDeadlineMs).unref();
      close().then(() => process.exit(0), (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
  return { port, close };
}

function printDemo(seed: DemoSeed | { seeded: false }, base: string, dataDir: string): void {
  if (!seed.seeded) {
    process.stdout.write('Data directory is not empty: no demo data seeded.\n');
    return;
  }
  const lines = ['Demo data seeded.', `  organisation  ${seed.orgId}  Demo Org (Teams plan)`];
  for (const p of seed.projects) {
    lines.push(`  project       ${p.id}  ${p.name} (${p.kind === 'multi' ? `environments: ${p.environments.join(', ')}` : 'single environment'})`);
  }
  lines.push('Token secrets (shown once, keep them):');
  for (const t of seed.tokens) lines.push(`  ${t.name.padEnd(20)} ${t.permission.padEnd(5)} ${t.secret}`);
  const write = seed.tokens.find((t) => t.name === 'demo-write')!;
  const flag = seed.flags[0]!;
  lines.push('Try:');
  lines.push(`  curl -s -H "Authorization: Bearer ${write.secret}" ${base}/api/v1/flags`);
  lines.push(`  curl -s "${base}/v1/flags/${flag.id}?targetingKey=user-42"`);
  lines.push(`  curl -s -X POST ${base}/ofrep/v1/evaluate/flags/${flag.name} -H 'X-Flagwire-Project: ${flag.projectId}' -d '{"context": {"targetingKey": "user-42"}}'`);
  // The ids (never the secrets) can be found again later; the data dir is named because ./data is relative.
  lines.push(`Find the ids again: npx flagwire project list --data ${dataDir}  (then: flag list PROJECT_ID, token list PROJECT_ID)`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

// Starts the service: store, writer actor, the front end (one on the main thread, or one per
// front-end thread behind an acceptor: frontend-threads.ts), the capabilities' background work
// (src/capability/background-work.ts); stops it on SIGTERM/SIGINT.
import { kWriterCommands } from '../writer/thread/demo-seed.js';
import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import * as uWS from 'uWebSockets.js';
import { AuthFailures } from '../http/auth-failures.js';
import { Clock } from '../clock.js';
import { changeLogBounds, withListenPort, type Config } from '../config.js';
import { kTestSwitches } from '../test-switches.js';
import { listenedPorts, NodeBackground } from '../capability/background-work.js';
import { kCapabilityGrpcServices, kCapabilityList, kStoreLayout } from '../capabilities.js';
import { BodyBudgets } from '../http/body.js';
import { RateLimiter } from '../http/rate-limit.js';
import { createReportLimiter } from '../unleash/report-rate.js';
import { SignInLimits } from '../http/sign-in-limits.js';
import type { Store } from '../store/interfaces.js';
import type { DataDirClaim } from '../store/data-dir-claim.js';
import { claimForServer, markCleanStop, openStore, verifyStore } from '../store/open-store.js';
import { WriterClient } from '../writer/client.js';
import type { DemoSeed } from '../writer/thread/demo-seed.js';
import { createFrontend } from './frontend.js';
import { FrontendThreads } from './frontend-threads.js';
import { listenExclusive, portsProblem } from './listen.js';
import { createLogger } from './logger.js';
import { randomId } from '../model/ids.js';
import { hashPassword, kPasswordCost } from '../model/passwords.js';
import { isEmptyStore } from '../model/records/lookups.js';

export interface RunningServer {
  port: number;
  close(): Promise<void>;
}

export interface StartOptions {
  demo: boolean;
  /** Install SIGTERM/SIGINT handlers that stop the server and exit the process. */
  handleSignals?: boolean;
}

/**
 * After a signal the process exits within the drain budget (config.shutdownDrainMs, 3.5 s by default)
 * and this much more even if some part of closing hangs (a stuck worker thread): every acknowledged write
 * is already on disk, so nothing is lost by exiting, and an orchestrator waiting on the process is never
 * held past its grace period (commonly 5 s or more: the default exits within 4.5 s).
 */
export const kShutdownCloseMs = 1000;

/** The front end(s) as start-up and shutdown see them, whether on the main thread or on several threads. */
interface Serving {
  app: uWS.TemplatedApp;
  listening(port: number): Promise<void>;
  stopServiceRoutes(): Promise<void>;
  close(drainMs: number): Promise<void>;
}

/** Every capability's background work, as the node starts it and as start-up tries the ports it listens on. */
const kBackground = kCapabilityList.flatMap((c) => c.background ?? []);

export async function startServer(config: Readonly<Config>, options: StartOptions): Promise<RunningServer> {
  // A port that cannot be bound, the HTTP port or one the background work declares (the sync service's),
  // is refused before anything starts or is written (a ConfigError: the console prints one line naming
  // the setting, exit 2): found at listening, it cost the writer thread, the front-end threads and the evaluation workers first (1.9 CPU
  // s with two threads: issue 57). The only try: the command line's entry, which reads serve's settings
  // first, does not bind (serve-config.ts). A test skips it to reach the refusal at listening.
  const problem = kTestSwitches.portsUntried ? null : await portsProblem(config, listenedPorts(kBackground, config));
  if (problem !== null) throw problem;
  // Held until the server has stopped: migrate-to-postgres refuses a data dir that a server uses.
  const claim = claimForServer(config.dataDir);
  return startClaimed(config, options, claim).catch((err: unknown) => {
    claim.release();
    throw err;
  });
}

async function startClaimed(config: Readonly<Config>, options: StartOptions, claim: DataDirClaim): Promise<RunningServer> {
  const log = createLogger(config.logLevel);
  // A damaged data file is refused here, with a message, not by a crash at the first request reading it.
  await verifyStore(config.dataDir, kStoreLayout, config, changeLogBounds(config));
  const store: Store = openStore(config.dataDir, { layout: kStoreLayout, changeLog: changeLogBounds(config) });
  const clock = Clock.create();
  // What is the process's, whichever thread serves a request: one body budget (OFREP and the
  // Management API) with each credential's evaluation body bytes, the per-address limits (spec: Limits, per server instance), the writer.
  const bodies = BodyBudgets.create(config.maxBufferedBodyBytes, config.evalBodyBytesPerSecond);
  // The bench measures the limiter's cost against a twin without it (bench/run.ts, (j) and (k)):
  // switched off only together with the test hooks, so no production setting can drop the spec's limit.
  const rateLimiter = kTestSwitches.rateLimitOff ? null : RateLimiter.create({ limit: config.rateLimit });
  const authFailures = AuthFailures.create(config.authFailLimit);
  const signInLimits = SignInLimits.create(config.signInFailLimit);
  const reportRate = createReportLimiter();
  const nodeKey = randomBytes(32);
  const writer = WriterClient.create(config.dataDir, clock, config.writeTimeoutMs, log, config, changeLogBounds(config));
  const { seed, demoPassword } = await seedIfDemo(config, options, store, writer).catch(async (err: unknown) => {
    await writer.close();
    await store.close();
    throw err;
  });
  const shared = { config, log, clock, writer, bodies, rateLimiter, authFailures, signInLimits, reportRate, nodeKey };
  const serving = await serve(shared, store).catch(async (err: unknown) => {
    await writer.close();
    await store.close();
    throw err;
  });
  let metricsUrl: string | null = null;
  const background = new NodeBackground({
    config,
    store,
    writer,
    clock,
    log,
    authFailures,
    ownMetricsUrl: () => metricsUrl,
    grpcServices: kCapabilityGrpcServices,
  });
  // What start-up opened so far, closed again when a later step fails.
  const abandon = async (err: unknown): Promise<never> => {
    await background.abandon();
    await serving.close(0);
    await writer.close();
    await store.close();
    throw err;
  };
  // Before listening (their phases: src/capability/background-work.ts): the senders poll, the changes and
  // rollout steps that fell due while the node was down have run, a followed flag file is applied.
  await background.start(kBackground).catch(abandon);
  // A relay listens once its follower has said what its copy holds, so its first /ready is the truth.
  await writer.relayKnown;
  // Bound now, not when it was found free (above): a port taken since is refused here, the same way.
  const listenSocket = await listenExclusive(serving.app, config.host, config.port).catch(abandon);
  const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket);
  await serving.listening(port);
  metricsUrl = `${localUrl(config.host, port)}/metrics`;

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      const featuresStopped = serving.stopServiceRoutes();
      // Every stop begins now, so that the outbox senders' wait for a send in progress (src/mail/mailer.ts)
      // runs during the drain, not after it; the writer they record through stays open until all are done.
      const backgroundStopped = background.stopForShutdown();
      uWS.us_listen_socket_close(listenSocket);
      await featuresStopped;
      await backgroundStopped.beforeDrain;
      await serving.close(config.shutdownDrainMs);
      await backgroundStopped.afterDrain;
      await writer.close();
      await store.close();
      // Still holding the data dir: its file as this run leaves it spares the next start its read-through.
      if (!writer.failed) markCleanStop(config.dataDir);
      claim.release();
      log.info('flagwire stopped');
    })();
    return closing;
  };
  if (options.handleSignals) stopOnSignals(close, log, config.shutdownDrainMs);
  // Only now say so: a supervisor (or a test) that signals as soon as it reads the line must find the
  // handlers installed, not the default action, which ends the process without draining or closing the store.
  log.info({ host: config.host, port, dataDir: config.dataDir, httpThreads: config.httpThreads }, 'flagwire listening');
  // The suite's switch for cheap password hashes is said where an operator reads that the node started:
  // a hash made under it stays as weak as it was made.
  if (kTestSwitches.passwordCostLog2 !== null)
    log.warn(
      { scryptN: kPasswordCost.N },
      'console passwords are hashed at a test cost (FLAGWIRE_TEST_PASSWORD_COST): never set it in production',
    );
  if (seed) printDemo(seed, `http://${config.host}:${port}`, config, demoPassword);
  process.stdout.write(`Flagwire listening on http://${config.host}:${port} (data: ${config.dataDir})\n`);
  return { port, close };
}

/**
 * With --demo: the demo seed, through the writer, so that with PostgreSQL the seed goes there (and only
 * into an empty database). The demo owner's console password is drawn and hashed here (scrypt, 0.1 s),
 * never on the writer thread, and printed once by printDemo when the seed was made; not drawn for a
 * data dir that has data (with PostgreSQL the local copy may be empty while the database is not: the
 * writer decides).
 */
async function seedIfDemo(config: Readonly<Config>, options: StartOptions, store: Store, writer: WriterClient) {
  if (!options.demo) return { seed: null, demoPassword: null };
  const seedable = config.databaseUrl !== null || isEmptyStore(store);
  const demoPassword = seedable ? randomId(16) : null;
  const seed = await writer.call(
    kWriterCommands.seedDemo,
    demoPassword === null ? {} : { ownerPasswordHash: await hashPassword(demoPassword) },
  );
  return { seed, demoPassword };
}

/** This node as it reaches itself: a wildcard address is reached through loopback. */
function localUrl(host: string, port: number): string {
  if (host === '0.0.0.0' || host === '') return `http://127.0.0.1:${port}`;
  if (host === '::') return `http://[::1]:${port}`;
  return host.includes(':') ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}

/**
 * SIGTERM and SIGINT close the server (exit 0), or exit 1 when closing fails or outlasts its deadline.
 * A signal while it closes is logged and changes nothing: the deadline already bounds the shutdown, and
 * a second signal (a supervisor's retry, a script's stop after its own) would otherwise end the process
 * mid-drain by the signal's default action, cutting the answers it was draining.
 */
function stopOnSignals(close: () => Promise<void>, log: Logger, drainMs: number): void {
  const deadlineMs = drainMs + kShutdownCloseMs;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.info({ signal }, 'already shutting down');
      return;
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => {
      log.error({ deadlineMs }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, deadlineMs).unref();
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

type Shared = Pick<
  Parameters<typeof FrontendThreads.start>[0],
  'config' | 'log' | 'clock' | 'writer' | 'bodies' | 'rateLimiter' | 'authFailures' | 'signInLimits' | 'reportRate' | 'nodeKey'
>;

/**
 * One front-end thread: the main thread's own front end listens. Several: an acceptor on the main
 * thread hands connections to the threads' front ends (frontend-threads.ts).
 */
async function serve(shared: Shared, store: Store): Promise<Serving> {
  const { config } = shared;
  if (config.httpThreads === 1) {
    const frontend = await createFrontend({ ...shared, store, evalWorkers: config.evalWorkers, fleet: null });
    return {
      app: frontend.app,
      listening: async (port) => frontend.setListenConfig(withListenPort(config, port)),
      stopServiceRoutes: async () => frontend.stopServiceRoutes(),
      close: (drainMs) => frontend.close(drainMs),
    };
  }
  const threads = await FrontendThreads.start(shared);
  const acceptor = uWS.App();
  threads.attach(acceptor);
  return {
    app: acceptor,
    listening: (port) => threads.listening(port),
    stopServiceRoutes: () => threads.stopServiceRoutes(),
    async close(drainMs) {
      await threads.close(drainMs);
      acceptor.close();
    },
  };
}

function printDemo(seed: DemoSeed | { seeded: false }, base: string, config: Readonly<Config>, password: string | null): void {
  const { dataDir } = config;
  if (!seed.seeded) {
    process.stdout.write('Data directory is not empty: no demo data seeded.\n');
    return;
  }
  const lines = ['Demo data seeded.', `  organisation  ${seed.orgId}  Demo Org (Teams plan)`];
  for (const p of seed.projects) {
    lines.push(
      `  project       ${p.id}  ${p.name} (${p.kind === 'multi' ? `environments: ${p.environments.join(', ')}` : 'single environment'})`,
    );
  }
  lines.push('Token secrets (shown once, keep them):');
  for (const t of seed.tokens) lines.push(`  ${t.name.padEnd(20)} ${t.permission.padEnd(5)} ${t.secret}`);
  if (password !== null) {
    lines.push(`Web console (shown once, keep it): ${base}/console`);
    lines.push(`  email ${seed.ownerEmail}  password ${password}`);
  }
  const write = seed.tokens.find((t) => t.name === 'demo-write')!;
  const flag = seed.flags[0]!;
  lines.push('Try:');
  lines.push(`  curl -s -H "Authorization: Bearer ${write.secret}" ${base}/api/v1/flags`);
  lines.push(`  curl -s "${base}/v1/flags/${flag.id}?targetingKey=user-42"`);
  lines.push(
    `  curl -s -X POST ${base}/ofrep/v1/evaluate/flags/${flag.name} -H 'X-Flagwire-Project: ${flag.projectId}' -d '{"context": {"targetingKey": "user-42"}}'`,
  );
  const read = seed.tokens.find((t) => t.name === 'demo-read')!;
  if (config.syncPort !== 0) {
    // flagd's stock in-process providers, on the sync service (docs/api.md: Sync service (flagd)).
    lines.push(
      `  flagd in-process provider: host ${config.host}, port ${config.syncPort}, selector "flagSetId=${read.projectId},token=${read.secret}"`,
    );
  }
  // The ids (never the secrets) can be found again later; the data dir is named because ./data is relative.
  lines.push(`Find the ids again: npx flagwire project list --data ${dataDir}  (then: flag list PROJECT_ID, token list PROJECT_ID)`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

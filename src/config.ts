// Every setting of the service, read from env vars (flags override), validated once, then frozen. Only
// what users set: the switches of the tests and the bench are src/test-switches.ts's.
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { type Static, Type, compiledOnUse } from './typebox.js';
import { parseRange } from './http/client-address.js';

export const Config = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String({ minLength: 1 }),
  dataDir: Type.String({ minLength: 1 }),
  /** PostgreSQL as the system of record (src/store/pg/), the data dir its local copy; null: the data dir's LMDB alone. */
  databaseUrl: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
  /**
   * The Flagwire node this node relays (src/relay/upstream-follower.ts): its HTTP base URL and this relay's key there;
   * null: no relay. Never with databaseUrl.
   */
  upstream: Type.Union([Type.Object({ url: Type.String({ minLength: 1 }), token: Type.String({ minLength: 1 }) }), Type.Null()]),
  baseUrl: Type.String({ minLength: 1 }),
  docsUrl: Type.String({ minLength: 1 }),
  rateLimit: Type.Integer({ minimum: 1 }),
  authFailLimit: Type.Integer({ minimum: 1 }),
  evalWorkers: Type.Integer({ minimum: 1, maximum: 64 }),
  /** Front-end threads serving HTTP, each with its own share of the eval workers (src/server/frontend-threads.ts). */
  httpThreads: Type.Integer({ minimum: 1, maximum: 64 }),
  smtpUrl: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
  logLevel: Type.Union(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].map((l) => Type.Literal(l))),
  metrics: Type.Boolean(),
  writeTimeoutMs: Type.Integer({ minimum: 1 }),
  shutdownDrainMs: Type.Integer({ minimum: 0 }),
  /** How long a request with Flagwire-Min-Revision waits for this node's copy to have it (src/http/revisions.ts). */
  minRevisionWaitMs: Type.Integer({ minimum: 0 }),
  /** Addresses and CIDR ranges of reverse proxies whose X-Forwarded-For is believed (src/http/client-address.ts). */
  trustedProxies: Type.Array(Type.String({ minLength: 1 })),
  maxBufferedBodyBytes: Type.Integer({ minimum: 2 * 1024 * 1024 }),
  /** Evaluation body bytes past 4 KiB a body (OFREP's, the Unleash front-end API's POSTs) per second per credential (src/http/body.ts BodyBudgets). */
  evalBodyBytesPerSecond: Type.Integer({ minimum: 1024 * 1024 }),
  /** How long a web console session lasts from its sign-in (src/web-console/sessions.ts). */
  consoleSessionMs: Type.Integer({ minimum: 60_000 }),
  /** Whether any signed-in console user may create an organisation, becoming its Owner (src/orgs/console-routes.ts). */
  consoleCreateOrgs: Type.Boolean(),
  /** Failed web console sign-ins allowed per address per minute, and per account per 15 minutes. */
  signInFailLimit: Type.Integer({ minimum: 1 }),
  /** How far an ID token's exp and iat may be off this node's clock in single sign-on (src/sso/oidc.ts). */
  oidcClockSkewMs: Type.Integer({ minimum: 0 }),
  /** Single sign-on fetches an identity provider's signing keys again (a key it does not know) at most once in this time. */
  oidcJwksCooldownMs: Type.Integer({ minimum: 100 }),
  /** A flag file this node follows for one project (src/flags-as-code/file-follower.ts); null: none. */
  flagsFile: Type.Union([Type.Object({ path: Type.String({ minLength: 1 }), projectId: Type.String({ minLength: 1 }) }), Type.Null()]),
  /** The Prometheus server that rollout guards' PromQL expressions are asked of (src/release-plans/guard-reader.ts); null: none. */
  prometheusUrl: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
  /** The metrics PromQL guards may read: names, or prefixes ending in `*` (src/release-plans/promql-metrics.ts); empty: none. */
  prometheusMetrics: Type.Array(Type.String({ minLength: 1 })),
  /** How long one guard reading may take before it counts as failed (src/release-plans/guard-reader.ts). */
  guardTimeoutMs: Type.Integer({ minimum: 100 }),
  /** Host names, addresses and ranges webhooks may reach although private or loopback (src/webhooks/url-safety.ts). */
  webhookAllow: Type.Array(Type.String({ minLength: 1 })),
  /** How long a webhook delivery is retried before it is given up (src/webhooks/webhook-commands.ts). */
  webhookGiveUpMs: Type.Integer({ minimum: 3_600_000 }),
  /** How long one delivery attempt may take before it counts as failed (src/webhooks/deliverer.ts). */
  webhookTimeoutMs: Type.Integer({ minimum: 100 }),
  /** The JSON-lines file every audit entry is appended to (src/audit-stream/file-sink.ts); null: none. */
  auditFile: Type.Union([Type.String({ minLength: 1 }), Type.Null()]),
  /**
   * The syslog receiver every audit entry is sent to, RFC 5424: over plain TCP (src/audit-stream/syslog-sink.ts)
   * or RELP (src/audit-stream/relp-sink.ts); null: none.
   */
  auditSyslog: Type.Union([
    Type.Object({
      transport: Type.Union([Type.Literal('tcp'), Type.Literal('relp')]),
      host: Type.String({ minLength: 1 }),
      port: Type.Integer({ minimum: 1, maximum: 65535 }),
    }),
    Type.Null(),
  ]),
  /** The port of flagd's sync service, gRPC (src/sync/sync-server.ts), on the same host; 0: not served. */
  syncPort: Type.Integer({ minimum: 0, maximum: 65535 }),
  /** The sync streams one node keeps open at once; one more is refused RESOURCE_EXHAUSTED. */
  syncMaxStreams: Type.Integer({ minimum: 1 }),
  syncMaxUnreadBytes: Type.Integer({ minimum: 1024 * 1024 }),
  /** The change streams (SSE) one front end keeps open at once; one more is refused 503. */
  streamMaxConnections: Type.Integer({ minimum: 1 }),
  /** Events a project may send per second (src/events/event-rate.ts), the process's threads together. */
  eventsPerSecond: Type.Integer({ minimum: 1000 }),
  /** Subjects a project environment's events may keep (src/events/receive.ts: storage limits). */
  eventSubjectsPerEnvironment: Type.Integer({ minimum: 1 }),
  /** Bytes a project's raw events may take in the tally file (src/events/receive.ts: storage limits). */
  rawEventBytesPerProject: Type.Integer({ minimum: 1 }),
  /** The revisions the data file's change log keeps (src/store/change-log.ts): how far behind a relay may fall and catch up without a full copy. */
  changeLogRevisions: Type.Integer({ minimum: 1 }),
  /** The bytes of change sets the change log keeps (src/store/change-log.ts), its newest revision always: a relay further behind gets a full copy. */
  changeLogBytes: Type.Integer({ minimum: 1 }),
  /** The MCP server at /mcp (src/mcp); null: off, /mcp answers 404. */
  mcp: Type.Union([
    Type.Object({
      /** A session ends this long after it was opened, used or not (its id carries its issue time: src/mcp/sessions.ts). */
      sessionMaxAgeMs: Type.Integer({ minimum: 1000 }),
      /** Browser origins besides the loopback ones that may call /mcp (DNS rebinding: every other Origin is refused). */
      origins: Type.Array(Type.String({ minLength: 1 })),
    }),
    Type.Null(),
  ]),
});
export type Config = Static<typeof Config>;

const kConfigCheck = compiledOnUse(Config);

/** A setting that cannot be used; the console prints it as one line and exits 2. */
export class ConfigError extends Error {
  readonly setting: string;
  constructor(setting: string, message: string) {
    super(`invalid ${setting}: ${message}`);
    this.name = 'ConfigError';
    this.setting = setting;
  }
}

/** The database setting as a refusal names it, e.g. a data dir that is a database's copy opened without it. */
export const kDatabaseUrlSetting = 'FLAGWIRE_DATABASE_URL (--database)';

/** Values given on the command line; each overrides its env var. */
export interface ConfigFlags {
  port?: string;
  host?: string;
  data?: string;
  database?: string;
  upstream?: string;
  upstreamToken?: string;
  flagsFile?: string;
  flagsProject?: string;
}

// Each setting: the env var that names it (used in error messages), and its command-line flag if any.
const kSettings = {
  port: 'FLAGWIRE_PORT',
  host: 'FLAGWIRE_HOST',
  dataDir: 'FLAGWIRE_DATA',
  databaseUrl: 'FLAGWIRE_DATABASE_URL',
  upstream: 'FLAGWIRE_UPSTREAM_URL',
  baseUrl: 'FLAGWIRE_BASE_URL',
  docsUrl: 'FLAGWIRE_DOCS_URL',
  rateLimit: 'FLAGWIRE_RATE_LIMIT',
  authFailLimit: 'FLAGWIRE_AUTH_FAIL_LIMIT',
  evalWorkers: 'FLAGWIRE_EVAL_WORKERS',
  httpThreads: 'FLAGWIRE_HTTP_THREADS',
  smtpUrl: 'FLAGWIRE_SMTP_URL',
  logLevel: 'FLAGWIRE_LOG_LEVEL',
  metrics: 'FLAGWIRE_METRICS',
  writeTimeoutMs: 'FLAGWIRE_WRITE_TIMEOUT_MS',
  shutdownDrainMs: 'FLAGWIRE_SHUTDOWN_DRAIN_MS',
  minRevisionWaitMs: 'FLAGWIRE_MIN_REVISION_WAIT_MS',
  trustedProxies: 'FLAGWIRE_TRUSTED_PROXIES',
  maxBufferedBodyBytes: 'FLAGWIRE_MAX_BUFFERED_BODY_BYTES',
  evalBodyBytesPerSecond: 'FLAGWIRE_EVAL_BODY_BYTES_PER_SECOND',
  consoleSessionMs: 'FLAGWIRE_CONSOLE_SESSION_HOURS',
  consoleCreateOrgs: 'FLAGWIRE_CONSOLE_CREATE_ORGS',
  signInFailLimit: 'FLAGWIRE_SIGN_IN_FAIL_LIMIT',
  oidcClockSkewMs: 'FLAGWIRE_OIDC_CLOCK_SKEW_SECONDS',
  oidcJwksCooldownMs: 'FLAGWIRE_OIDC_JWKS_COOLDOWN_MS',
  flagsFile: 'FLAGWIRE_FLAGS_FILE',
  prometheusUrl: 'FLAGWIRE_PROMETHEUS_URL',
  prometheusMetrics: 'FLAGWIRE_PROMETHEUS_METRICS',
  guardTimeoutMs: 'FLAGWIRE_GUARD_TIMEOUT_MS',
  webhookAllow: 'FLAGWIRE_WEBHOOK_ALLOW',
  webhookGiveUpMs: 'FLAGWIRE_WEBHOOK_GIVE_UP_HOURS',
  webhookTimeoutMs: 'FLAGWIRE_WEBHOOK_TIMEOUT_MS',
  auditFile: 'FLAGWIRE_AUDIT_FILE',
  auditSyslog: 'FLAGWIRE_AUDIT_SYSLOG',
  syncPort: 'FLAGWIRE_SYNC_PORT',
  syncMaxStreams: 'FLAGWIRE_SYNC_MAX_STREAMS',
  syncMaxUnreadBytes: 'FLAGWIRE_SYNC_MAX_UNREAD_BYTES',
  streamMaxConnections: 'FLAGWIRE_STREAM_MAX_CONNECTIONS',
  eventsPerSecond: 'FLAGWIRE_EVENTS_PER_SECOND',
  eventSubjectsPerEnvironment: 'FLAGWIRE_EVENT_SUBJECTS_PER_ENVIRONMENT',
  rawEventBytesPerProject: 'FLAGWIRE_RAW_EVENT_BYTES_PER_PROJECT',
  changeLogRevisions: 'FLAGWIRE_CHANGE_LOG_REVISIONS',
  changeLogBytes: 'FLAGWIRE_CHANGE_LOG_BYTES',
  mcp: 'FLAGWIRE_MCP',
} as const satisfies Record<keyof Config, string>;

const kDefaultMaxBufferedBodyBytes = 64 * 1024 * 1024;
const kDefaultEvalBodyBytesPerSecond = 1024 * 1024;

function integer(setting: keyof Config, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(kSettings[setting], `"${raw}" is not a whole number`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(kSettings[setting], `${n} is outside ${min}..${max}`);
  return n;
}

/**
 * Half the cores serve HTTP, the other half evaluate: one front-end thread feeds about one eval worker
 * (issue 16's profile: with one front-end thread, one eval worker was enough, and the front end was the
 * ceiling). Up to 3 cores, one front-end thread: a second could only take cores from evaluation and
 * the writer.
 */
export function defaultHttpThreads(cores = availableParallelism()): number {
  return cores <= 3 ? 1 : Math.min(16, Math.floor(cores / 2));
}

/** One eval worker per core left over after the front-end threads, at least one, at most 8. */
export function defaultEvalWorkers(httpThreads: number, cores = availableParallelism()): number {
  return Math.max(1, Math.min(8, cores - httpThreads));
}

/**
 * The eval workers of front-end thread `thread` (0-based): `evalWorkers` spread over the threads,
 * at least one each (each thread batches to its own pool: a batch never hops threads twice).
 */
export function evalWorkersOfThread(config: Pick<Config, 'evalWorkers' | 'httpThreads'>, thread: number): number {
  const { evalWorkers, httpThreads } = config;
  return Math.max(1, Math.floor(evalWorkers / httpThreads) + (thread < evalWorkers % httpThreads ? 1 : 0));
}

/**
 * Only the data dir setting: what the console needs, without a port or URLs. Only `serve` and the
 * console's `org create` may create the directory (`create`): every other command would otherwise make
 * a new, empty store wherever it happens to run (./data is relative to the working directory) and then
 * report that nothing exists.
 */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, create = true): string {
  const dir = resolve(flag ?? env.FLAGWIRE_DATA ?? './data');
  if (!create && !existsSync(dir)) {
    throw new ConfigError(
      kSettings.dataDir,
      `data directory ${dir} does not exist; pass --data DIR or set FLAGWIRE_DATA to the directory the server uses (only serve and org create create one)`,
    );
  }
  try {
    if (create) makeDirs(dir);
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    accessSync(dir, constants.W_OK | constants.R_OK);
  } catch (err) {
    throw new ConfigError(kSettings.dataDir, `data directory ${dir} is not writable (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return dir;
}

/**
 * The PostgreSQL URL (`--database` or FLAGWIRE_DATABASE_URL), or null when neither is set: then the
 * data dir's LMDB is the system of record, as it always was. An empty value counts as unset.
 */
export function resolveDatabaseUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | null {
  const raw = (flag ?? env.FLAGWIRE_DATABASE_URL ?? '').trim();
  if (raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(kSettings.databaseUrl, 'is not a URL; expected postgres://USER:PASSWORD@HOST:PORT/DATABASE');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(kSettings.databaseUrl, `must start with postgres:// or postgresql://, not ${url.protocol}//`);
  }
  return raw;
}

/** What the change log keeps (src/store/change-log.ts): its last `revisions`, within `bytes` of change sets. */
export interface ChangeLogBounds {
  readonly revisions: number;
  readonly bytes: number;
}

/**
 * The change log's defaults: hours of an active cluster's revisions, and at most 64 MiB of them (a
 * revision holds what changed, so 10,000 small changes take a few MiB; large ones reach the bytes first).
 */
export const kDefaultChangeLog: ChangeLogBounds = { revisions: 10_000, bytes: 64 * 1024 * 1024 };

/**
 * FLAGWIRE_CHANGE_LOG_REVISIONS and FLAGWIRE_CHANGE_LOG_BYTES alone: read by `serve` (loadConfig) and by
 * every command line command that writes, so a change made at the command line is logged under the same
 * bounds as the server's.
 */
export function resolveChangeLogBounds(env: NodeJS.ProcessEnv = process.env): ChangeLogBounds {
  return {
    revisions: integer('changeLogRevisions', env.FLAGWIRE_CHANGE_LOG_REVISIONS ?? String(kDefaultChangeLog.revisions), 1, 10_000_000),
    bytes: integer('changeLogBytes', env.FLAGWIRE_CHANGE_LOG_BYTES ?? String(kDefaultChangeLog.bytes), 1, Number.MAX_SAFE_INTEGER),
  };
}

/** A node's change log bounds, from its settings. */
export function changeLogBounds(config: Pick<Config, 'changeLogRevisions' | 'changeLogBytes'>): ChangeLogBounds {
  return { revisions: config.changeLogRevisions, bytes: config.changeLogBytes };
}

/**
 * `mkdir -p` one level at a time. Node 20's `mkdirSync(recursive)` never returns for a path under
 * /proc (mkdir there fails with ENOENT, which it answers by creating the parent again, forever).
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let at = dir; !existsSync(at); at = dirname(at)) {
    missing.push(at);
    if (dirname(at) === at) break;
  }
  for (const path of missing.reverse()) {
    try {
      mkdirSync(path);
    } catch (err) {
      // Another process (a second command-line command) created it first.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

export function loadConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const port = integer('port', flags.port ?? env.FLAGWIRE_PORT ?? '8080', 0, 65535);
  const host = flags.host ?? env.FLAGWIRE_HOST ?? '127.0.0.1';
  const changeLog = resolveChangeLogBounds(env);
  if (host.trim() === '') throw new ConfigError(kSettings.host, 'must not be empty');
  const baseUrl = trimSlash(env.FLAGWIRE_BASE_URL ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`);
  const docsUrl = trimSlash(env.FLAGWIRE_DOCS_URL ?? `${baseUrl}/docs`);
  for (const [setting, url] of [
    ['baseUrl', baseUrl],
    ['docsUrl', docsUrl],
  ] as const) {
    if (!URL.canParse(url)) throw new ConfigError(kSettings[setting], `"${url}" is not an absolute URL`);
  }
  const smtpUrl = env.FLAGWIRE_SMTP_URL ?? null;
  if (smtpUrl !== null && !/^smtps?:\/\//.test(smtpUrl)) {
    throw new ConfigError(kSettings.smtpUrl, `"${smtpUrl}" must start with smtp:// or smtps://`);
  }
  const prometheusUrl = env.FLAGWIRE_PROMETHEUS_URL ? trimSlash(env.FLAGWIRE_PROMETHEUS_URL) : null;
  if (prometheusUrl !== null && !/^https?:\/\/./.test(prometheusUrl)) {
    throw new ConfigError(kSettings.prometheusUrl, `"${prometheusUrl}" must start with http:// or https://`);
  }
  const trustedProxies = trustedProxyList(env.FLAGWIRE_TRUSTED_PROXIES ?? '');
  const httpThreads = integer('httpThreads', env.FLAGWIRE_HTTP_THREADS ?? String(defaultHttpThreads()), 1, 64);
  const config: Config = {
    port,
    host,
    dataDir: resolveDataDir(flags.data, env),
    databaseUrl: resolveDatabaseUrl(flags.database, env),
    upstream: upstream(flags, env),
    baseUrl,
    docsUrl,
    rateLimit: integer('rateLimit', env.FLAGWIRE_RATE_LIMIT ?? '600', 1, 1_000_000_000),
    authFailLimit: integer('authFailLimit', env.FLAGWIRE_AUTH_FAIL_LIMIT ?? '20', 1, 1_000_000_000),
    evalWorkers: integer('evalWorkers', env.FLAGWIRE_EVAL_WORKERS ?? String(defaultEvalWorkers(httpThreads)), 1, 64),
    httpThreads,
    smtpUrl,
    logLevel: logLevel(env.FLAGWIRE_LOG_LEVEL ?? 'info'),
    metrics: onOff('metrics', env.FLAGWIRE_METRICS ?? 'on'),
    // A write not committed in this time is answered 503 Storage busy and never applied (src/writer/client.ts).
    writeTimeoutMs: integer('writeTimeoutMs', env.FLAGWIRE_WRITE_TIMEOUT_MS ?? '10000', 1, 600_000),
    shutdownDrainMs: integer('shutdownDrainMs', env.FLAGWIRE_SHUTDOWN_DRAIN_MS ?? '3500', 0, 600_000),
    // Well past the replication lag's tail under write load (bench/RESULTS.md, postgres.bench), short enough for a client to retry elsewhere.
    minRevisionWaitMs: integer('minRevisionWaitMs', env.FLAGWIRE_MIN_REVISION_WAIT_MS ?? '2000', 0, 60_000),
    trustedProxies,
    // At least one body of the 1 MiB cap must fit; 64 MiB by default, the same as the evaluation
    // batcher's bound on the bytes it queues (docs/operations.md: Request bodies).
    maxBufferedBodyBytes: integer(
      'maxBufferedBodyBytes',
      env.FLAGWIRE_MAX_BUFFERED_BODY_BYTES ?? String(kDefaultMaxBufferedBodyBytes),
      2 * 1024 * 1024,
      1024 ** 4,
    ),
    // At least 1 MiB, so a body at the evaluation cap always fits; 1 MiB by default: an ordinary
    // context is not charged, and a key's large bodies reach the workers at about one at the cap a
    // second (docs/operations.md: Evaluation work).
    evalBodyBytesPerSecond: integer(
      'evalBodyBytesPerSecond',
      env.FLAGWIRE_EVAL_BODY_BYTES_PER_SECOND ?? String(kDefaultEvalBodyBytesPerSecond),
      1024 * 1024,
      1024 ** 3,
    ),
    // A working day and then some; a session ends earlier by signing out (or a new password).
    consoleSessionMs: integer('consoleSessionMs', env.FLAGWIRE_CONSOLE_SESSION_HOURS ?? '12', 1, 24 * 30) * 3_600_000,
    // Off: organisations are the operator's to make (`flagwire org create`), as they were before the console could.
    consoleCreateOrgs: onOff('consoleCreateOrgs', env.FLAGWIRE_CONSOLE_CREATE_ORGS ?? 'off'),
    signInFailLimit: integer('signInFailLimit', env.FLAGWIRE_SIGN_IN_FAIL_LIMIT ?? '10', 1, 1_000_000),
    // A minute either way covers servers kept by NTP; more lets a token live longer than its issuer meant.
    oidcClockSkewMs: integer('oidcClockSkewMs', env.FLAGWIRE_OIDC_CLOCK_SKEW_SECONDS ?? '60', 0, 300) * 1000,
    // A token naming a key the node does not know fetches the keys again (a rotation), but not faster than
    // this: a stream of forged kids cannot make the node hammer the identity provider.
    oidcJwksCooldownMs: integer('oidcJwksCooldownMs', env.FLAGWIRE_OIDC_JWKS_COOLDOWN_MS ?? '30000', 100, 3_600_000),
    flagsFile: flagsFile(flags, env),
    prometheusUrl,
    prometheusMetrics: metricAllowList(env.FLAGWIRE_PROMETHEUS_METRICS ?? ''),
    // Short against a guard's shortest interval (1 s is the least; 30 s the default), long for a PromQL query.
    guardTimeoutMs: integer('guardTimeoutMs', env.FLAGWIRE_GUARD_TIMEOUT_MS ?? '5000', 100, 600_000),
    webhookAllow: webhookAllowList(env.FLAGWIRE_WEBHOOK_ALLOW ?? ''),
    webhookGiveUpMs: integer('webhookGiveUpMs', env.FLAGWIRE_WEBHOOK_GIVE_UP_HOURS ?? '24', 1, 24 * 30) * 3_600_000,
    webhookTimeoutMs: integer('webhookTimeoutMs', env.FLAGWIRE_WEBHOOK_TIMEOUT_MS ?? '10000', 100, 600_000),
    auditFile: env.FLAGWIRE_AUDIT_FILE ? resolve(env.FLAGWIRE_AUDIT_FILE) : null,
    auditSyslog: syslogAddress(env.FLAGWIRE_AUDIT_SYSLOG ?? ''),
    // flagd's own sync port, which the stock in-process providers dial by default.
    syncPort: integer('syncPort', env.FLAGWIRE_SYNC_PORT ?? '8015', 0, 65535),
    // Each stream holds at most one flag set waiting for a slow reader (docs/operations.md: Sync streams).
    syncMaxStreams: integer('syncMaxStreams', env.FLAGWIRE_SYNC_MAX_STREAMS ?? '10000', 1, 1_000_000),
    syncMaxUnreadBytes: integer(
      'syncMaxUnreadBytes',
      env.FLAGWIRE_SYNC_MAX_UNREAD_BYTES ?? String(256 * 1024 * 1024),
      1024 * 1024,
      2 ** 40,
    ),
    // Each stream holds at most 64 KiB queued for a slow reader (docs/operations.md: Change stream).
    streamMaxConnections: integer('streamMaxConnections', env.FLAGWIRE_STREAM_MAX_CONNECTIONS ?? '10000', 1, 1_000_000),
    // At least a full batch (1,000 events), which must be able to pass at once (docs/events.md: Limits).
    eventsPerSecond: integer('eventsPerSecond', env.FLAGWIRE_EVENTS_PER_SECOND ?? '50000', 1000, 10_000_000),
    // A subject's state is a few hundred bytes to a few KiB: 10 million of them, some GiB of tally file.
    eventSubjectsPerEnvironment: integer(
      'eventSubjectsPerEnvironment',
      env.FLAGWIRE_EVENT_SUBJECTS_PER_ENVIRONMENT ?? '10000000',
      1,
      1_000_000_000,
    ),
    // 10 GiB: some 30 million events of a few hundred bytes, a month of 10 a second.
    rawEventBytesPerProject: integer(
      'rawEventBytesPerProject',
      env.FLAGWIRE_RAW_EVENT_BYTES_PER_PROJECT ?? String(10 * 2 ** 30),
      1,
      2 ** 50,
    ),
    changeLogRevisions: changeLog.revisions,
    changeLogBytes: changeLog.bytes,
    mcp: mcpSettings(env),
  };
  if (config.upstream !== null && config.flagsFile !== null) {
    throw new ConfigError(
      'FLAGWIRE_FLAGS_FILE (--flags-file)',
      'a relay applies nothing; follow the flag file on a node that writes (the relay gets its changes from the upstream)',
    );
  }
  if (config.upstream !== null && config.databaseUrl !== null) {
    throw new ConfigError(
      kUpstreamSetting,
      'a relay follows its upstream and holds no PostgreSQL connection; pass either --upstream (FLAGWIRE_UPSTREAM_URL) or --database (FLAGWIRE_DATABASE_URL), not both',
    );
  }
  const problem = kConfigCheck.Errors(config).First();
  if (problem) {
    const key = problem.path.slice(1) as keyof Config;
    throw new ConfigError(kSettings[key] ?? key, problem.message);
  }
  return Object.freeze(config);
}

/** The upstream setting as a refusal names it. */
export const kUpstreamSetting = 'FLAGWIRE_UPSTREAM_URL (--upstream)';
const kUpstreamTokenSetting = 'FLAGWIRE_UPSTREAM_TOKEN (--upstream-token)';

/**
 * The node this one relays (--upstream or FLAGWIRE_UPSTREAM_URL: its HTTP base URL, http or https) and
 * the relay key it presents there (--upstream-token or FLAGWIRE_UPSTREAM_TOKEN): both or neither.
 */
function upstream(flags: ConfigFlags, env: NodeJS.ProcessEnv): Config['upstream'] {
  const raw = (flags.upstream ?? env.FLAGWIRE_UPSTREAM_URL ?? '').trim();
  const token = (flags.upstreamToken ?? env.FLAGWIRE_UPSTREAM_TOKEN ?? '').trim();
  if (raw === '' && token === '') return null;
  if (raw === '') throw new ConfigError(kUpstreamSetting, 'a relay key was given (FLAGWIRE_UPSTREAM_TOKEN) without the node it is for');
  if (token === '')
    throw new ConfigError(kUpstreamTokenSetting, 'a relay needs its relay key on the upstream (`flagwire relay key create` there)');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(kUpstreamSetting, `"${raw}" is not a URL; expected the upstream's base URL, http(s)://HOST:PORT`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(kUpstreamSetting, `must start with http:// or https://, not ${url.protocol}//`);
  }
  return { url: trimSlash(raw), token };
}

/**
 * The flag file to follow (--flags-file or FLAGWIRE_FLAGS_FILE) and the project it sets (--flags-project
 * or FLAGWIRE_FLAGS_PROJECT): both or neither. The path is made absolute once, here. The file itself may
 * not exist yet: the follower waits for it.
 */
function flagsFile(flags: ConfigFlags, env: NodeJS.ProcessEnv): Config['flagsFile'] {
  const path = flags.flagsFile ?? env.FLAGWIRE_FLAGS_FILE ?? '';
  const projectId = flags.flagsProject ?? env.FLAGWIRE_FLAGS_PROJECT ?? '';
  if (path === '' && projectId === '') return null;
  if (path === '')
    throw new ConfigError('FLAGWIRE_FLAGS_FILE (--flags-file)', 'a project to follow was given (FLAGWIRE_FLAGS_PROJECT) without the file');
  if (projectId === '')
    throw new ConfigError('FLAGWIRE_FLAGS_PROJECT (--flags-project)', 'name the project the flag file sets (a project id, prj_...)');
  return { path: resolve(path), projectId };
}

/**
 * The config once the listen port is known: with port 0 (tests) the default base and docs URLs must
 * name the port actually bound. URLs set explicitly are kept.
 */
export function withListenPort(config: Readonly<Config>, port: number, env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  if (config.port === port) return config;
  const baseUrl = trimSlash(env.FLAGWIRE_BASE_URL ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`);
  const docsUrl = trimSlash(env.FLAGWIRE_DOCS_URL ?? `${baseUrl}/docs`);
  return Object.freeze({ ...config, port, baseUrl, docsUrl });
}

const kLogLevels = Config.properties.logLevel.anyOf.map((l) => l.const as string);

function logLevel(raw: string): Config['logLevel'] {
  if (!kLogLevels.includes(raw)) throw new ConfigError(kSettings.logLevel, `"${raw}" is not one of ${kLogLevels.join(', ')}`);
  return raw as Config['logLevel'];
}

function onOff(setting: keyof Config, raw: string): boolean {
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new ConfigError(kSettings[setting], `"${raw}" is not on or off`);
}

/**
 * FLAGWIRE_MCP (on or off, default off) and, when on, its session lifetime,
 * FLAGWIRE_MCP_SESSION_SECONDS, and FLAGWIRE_MCP_ORIGINS (each origin as a browser sends it).
 */
function mcpSettings(env: NodeJS.ProcessEnv): Config['mcp'] {
  if (!onOff('mcp', env.FLAGWIRE_MCP ?? 'off')) return null;
  const origins = commaList(env.FLAGWIRE_MCP_ORIGINS ?? '');
  for (const origin of origins) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin)
      throw new ConfigError('FLAGWIRE_MCP_ORIGINS', `"${origin}" is not an origin (scheme://host[:port], no path)`);
  }
  const whole = (name: string, fallback: string, min: number, max: number) => {
    const raw = (env[name] ?? fallback).trim();
    if (!/^\d+$/.test(raw)) throw new ConfigError(name, `"${raw}" is not a whole number`);
    const n = Number(raw);
    if (n < min || n > max) throw new ConfigError(name, `${n} is outside ${min}..${max}`);
    return n;
  };
  return {
    // A working day; a client whose session ended starts another (spec: 404 on its id).
    sessionMaxAgeMs: whole('FLAGWIRE_MCP_SESSION_SECONDS', '86400', 1, 604_800) * 1000,
    origins,
  };
}

/**
 * `flagwire mcp`'s node and token (src/mcp/cli.ts): its --url and --token, else FLAGWIRE_URL and
 * FLAGWIRE_TOKEN; undefined where neither is given.
 */
export function resolveMcpRelay(
  flags: { url?: string; token?: string },
  env: NodeJS.ProcessEnv = process.env,
): { url?: string; token?: string } {
  return { url: flags.url ?? env.FLAGWIRE_URL, token: flags.token ?? env.FLAGWIRE_TOKEN };
}

/** A comma-separated setting's entries; blanks around and between entries are ignored. */
function commaList(raw: string): string[] {
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/** Comma-separated addresses and CIDR ranges. */
function trustedProxyList(raw: string): string[] {
  const entries = commaList(raw);
  for (const entry of entries) {
    const range = parseRange(entry);
    if (typeof range === 'string') throw new ConfigError(kSettings.trustedProxies, range);
  }
  return entries;
}

/** Host names as they are; an entry that looks like an address or a range must be one. */
/** FLAGWIRE_AUDIT_SYSLOG: tcp://HOST:PORT or relp://HOST:PORT (a name, an IPv4 address or a bracketed IPv6 one); empty: none. */
function syslogAddress(raw: string): Config['auditSyslog'] {
  if (raw.trim() === '') return null;
  const url = URL.canParse(raw.trim()) ? new URL(raw.trim()) : null;
  const transport = url?.protocol === 'tcp:' ? 'tcp' : url?.protocol === 'relp:' ? 'relp' : null;
  if (url === null || transport === null || url.hostname === '' || url.port === '' || url.pathname !== '') {
    throw new ConfigError(kSettings.auditSyslog, `"${raw}" must be tcp://HOST:PORT or relp://HOST:PORT`);
  }
  return { transport, host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(url.port) };
}

function webhookAllowList(raw: string): string[] {
  const entries = commaList(raw);
  for (const entry of entries) {
    if (!/^[\d.:/a-fA-F]+$/.test(entry) || /^[a-fA-F]+$/.test(entry)) continue;
    const range = parseRange(entry);
    if (typeof range === 'string') throw new ConfigError(kSettings.webhookAllow, range);
  }
  return entries;
}

/** Metric names (PromQL's identifiers) or prefixes ending in `*`; `*` alone allows every metric. */
function metricAllowList(raw: string): string[] {
  const entries = commaList(raw);
  for (const entry of entries) {
    if (!/^([a-zA-Z_:][a-zA-Z0-9_:]*\*?|\*)$/.test(entry))
      throw new ConfigError(kSettings.prometheusMetrics, `"${entry}" is not a metric name or a prefix ending in *`);
  }
  return entries;
}

function trimSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}

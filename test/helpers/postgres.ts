// A private PostgreSQL cluster for tests: a copy of an initdb'd template in a temporary directory, started on a free port
// with its unix socket in that directory, stopped by its PID at teardown. PostgreSQL refuses to run
// as root, so when the tests run as root the cluster runs as the `postgres` system user (Debian's
// package creates it; `scripts/ensure.sh postgres` installs the package when missing).
//
// The nodes connect as `flagwire`, a role that is not a superuser and owns its databases: what the
// docs/deployment.md says is enough. Administration (creating roles and databases) goes over the unix socket as
// the cluster's superuser.
//
// A test file that never stops, kills or hangs PostgreSQL takes sharedPostgres(): under the suite's runner
// (scripts/run-tests.mjs) one cluster serves every such file, each in databases of its own, instead of a
// cluster started and stopped per file (about 0.5 CPU s and 2 s of a job slot each); run alone, the file
// starts its own.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort } from './free-port.js';
import { childrenOf } from './process-tree.js';

const kEnsureScript = fileURLToPath(new URL('../../../scripts/ensure.sh', import.meta.url));
const kRole = 'flagwire';
const kPassword = 'flagwire-test';

/** A cluster's databases, as a test that only reads and writes them has it. */
export interface TestDatabases {
  /**
   * A new empty database owned by the `flagwire` role, or a copy of database `template` (of this
   * cluster, with no session open on it: PostgreSQL copies its files); its connection URL.
   */
  newDatabase(template?: string): Promise<string>;
  /** Runs SQL as the cluster's superuser in `database`. */
  admin<T extends pg.QueryResultRow = pg.QueryResultRow>(database: string, sql: string, params?: unknown[]): Promise<pg.QueryResult<T>>;
  /** Done with them: a private cluster is stopped and removed, a shared one's databases of this file dropped. */
  destroy(): Promise<void>;
}

/** Where the suite's shared cluster is (`SOCKET_DIR PORT`), set by the runner for the files that use it. */
export const kSharedClusterEnv = 'FLAGWIRE_TEST_POSTGRES';

export interface TestPostgres extends TestDatabases {
  readonly port: number;
  /** The directory of its unix socket (and of its data): where the superuser connects. */
  readonly socketDir: string;
  /** kill -9 of every process of the cluster, the postmaster and its backends (a crash). */
  kill9(): void;
  /**
   * SIGSTOP of every process of the cluster, the postmaster first (so it forks no new backend), then
   * its children: PostgreSQL hung, not crashed. Connections stay open and nothing answers.
   */
  hang(): void;
  /** SIGCONT of every process hang() stopped. */
  resume(): void;
  /** Starts the cluster again (after kill9 or stop). */
  start(): Promise<void>;
  /** Stops the cluster (SIGINT to its PID: fast shutdown, clients disconnected; then waits for it to end). */
  stop(): Promise<void>;
  /** The postmaster's process id (its last one when it is not running). */
  pid(): number;
}

let bindir: string | null = null;

function binaries(): string {
  bindir ??= execFileSync(kEnsureScript, ['postgres'], { encoding: 'utf8' }).trim();
  return bindir;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `pid` is the postmaster of the cluster in `data`: by its command line, not only by being
 * alive. A postmaster killed with kill -9 leaves its number behind, and on a busy machine the kernel
 * soon gives it to another process (another test file's): a signal sent by number alone would then
 * stop that process (once it was a test file whose end tap never saw, and the suite hung).
 */
function isPostmaster(pid: number, data: string): boolean {
  if (pid === 0) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(data);
  } catch {
    return false;
  }
}

async function waitGone(pid: number, data: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (isPostmaster(pid, data)) {
    if (Date.now() > until) throw new Error(`postgres ${pid} did not stop in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** initdb's arguments but the directory: part of the template's name, so a change makes a new one. */
const kInitdbArgs = ['-U', 'postgres', '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--no-sync'];

/**
 * A freshly initdb'd data directory, never started, that clusters are copied from: made once per machine
 * (its name holds the PostgreSQL binaries' folder, the user and initdb's arguments) and kept in the
 * temporary folder. Made under a name of this process's own and renamed into place, so test files
 * starting at once never see half of one; one that lost the race removes its own.
 */
function clusterTemplate(run: (cmd: string, args: string[]) => string): string {
  const key = createHash('sha256')
    .update(`${binaries()} ${process.getuid?.()} ${kInitdbArgs.join(' ')}`)
    .digest('hex')
    .slice(0, 16);
  const template = join(tmpdir(), `flagwire-pg-template-${key}`);
  if (existsSync(join(template, 'PG_VERSION'))) return template;
  const parent = mkdtempSync(join(tmpdir(), 'flagwire-pg-template-new-'));
  if (process.getuid?.() === 0) chownSync(parent, postgresId('-u'), postgresId('-g'));
  const made = join(parent, 'data');
  run('initdb', ['-D', made, ...kInitdbArgs]);
  try {
    renameSync(made, template);
  } catch {
    // Another test file put its template in place first: the same, made the same way.
  }
  rmSync(parent, { recursive: true, force: true });
  return template;
}

function postgresId(which: '-u' | '-g'): number {
  return Number(execFileSync('id', [which, 'postgres'], { encoding: 'utf8' }).trim());
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = binaries();
  const dir = mkdtempSync(join(tmpdir(), 'flagwire-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => {
    const file = join(bin, cmd);
    return asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', file, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
      : execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  };
  if (asRoot) chownSync(dir, postgresId('-u'), postgresId('-g'));
  const data = join(dir, 'data');
  // A copy of one initdb'd cluster per machine (about 0.1 CPU s) instead of an initdb per test file (0.8).
  execFileSync('cp', ['-a', clusterTemplate(run), data]);
  const port = await freePort();
  let pid = 0;
  // fsync off: the tests kill PostgreSQL's processes, never the machine, so the OS keeps what it wrote.
  const start = async () => {
    // After a kill -9 the old backends may hold the shared memory for a moment: the start is retried.
    for (let attempt = 1; ; attempt++) {
      try {
        run('pg_ctl', [
          '-D',
          data,
          '-l',
          join(dir, 'log'),
          '-w',
          '-t',
          '60',
          '-o',
          `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
          'start',
        ]);
        break;
      } catch (err) {
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  };
  await start();
  const admin = adminOf(dir, port);
  await admin('postgres', `CREATE ROLE ${kRole} LOGIN NOSUPERUSER PASSWORD '${kPassword}'`);
  const newDatabase = databaseMaker(admin, port, 'flagwire');
  let stopped: number[] = [];
  const resume = () => {
    for (const p of stopped) {
      try {
        process.kill(p, 'SIGCONT');
      } catch {
        // Ended meanwhile.
      }
    }
    stopped = [];
  };
  const stop = async () => {
    resume();
    if (!isPostmaster(pid, data)) return;
    process.kill(pid, 'SIGINT');
    await waitGone(pid, data, 30_000);
  };
  return {
    port,
    socketDir: dir,
    newDatabase,
    admin,
    kill9() {
      if (!isPostmaster(pid, data)) throw new Error('kill9: the cluster is not running');
      // Every process of the cluster, as a crash takes them: a backend outliving its postmaster for a
      // moment could still commit a write sent after this returned, which would then rightly be answered.
      process.kill(pid, 'SIGSTOP');
      for (const child of childrenOf(pid)) {
        try {
          process.kill(child, 'SIGKILL');
        } catch {
          // Ended meanwhile.
        }
      }
      process.kill(pid, 'SIGKILL');
      stopped = [];
    },
    hang() {
      if (!isPostmaster(pid, data)) throw new Error('hang: the cluster is not running');
      process.kill(pid, 'SIGSTOP');
      stopped.push(pid);
      for (const child of childrenOf(pid)) {
        try {
          process.kill(child, 'SIGSTOP');
          stopped.push(child);
        } catch {
          // Ended meanwhile.
        }
      }
    },
    resume,
    async start() {
      await waitGone(pid, data, 30_000);
      await start();
    },
    stop,
    pid: () => pid,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

type Admin = TestDatabases['admin'];

/** SQL as the superuser of the cluster whose socket is in `socketDir`: one connection per statement. */
function adminOf(socketDir: string, port: number): Admin {
  return async <T extends pg.QueryResultRow>(database: string, sql: string, params: unknown[] = []) => {
    const client = new pg.Client({ host: socketDir, port, user: 'postgres', database });
    await client.connect();
    try {
      return await client.query<T>(sql, params);
    } finally {
      await client.end();
    }
  };
}

/** Makes databases `${prefix}_1`, `${prefix}_2`, ... owned by the `flagwire` role; each call's URL. */
function databaseMaker(admin: Admin, port: number, prefix: string, made: string[] = []): (template?: string) => Promise<string> {
  return async (template) => {
    const name = `${prefix}_${made.length + 1}`;
    made.push(name);
    await admin('postgres', `CREATE DATABASE ${name}${template === undefined ? '' : ` TEMPLATE ${template}`} OWNER ${kRole}`);
    return `postgres://${kRole}:${kPassword}@127.0.0.1:${port}/${name}`;
  };
}

/**
 * Databases for a test file that never stops, kills or hangs PostgreSQL: in the suite's shared cluster
 * when the runner started one (kSharedClusterEnv), named after this process so that files running at
 * once never meet; else in a cluster of this file's own. The shared cluster's other files' sessions are
 * in pg_stat_activity too: a test that reads it keeps to its own database (datname = current_database()).
 */
export async function sharedPostgres(): Promise<TestDatabases> {
  const shared = process.env[kSharedClusterEnv];
  if (shared === undefined || shared === '') return startPostgres();
  const [socketDir, port] = shared.split(' ') as [string, string];
  // A pool per database: a test polling the cluster (pg_stat_activity every few milliseconds) would
  // otherwise start a backend per statement. A private cluster keeps a connection per statement: its
  // tests kill and restart it under their connections. Never killed, the shared one keeps them.
  const pools = new Map<string, pg.Pool>();
  const admin: Admin = (database, sql, params = []) => {
    let pool = pools.get(database);
    if (pool === undefined) {
      pool = new pg.Pool({ host: socketDir, port: Number(port), user: 'postgres', database, max: 4 });
      // An idle connection's error (the database dropped under it) ends that connection only.
      pool.on('error', () => {});
      pools.set(database, pool);
    }
    return pool.query(sql, params);
  };
  const made: string[] = [];
  return {
    newDatabase: databaseMaker(admin, Number(port), `flagwire_p${process.pid}`, made),
    admin,
    async destroy() {
      await Promise.all([...pools.values()].map((pool) => pool.end()));
      // FORCE: a node of this file that has not ended yet still holds a connection.
      const drop = adminOf(socketDir, Number(port));
      for (const name of made) await drop('postgres', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

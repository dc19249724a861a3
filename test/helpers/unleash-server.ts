// A real Unleash for a test file (issue 60: the importer is proved against the server it imports from):
// unleash-server in a child process (unleash-process.ts), in a database of its own in the suite's
// PostgreSQL (the file's sharedPostgres(), which it calls itself: the runner starts the shared cluster for
// the files whose code names it), with an admin token and a backend token per environment made at start.
// One per test file, started once: its start (migrations on an empty database) is measured and named.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { plainNode } from './plain-process.js';
import type { TestDatabases } from './postgres.js';
import { freePort } from './free-port.js';

const kProcess = fileURLToPath(new URL('./unleash-process.js', import.meta.url));
/** A start that only catches a hang: migrations on a busy machine take seconds, never a minute. */
const kStartLimitMs = 120_000;

export interface TestUnleash {
  /** http://127.0.0.1:PORT */
  readonly baseUrl: string;
  /** An admin token (Unleash's `*:*.` admin API token). */
  readonly adminToken: string;
  /** A backend (client) token of a project and environment, for Unleash's server SDKs. */
  clientToken(project: string, environment: string): string;
  /** Wall time from spawn to listening, and the process's CPU (user + system) by then, in ms. */
  readonly started: { wallMs: number; cpuMs: number };
  /** The process's CPU so far, in ms. */
  cpuMs(): number;
  /** One admin API call; its JSON (or null for an empty body); a status other than 2xx throws with the body. */
  admin(method: string, path: string, body?: unknown): Promise<unknown>;
}

/** CPU time (user + system, children excluded) of a process of this machine, in ms (from /proc, at Linux's 100 ticks a second). */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime: fields 14 and 15 of stat, 12 and 13 after the name and state.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * Starts Unleash for `t`'s file in a new database of `databases`; stopped (SIGTERM to its PID, then
 * SIGKILL) and the databases destroyed at `t`'s teardown. `tokens`: the backend tokens to make, by
 * project and environment (Unleash checks both exist when it makes one: `default` and its two
 * environments do from the start; the open-source server makes no others).
 */
export async function startUnleash(
  t: Pick<Test, 'teardown'>,
  databases: TestDatabases,
  tokens: { project: string; environment: string }[],
): Promise<TestUnleash> {
  const url = await databases.newDatabase();
  const port = await freePort();
  const adminToken = '*:*.flagwire-test-admin';
  const clientTokens = tokens.map((k) => ({ ...k, secret: `${k.project}:${k.environment}.flagwire-test-client`, type: 'client' }));
  const [file, args] = plainNode(['--enable-source-maps', kProcess]);
  const spawnedAt = Date.now();
  const child = spawn(file, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: {
      ...process.env,
      UNLEASH_TEST_DATABASE_URL: url,
      UNLEASH_TEST_PORT: String(port),
      UNLEASH_TEST_TOKENS: JSON.stringify([{ secret: adminToken, type: 'admin', project: '*', environment: '*' }, ...clientTokens]),
      CHECK_VERSION: 'false',
      SEND_TELEMETRY: 'false',
    },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8000);
  });
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await databases.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    const limit = setTimeout(() => reject(new Error(`Unleash did not start in ${kStartLimitMs} ms: ${stderr}`)), kStartLimitMs);
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('ready\n')) {
        clearTimeout(limit);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(limit);
      reject(new Error(`Unleash exited (${code}) before it listened: ${stderr}`));
    });
  });
  const pid = child.pid!;
  const started = { wallMs: Date.now() - spawnedAt, cpuMs: processCpuMs(pid) };
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    adminToken,
    clientToken(project, environment) {
      const token = clientTokens.find((k) => k.project === project && k.environment === environment);
      if (token === undefined) throw new Error(`no client token was made for ${project}/${environment}`);
      return token.secret;
    },
    started,
    cpuMs: () => processCpuMs(pid),
    async admin(method, path, body) {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: adminToken, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`Unleash ${method} ${path}: ${res.status} ${text}`);
      return text === '' ? null : JSON.parse(text);
    },
  };
}

/** An Unleash constraint `contextName IN values`, as Unleash's admin API takes it and its export writes it. */
export const inList = (contextName: string, values: string[]) => ({
  contextName,
  operator: 'IN',
  values,
  inverted: false,
  caseInsensitive: false,
});

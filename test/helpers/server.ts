// Starts the real server (the `flagwire serve` console command) on a free port with its own data dir.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { plainNode } from './plain-process.js';
import { scratchDir } from './scratch-dir.js';
import { freePort } from './free-port.js';

/** The bin, as `npx flagwire` runs it (scripts/build-cli.mjs: the entry, src/cli/cli.ts, as one CommonJS file). */
export const kCli = fileURLToPath(new URL('../../src/cli/flagwire.cjs', import.meta.url));

/**
 * The write timeout every server and command a test starts has unless the test sets its own: a minute.
 * The default (10 s) is what a user is told to retry after; in a test it only catches a hang, and on a
 * busy 2-core machine (load 25) a server's first writes at start-up have taken longer than 10 s.
 */
export const kTestWriteTimeout = { FLAGWIRE_WRITE_TIMEOUT_MS: '60000' };

export interface TestServer {
  baseUrl: string;
  port: number;
  /** The sync service's port (flagd's gRPC: src/sync/sync-server.ts); 0 when it is off, as it is unless asked for. */
  syncPort: number;
  dataDir: string;
  proc: ChildProcess;
  /** Everything the server printed on stdout so far. */
  output(): string;
  /** Everything the server printed on stderr so far (its JSON log lines). */
  logs(): string;
  /** SIGTERM, then the exit code (null if killed by a signal). */
  stop(): Promise<number | null>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  demo?: boolean;
  dataDir?: string;
  /**
   * The sync service: on this port, or on one free now ('free'); absent, off. Tests start servers in
   * parallel: none may take the default port 8015, so it is off unless a test asks for it.
   */
  syncPort?: number | 'free';
  /** The HTTP port (a server restarted where its clients expect it, such as a relay's upstream); absent, a free one. */
  port?: number;
  /** Another build's bin, for a bench's A/B of two builds (bench/locations.ts: builtBin); absent, this build's. */
  cli?: string;
}

/** A fresh data dir, removed when the test process exits. */
export function tempDataDir(): string {
  return scratchDir('flagwire-test-');
}

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? tempDataDir();
  const args = [opts.cli ?? kCli, 'serve', '--port', String(opts.port ?? 0), '--host', '127.0.0.1', '--data', dataDir];
  if (opts.demo) args.push('--demo');
  const syncPort = opts.syncPort === 'free' ? await freePort() : (opts.syncPort ?? 0);
  // plainNode: the server runs as users run it, without the test runner's loaders.
  const proc = spawn(...plainNode(args), {
    env: {
      ...process.env,
      ...kTestWriteTimeout,
      FLAGWIRE_LOG_LEVEL: 'warn',
      FLAGWIRE_EVAL_WORKERS: '1',
      FLAGWIRE_SYNC_PORT: String(syncPort),
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    // The bound only catches a hang: on a loaded 2-core machine a start (store open, writer, eval workers)
    // has taken over 15 s.
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s\n${stdout}\n${stderr}`)), 60_000);
    const onData = () => {
      const m = /Flagwire listening on http:\/\/[^:]+:(\d+)/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        proc.stdout!.off('data', onData);
        resolve(Number(m[1]));
      }
    };
    proc.stdout!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening\n${stdout}\n${stderr}`));
    });
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    syncPort,
    dataDir,
    proc,
    output: () => stdout,
    logs: () => stderr,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return exited;
    },
  };
}

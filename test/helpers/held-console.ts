// A real console command held inside its write transaction (FLAGWIRE_TEST_CONSOLE_HOLD=1, see
// src/cli/test-hooks.ts): it has made its change and holds the write lock (LMDB's, or with
// --database PostgreSQL's revision row) until released, then commits. Whatever another process writes
// meanwhile queues behind it and is applied after its commit.
import { spawn } from 'node:child_process';
import { kCli } from './server.js';
import { plainNode } from './plain-process.js';

export interface HeldConsole {
  /** Lets the command go on: it commits; resolves with its exit code and its stdout. */
  release(): Promise<{ code: number | null; stdout: string }>;
}

/** Starts `flagwire <args> --json` and resolves once it holds its transaction; killed at the test's end. */
export async function holdConsole(t: { teardown(fn: () => void): void }, args: readonly string[]): Promise<HeldConsole> {
  const { FLAGWIRE_DATA: _data, ...env } = process.env;
  const child = spawn(...plainNode([kCli, ...args, '--json']), {
    env: { ...env, FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_CONSOLE_HOLD: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes('flagwire-test-hook: in-transaction\n')) resolve();
    });
    void exited.then((code) =>
      reject(new Error(`flagwire ${args.join(' ')} exited ${code} before holding its transaction: ${stdout}${stderr}`)),
    );
  });
  return {
    async release() {
      child.stdin.end('x');
      const code = await exited;
      return { code, stdout };
    },
  };
}

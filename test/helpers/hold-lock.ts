// Holds an LMDB file's write lock from another process (lock-holder.ts) until released: a console
// command stopped inside its transaction, as the server's writer (or a node's follower) meets it.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dataFilePath } from '../../src/store/layout.js';
import { plainNode } from './plain-process.js';

const kHolder = fileURLToPath(new URL('./lock-holder.js', import.meta.url));

/** Starts a lock holder on `dataDir`'s data file and resolves once it holds the write lock. */
export async function holdLock(dataDir: string): Promise<{ child: ChildProcess; stillHeld(): boolean; release(): Promise<void> }> {
  const child = spawn(...plainNode([kHolder, dataFilePath(dataDir)]), { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  const seen = (word: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (stderr.includes(word)) resolve();
      };
      child.stderr!.on('data', (d: Buffer) => {
        stderr += d.toString();
        check();
      });
      child.once('exit', () => (stderr.includes(word) ? resolve() : reject(new Error(`lock holder exited before "${word}": ${stderr}`))));
      check();
    });
  await seen('held');
  let exited = false;
  child.once('exit', () => (exited = true));
  return {
    child,
    // False once the holder has let go or ended before release() (what a test's premise rests on).
    stillHeld: () => !exited && !stderr.includes('released'),
    release: async () => {
      const released = seen('released');
      child.stdin!.end('x');
      await released;
    },
  };
}

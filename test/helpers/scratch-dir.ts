// Temporary directories a test process makes and removes when it exits, whatever the test did with them:
// a data dir handed to a server, a store opened in process. Removed at exit (not at a test's teardown)
// because some outlive the test that made them (a store closed by a later teardown).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (made.length === 0) {
    process.once('exit', () => {
      for (const d of made) rmSync(d, { recursive: true, force: true });
    });
  }
  made.push(dir);
  return dir;
}

/** A fresh, empty directory, removed at the end of the test `t`. */
export function tempDir(t: { teardown(fn: () => void): void }, prefix = 'flagwire-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

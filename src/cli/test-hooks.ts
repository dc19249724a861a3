// Hooks for the console's crash tests only, active when FLAGWIRE_TEST_HOOKS=1 (never in production):
// the console writes one line on stderr at each point of a write, so a test that kills it knows where
// the kill landed (before the store was open, inside the write transaction, after its commit); with
// FLAGWIRE_TEST_CONSOLE_HOLD=1 it also stops at the last two points until it reads a byte on stdin (or
// stdin closes), so a kill can be made to land exactly there.
//
//   flagwire-test-hook: store-open       the data file is open; nothing written yet
//   flagwire-test-hook: in-transaction   the command's writes are done, not committed (the write lock is held)
//   flagwire-test-hook: committed        the transaction is committed and flushed to disk
import { readSync, writeSync } from 'node:fs';
import { kTestSwitches } from '../test-switches.js';

export type CliHookPoint = 'store-open' | 'in-transaction' | 'committed';

const { hooks: kEnabled, consoleHold: kHold } = kTestSwitches;

/** Reports reaching `point` (synchronously: the line is in the pipe before the next statement runs). */
export function cliTestHook(point: CliHookPoint): void {
  if (!kEnabled) return;
  writeSync(2, `flagwire-test-hook: ${point}\n`);
  if (kHold && point !== 'store-open') waitForStdin();
}

/**
 * Blocks the whole process (inside the transaction: holding LMDB's write lock) until stdin has a byte
 * or ends. Also the write-lock holder of the tests (test/helpers/lock-holder.ts).
 */
export function waitForStdin(): void {
  const byte = Buffer.alloc(1);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      readSync(0, byte, 0, 1, null);
      return;
    } catch (err) {
      // A non-blocking stdin has nothing yet: wait a millisecond and ask again.
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      Atomics.wait(nap, 0, 0, 1);
    }
  }
}

// A writer command refused in process: its error's code, and nothing written (the world's snapshot of
// every record is the same before and after). Returns the refusal's detail for the test to match.
import type { Test } from 'tap';
import type { FlagwireError } from '../../src/errors.js';
import type { World } from './world.js';

export function refusedCommand(t: Test, world: World, code: string, fn: () => unknown): string {
  const before = world.snapshot();
  let detail = '';
  t.throws(() => {
    try {
      fn();
    } catch (err) {
      detail = (err as FlagwireError).detail;
      t.equal((err as FlagwireError).code, code);
      throw err;
    }
  });
  t.equal(world.snapshot(), before, 'nothing written');
  return detail;
}

// A refusal and nothing written (the world's snapshot of every record is the same before and after): a
// writer command refused in process, with its error's code, or an HTTP request, with its status.
import type { Test } from 'tap';
import type { FlagwireError } from '../../src/errors.js';
import type { World } from './world.js';

/** Returns the refusal's detail for the test to match. */
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

/** Returns the answer's JSON for the test to match. */
export async function refusedRequest(
  t: Test,
  world: World,
  status: number,
  request: () => Promise<{ status: number; json: any }>,
): Promise<any> {
  const before = world.snapshot();
  const r = await request();
  t.equal(r.status, status);
  t.equal(world.snapshot(), before, 'nothing changed');
  return r.json;
}

// The server's test-only routes (FLAGWIRE_TEST_HOOKS=1, src/server/test-hooks.ts).
import { call } from './http.js';
import type { TestServer } from './server.js';

/** Moves the server's clock `seconds` on; resolves with the clock's time then (Unix ms). */
export async function advanceClock(server: TestServer, seconds: number): Promise<number> {
  const r = await call(server.baseUrl, 'POST', `/__test/clock?advance=${seconds}`);
  if (r.status !== 200) throw new Error(`clock hook answered ${r.status}: is FLAGWIRE_TEST_HOOKS=1 set?`);
  return r.json.now as number;
}

/** Moves the server's clock to just after the next multiple of `seconds`; resolves with its time then. */
export async function alignClock(server: TestServer, seconds: number): Promise<number> {
  return (await call(server.baseUrl, 'POST', `/__test/clock?align=${seconds}`)).json.now as number;
}

/** Writes the token activity and flag usage the server has aggregated now, instead of at their next interval. */
export async function flushActivity(server: TestServer): Promise<void> {
  await call(server.baseUrl, 'POST', '/__test/flush');
}

/** Resolves once the writer has committed (or refused) every command sent to it so far. */
export async function writerIdle(server: TestServer): Promise<void> {
  const r = await call(server.baseUrl, 'POST', '/__test/writer-idle');
  if (r.status !== 200) throw new Error(`writer-idle hook answered ${r.status}: is FLAGWIRE_TEST_HOOKS=1 set?`);
}

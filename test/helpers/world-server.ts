// The real server on a free port over a fresh data dir holding the test world; both closed at teardown.
import { startTestServer, tempDataDir, type TestServer, type TestServerOptions } from './server.js';
import { buildWorld, type World } from './world.js';

/**
 * The evaluation routes' body budget per key lifted to its most (1 GiB a second): for tests that send
 * many large bodies from one key and are about something else (eval-body-rate.test.ts tests the budget).
 */
export const kNoEvalBodyBudget = { FLAGWIRE_EVAL_BODY_BYTES_PER_SECOND: String(1024 ** 3) } as const;

/** `syncPort`: the sync service's, as startTestServer takes it (absent: off). */
export async function startWorldServer(
  t: { teardown(fn: () => Promise<unknown>): void },
  env: Record<string, string> = {},
  syncPort?: TestServerOptions['syncPort'],
): Promise<{ server: TestServer; world: World }> {
  const dataDir = tempDataDir();
  const world = buildWorld(dataDir);
  const server = await startTestServer({ dataDir, env, ...(syncPort === undefined ? {} : { syncPort }) });
  t.teardown(async () => {
    await server.stop();
    await world.store.close();
  });
  return { server, world };
}

// The real server on a free port over a fresh data dir holding the test world; both closed at teardown.
import { startTestServer, tempDataDir, type TestServer, type TestServerOptions } from './server.js';
import { buildWorld, type World } from './world.js';

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

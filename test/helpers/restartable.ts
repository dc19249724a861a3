// A server a test stops (SIGTERM or kill -9) and starts again on the same data dir, as often as it
// likes: the one running at the test's end is stopped then.
import type { Test } from 'tap';
import { startTestServer, type TestServer } from './server.js';

export function restartableServer(t: Pick<Test, 'teardown'>, dataDir: string, env: Record<string, string>): () => Promise<TestServer> {
  let running: TestServer | null = null;
  t.teardown(async () => {
    await running?.stop();
  });
  return async () => {
    running = await startTestServer({ dataDir, env });
    return running;
  };
}

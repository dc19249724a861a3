// Flag set reads across two PostgreSQL nodes (issue 99, item 3; docs/decisions.md: flag set reads): a
// stock flagd client's sync stream held on node B makes the flag its set serves "usage unknown" on node A,
// which served it nothing; before it, with no read in the window, A calls it known, and unused. Both
// nodes' clocks are moved a window on (FLAGWIRE_TEST_HOOKS) and their reads written every 200 ms.
import t from 'tap';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { SyncClient } from '../helpers/sync-client.js';
import { advanceClock } from '../helpers/test-hooks.js';
import { seedInProcess, startNode, waitReady } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

t.test("a stream on node B makes the flag's usage unknown on node A", async (t) => {
  const url = await pg.newDatabase();
  const seeded = await seedInProcess(t, url);
  const env = { FLAGWIRE_TEST_HOOKS: '1', FLAGWIRE_TEST_READ_FLUSH_MS: '200' };
  const a = await startNode(url, tempDataDir(), env);
  const b = await startTestServer({ dataDir: tempDataDir(), syncPort: 'free', env: { FLAGWIRE_DATABASE_URL: url, ...env } });
  const client = new SyncClient(b.syncPort);
  t.teardown(async () => {
    client.close();
    await Promise.all([a.stop(), b.stop()]);
  });
  await Promise.all([waitReady(a), waitReady(b)]);
  for (const node of [a, b]) await advanceClock(node, 31 * 24 * 3600);
  const lifecycle = async () =>
    (await call(a.baseUrl, 'GET', `/api/v1/flags/${seeded.flagId}/lifecycle`, { token: seeded.secret })).json as {
      usageKnown: boolean;
      stage: string;
    };

  const before = await pollUntil('usage known on A', lifecycle, (v) => v.usageKnown);
  t.equal(before.stage, 'unused', 'no flagd client read its set in the window');

  const stream = client.syncFlags({ header: `flagSetId=${seeded.projectId},token=${seeded.secret}` });
  await pollUntil(
    'the set, on B',
    async () => stream.sets.length > 0 || stream.ended !== null,
    (v) => v,
  );
  t.ok(JSON.parse(stream.sets[0]!).flags.checkout, "B's set serves the flag");
  const after = await pollUntil("B's read seen on A", lifecycle, (v) => !v.usageKnown);
  t.not(after.stage, 'unused', 'never unused on missing data');
});

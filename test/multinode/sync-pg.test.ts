// The sync service on a node of a PostgreSQL cluster (issue 44, item 1): a stream held on node B is
// pushed a change written through node A (B sees it through its copy, with the same poller as one node),
// its set naming PostgreSQL's revision; and a token revoked on A ends B's stream.
import t from 'tap';
import * as grpc from '@grpc/grpc-js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { sharedPostgres } from '../helpers/postgres.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { SyncClient } from '../helpers/sync-client.js';
import { cli } from '../helpers/cli.js';
import { tempDir } from '../helpers/scratch-dir.js';
import { createTokenWithConsole, seedInProcess, startNode, waitReady } from './support.js';

const pg = await sharedPostgres();
t.teardown(() => pg.destroy());

t.test('a change written through node A is pushed to a stream on node B; a revocation on A ends it', async (t) => {
  const url = await pg.newDatabase();
  const seeded = await seedInProcess(t, url);
  const read = await createTokenWithConsole(t, url, seeded, 'sync-read', 'read');
  t.equal(read.code, 0, read.stderr);
  const readToken = read.json as { id: string; secret: string };
  const a = await startNode(url);
  const b = await startTestServer({ dataDir: tempDataDir(), syncPort: 'free', env: { FLAGWIRE_DATABASE_URL: url } });
  const client = new SyncClient(b.syncPort);
  t.teardown(async () => {
    client.close();
    await Promise.all([a.stop(), b.stop()]);
  });
  await Promise.all([waitReady(a), waitReady(b)]);

  const stream = client.syncFlags({ header: `flagSetId=${seeded.projectId},token=${readToken.secret}` });
  await pollUntil(
    'the first set',
    async () => stream.sets.length > 0 || stream.ended !== null,
    (v) => v,
  );
  t.same(JSON.parse(stream.sets[0]!).flags.checkout.defaultVariant, 'off');
  const patched = await call(a.baseUrl, 'PATCH', `/api/v1/flags/${seeded.flagId}`, {
    token: seeded.secret,
    body: { enabled: true, trafficPercentage: 100 },
  });
  t.equal(patched.status, 200, patched.text);
  await pollUntil(
    'B pushes the change',
    async () => stream.sets.length,
    (n) => n >= 2,
  );
  const pushed = JSON.parse(stream.sets.at(-1)!);
  t.equal(pushed.flags.checkout.defaultVariant, 'on');
  t.ok(pushed.metadata.flagwireRevision >= Number(patched.headers.get('flagwire-revision')), "PostgreSQL's revision, at least the write's");

  const revoked = await cli(tempDir(t), ['token', 'revoke', readToken.id, '--as', seeded.ownerId, '--database', url]);
  t.equal(revoked.code, 0, revoked.stderr);
  await pollUntil(
    'the stream ends',
    async () => stream.ended,
    (v) => v !== null,
    60_000,
  );
  t.equal(stream.ended!.code, grpc.status.UNAUTHENTICATED);
});

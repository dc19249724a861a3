// Black-box: what readers that do not read can make a node hold (issue 55, item 2). A set is queued on
// every stream as one shared Buffer, so twenty readers of one revision hold it once; past
// FLAGWIRE_SYNC_MAX_UNREAD_BYTES the readers that have waited longest are cut (RST_STREAM
// ENHANCE_YOUR_CALM, RESOURCE_EXHAUSTED to a gRPC client) and the others keep their streams.
import http2 from 'node:http2';
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import type { TestContext } from '../helpers/cli.js';
import { call } from '../helpers/http.js';
import { pollUntil } from '../helpers/poll.js';
import { startTestServer, tempDataDir } from '../helpers/server.js';
import { SyncClient, unreadCall } from '../helpers/sync-client.js';
import { buildWorld } from '../helpers/world.js';

const dataDir = tempDataDir();
const world = buildWorld(dataDir);
const { ids, secrets } = world;
// Project B's set is about 1 MiB: far more than HTTP/2's flow-control window, so a reader that does not
// read holds the server's write of it.
for (let i = 0; i < 100; i++) {
  world.run('flagCreate', {
    projectId: ids.singleB,
    body: { name: `big-${i}`, enabled: true, trafficPercentage: 100, variants: { a: 'a'.repeat(10_000) }, defaultVariant: 'a' },
    principal: kOperator,
  });
}
const kMaxUnread = 2.5 * 1024 * 1024;
const server = await startTestServer({
  dataDir,
  syncPort: 'free',
  env: { FLAGWIRE_SYNC_MAX_STREAMS: '100', FLAGWIRE_SYNC_MAX_UNREAD_BYTES: String(kMaxUnread) },
});
const client = new SyncClient(server.syncPort);
const selector = `flagSetId=${ids.singleB},token=${secrets.writeB}`;
t.teardown(async () => {
  client.close();
  await server.stop();
  await world.store.close();
});

interface Unread {
  /** The stream's RST_STREAM code once it closed; null while open. */
  readonly closedWith: () => number | null;
}

/** `count` SyncFlags streams on one connection whose readers read nothing; resolves once the server has begun each answer. */
async function unreadStreams(t: TestContext, count: number): Promise<Unread[]> {
  const session = http2.connect(`http://127.0.0.1:${server.syncPort}`);
  t.teardown(() => session.destroy());
  return Promise.all(
    Array.from({ length: count }, () => {
      const request = unreadCall(session, 'SyncFlags', selector);
      let closedWith: number | null = null;
      request.once('close', () => (closedWith = request.rstCode ?? 0));
      return new Promise<Unread>((resolve) => request.once('response', () => resolve({ closedWith: () => closedWith })));
    }),
  );
}

/** The revision of project B's set now (a reader that reads). */
async function revision(): Promise<number> {
  return JSON.parse(await client.fetchAllFlags({ header: selector })).metadata.flagwireRevision;
}

/** A change to project B, and its set's revision once the node serves it. */
async function change(enabled: boolean): Promise<number> {
  const before = await revision();
  const r = await call(server.baseUrl, 'PATCH', `/api/v1/flags/${ids.flagB}`, { token: secrets.writeB, body: { enabled } });
  if (r.status !== 200) throw new Error(`PATCH: ${r.status} ${r.text}`);
  return pollUntil('the new set', revision, (now) => now > before);
}

t.test('readers that do not read hold a revision once, and past the bound the longest waiting are cut', async (t) => {
  // Twenty readers of one 1 MiB revision: 20 MiB if each held a copy, over the 2.5 MiB bound.
  const first = await unreadStreams(t, 20);
  await change(false);
  const second = await unreadStreams(t, 1);
  // A reader that reads is served meanwhile.
  t.equal(JSON.parse(await client.fetchAllFlags({ header: selector })).metadata.flagSetId, ids.singleB);
  t.same(
    [...first, ...second].map((s) => s.closedWith()),
    new Array(21).fill(null),
    'two revisions held (about 2 MiB): nobody cut',
  );
  // A third revision held would pass the bound: the twenty that waited longest are cut, which lets go of the first revision.
  await change(true);
  const third = await unreadStreams(t, 1);
  await pollUntil(
    'the longest waiting readers are cut',
    async () => first.map((s) => s.closedWith()),
    (codes) => codes.every((code) => code !== null),
  );
  t.same(
    first.map((s) => s.closedWith()),
    new Array(20).fill(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM),
    'cut with ENHANCE_YOUR_CALM (RESOURCE_EXHAUSTED to a gRPC client)',
  );
  t.same(
    [...second, ...third].map((s) => s.closedWith()),
    [null, null],
    'the later readers keep their streams',
  );
});

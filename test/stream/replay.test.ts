// The change feed's replay bounds, in-process over the real store with stand-in responses: the log keeps
// the last `replayCommits` changing commits of a project (a reconnect from before them gets `reset`), and
// a project's log is forgotten `replayIdleMs` after its last stream closed.
import { rmSync } from 'node:fs';
import t from 'tap';
import { routeNumbers } from '../../src/all-routes.js';
import { ChangeFeed } from '../../src/stream/change-feed.js';
import { kStreamRoutes } from '../../src/stream/routes.js';
import { kOperator } from '../../src/actor/audit-actor.js';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { fakeResponse } from '../helpers/fake-stream-response.js';

const kRoutes = routeNumbers(kStreamRoutes);
const world = buildEvalWorld();
const { ids } = world;
t.teardown(async () => {
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});

const patch = (trafficPercentage: number) =>
  world.run('flagPatch', { flagId: ids.half, env: null, patch: { trafficPercentage }, principal: kOperator });

/** Opens a stream (Last-Event-ID `last`), returns what it was sent at once and closes it. */
function reconnect(feed: ChangeFeed, last: string): string {
  const r = fakeResponse();
  feed.open(r.res, ids.single, null, 'flagwire', last);
  r.abort();
  return r.text();
}

const readySeq = (text: string) => /id: (\d+)\nevent: ready/.exec(text)![1]!;

t.test('the last replayCommits changing commits are replayed; before them, reset', async (t) => {
  const feed = new ChangeFeed({ store: world.store, metrics: null, routes: kRoutes, replayCommits: 2 });
  t.teardown(() => feed.close());
  const first = fakeResponse();
  feed.open(first.res, ids.single, null);
  const start = readySeq(first.text());
  for (const pct of [41, 42, 43]) {
    patch(pct);
    feed.poll();
  }
  first.abort();
  const flagEvents = (text: string) => [...text.matchAll(/id: (\d+)\nevent: flag\n/g)].map((m) => m[1]);
  const events = flagEvents(first.text());
  t.equal(events.length, 3, 'the live stream got all three');
  t.same(flagEvents(reconnect(feed, events[0]!)), events.slice(1), 'from the first: the two kept');
  t.same(flagEvents(reconnect(feed, events[1]!)), events.slice(2));
  const tooOld = reconnect(feed, start);
  t.match(tooOld, /event: reset\n/, 'from before the oldest kept commit: reset');
  t.same(flagEvents(tooOld), []);
});

t.test('a project is forgotten replayIdleMs after its last stream closed', async (t) => {
  const feed = new ChangeFeed({ store: world.store, metrics: null, routes: kRoutes, replayIdleMs: 100 });
  t.teardown(() => feed.close());
  const first = fakeResponse();
  feed.open(first.res, ids.single, null);
  const seen = readySeq(first.text());
  first.abort();
  patch(47);
  t.match(reconnect(feed, seen), /event: flag\n/, 'within the time: what it missed, compared on the reconnect');
  const again = readySeq(reconnect(feed, seen));
  await new Promise((resolve) => setTimeout(resolve, 250));
  patch(48);
  const late = reconnect(feed, again);
  t.match(late, /event: reset\n/, 'after it, a change since is not known to be the only one: reset');
  t.notMatch(late, /event: flag\n/);
});

// When the webhook deliverer reads the outbox (src/webhooks/deliverer.ts: run), in-process over a real
// store, with the node's commits counted by the test and the outbox reads counted through the store:
//   - with nothing pending it reads once, then waits for the next commit (or idleMs), not every pollMs;
//     a commit ends the wait at once, and a commit made while it read ends the next wait before it starts;
//   - with a delivery pending it reads every pollMs, commits or none;
//   - stop() ends it whichever way it waits.
import pino from 'pino';
import t from 'tap';
import { kOperator } from '../../src/actor/audit-actor.js';
import { Clock } from '../../src/clock.js';
import { jsonBody } from '../../src/model/request-body.js';
import type { SnapshotReader } from '../../src/store/interfaces.js';
import { type Commits, Deliverer, type DeliveryWork } from '../../src/webhooks/deliverer.js';
import { UrlGuard } from '../../src/webhooks/url-safety.js';
import { pollUntil } from '../helpers/poll.js';
import { tempDataDir } from '../helpers/server.js';
import { buildWorld } from '../helpers/world.js';

const world = buildWorld(tempDataDir());
t.teardown(() => world.store.close());

/** A wait the deliverer began: for commits past `seen`, at most `timeoutMs`; `end` settles it. */
interface Wait {
  seen: number;
  timeoutMs: number;
  end(): void;
}

/** The commits as the test makes them, and the waits the deliverer began on them. */
type TestCommits = Commits & { made: number; waits: Wait[] };

function testCommits(): TestCommits {
  const commits = {
    made: 0,
    waits: [] as Wait[],
    commitCount: () => commits.made,
    commitAfter: (seen: number, timeoutMs: number) => new Promise<void>((end) => commits.waits.push({ seen, timeoutMs, end })),
  };
  return commits;
}

/** The store, its outbox reads (each begins with a snapshot renewal) counted. */
function countedReads(onRead: () => void = () => undefined): { store: SnapshotReader; reads(): number } {
  let reads = 0;
  const store = new Proxy(world.store, {
    get(target, key) {
      if (key === 'resetReadTxn')
        return () => {
          reads++;
          onRead();
          target.resetReadTxn();
        };
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as SnapshotReader;
  return { store, reads: () => reads };
}

/** Claims nothing: a due delivery stays due (and pending), and nothing is sent. */
const kClaimsNothing: DeliveryWork = { claim: async () => [], result: async () => [] };

/** A deliverer started over the store, its reads counted and its commits the test's; `onRead` runs at each read. */
function started(onRead: (commits: TestCommits) => void = () => undefined) {
  const commits = testCommits();
  const { store, reads } = countedReads(() => onRead(commits));
  const options = { pollMs: 20, idleMs: 60_000 };
  const d = new Deliverer(store, kClaimsNothing, new UrlGuard([]), Clock.create(), pino({ level: 'silent' }), commits, options);
  d.start();
  return { d, commits, reads };
}

/** Until the deliverer has begun `count` waits for commits. */
const waitsBegun = (commits: TestCommits, count: number) =>
  pollUntil(
    `wait ${count}`,
    async () => commits.waits.length,
    (n) => n === count,
  );

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('with nothing pending: one read, then a wait for the next commit, which ends it at once', async (t) => {
  const { d, commits, reads } = started();
  await waitsBegun(commits, 1);
  t.equal(reads(), 1, 'one read of the outbox');
  t.match(commits.waits[0], { seen: 0, timeoutMs: 60_000 }, 'then a wait for a commit past those counted before the read, idleMs at most');
  // Ten pollMs: a deliverer that polled would have read again (on a busy machine fewer, never more).
  await sleep(200);
  t.equal(reads(), 1, 'no read while no commit came');
  t.equal(commits.waits.length, 1);
  commits.made = 1;
  commits.waits[0]!.end();
  await waitsBegun(commits, 2);
  t.equal(reads(), 2, 'the commit: read again');
  t.equal(commits.waits[1]!.seen, 1, 'and a wait past it');
  await d.stop();
  t.equal(reads(), 2, 'stopped while waiting for a commit');
});

t.test('a commit made while it reads: the wait that follows is for commits past those counted before the read', async (t) => {
  // Each read sees a commit land as it reads (another thread's, in a node).
  const { d, commits } = started((c) => c.made++);
  await waitsBegun(commits, 1);
  t.equal(commits.made, 1);
  t.equal(commits.waits[0]!.seen, 0, 'past 0, which the count has passed already: the wait ends at once');
  await d.stop();
});

t.test('with a delivery pending: a read every pollMs, no commit needed', async (t) => {
  const hook = world.run('webhookCreate', {
    principal: kOperator,
    projectId: world.ids.single,
    received: jsonBody(JSON.stringify({ url: 'https://hooks.example.com/waits', events: ['flag'] })),
  });
  world.run('flagPatch', { flagId: world.ids.flag, env: null, principal: kOperator, patch: { trafficPercentage: 12 } } as never);
  const { d, commits, reads } = started();
  await pollUntil(
    'reads every pollMs',
    async () => reads(),
    (n) => n >= 4,
  );
  t.same(commits.waits, [], 'no wait for a commit while a delivery is pending');
  await d.stop();
  const stopped = reads();
  await sleep(100);
  t.equal(reads(), stopped, 'no read after stop');
  world.run('webhookDelete', { principal: kOperator, webhookId: hook.id });
});

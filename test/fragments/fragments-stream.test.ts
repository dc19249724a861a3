// A shared fragment changed reaches the change stream (src/stream/change-poller.ts), in process over the
// real store with a stand-in response: each flag whose rule names the fragment is reported changed (a
// `flag` event), a flag that does not use it is not, and the project's configuration tag (OFREP's bulk
// ETag, the event's etag) moves.
import { rmSync } from 'node:fs';
import t from 'tap';
import { routeNumbers } from '../../src/all-routes.js';
import { ChangeFeed } from '../../src/stream/change-feed.js';
import { kStreamRoutes } from '../../src/stream/routes.js';
import { kOperator } from '../../src/actor/audit-actor.js';
import { jsonBody } from '../../src/model/request-body.js';
import { buildEvalWorld } from '../evaluation/engine/eval-world.js';
import { fakeResponse } from '../helpers/fake-stream-response.js';

const world = buildEvalWorld();
const { ids } = world;
t.teardown(async () => {
  await world.store.close();
  rmSync(world.dataDir, { recursive: true, force: true });
});

t.test("a fragment's change is a flag event for each flag that uses it, and only those", async (t) => {
  const rule = (plan: string) => jsonBody(JSON.stringify({ rule: { '==': [{ var: 'plan' }, plan] } }));
  world.run('fragmentCreate', {
    principal: kOperator,
    projectId: ids.single,
    received: jsonBody(JSON.stringify({ name: 'paying', rule: { '==': [{ var: 'plan' }, 'pro'] } })),
  });
  const typed = (name: string, targeting: unknown) =>
    world.run('flagCreate', {
      principal: kOperator,
      projectId: ids.single,
      body: { name, enabled: true, trafficPercentage: 100, variants: { a: 'A', b: 'B' }, defaultVariant: 'b', targeting },
    }).id;
  const user = typed('uses-it', { if: [{ $ref: 'paying' }, 'a', 'b'] });
  const other = typed('does-not', { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'a', 'b'] });

  const feed = new ChangeFeed({ store: world.store, metrics: null, routes: routeNumbers(kStreamRoutes) });
  t.teardown(() => feed.close());
  const stream = fakeResponse();
  feed.open(stream.res, ids.single, null);
  const before = stream.text().length;
  world.run('fragmentUpdate', { principal: kOperator, projectId: ids.single, name: 'paying', received: rule('team') });
  feed.poll();
  const sent = stream.text().slice(before);
  t.match(sent, `"id":"${user}"`, 'the flag using it is reported');
  t.notMatch(sent, `"id":"${other}"`, 'the flag that does not use it is not');
  t.equal([...sent.matchAll(/event: flag\n/g)].length, 1, 'one flag event');
});

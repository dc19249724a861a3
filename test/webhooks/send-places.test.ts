// The rules of the deliverer's send places, in process: a project holds at most its share of a node's
// places; a freed place goes to the next waiting project in turn; a receiver that keeps timing out gets
// less time on each try, down to a floor, and the whole timeout again once it answers.
import t from 'tap';
import { attemptTimeoutMs } from '../../src/webhooks/deliverer.js';
import { SendPlaces } from '../../src/webhooks/send-places.js';

/** A send that runs until `end()` is called. */
function held(places: SendPlaces, projectId: string, started: string[]) {
  let end: (() => void) | undefined;
  const done = places.run(projectId, () => {
    started.push(projectId);
    return new Promise<void>((r) => (end = r));
  });
  return { end: () => end?.(), done };
}

const turn = () => new Promise((r) => setImmediate(r));

t.test('a project holds at most its share; freed places go to waiting projects in turn', async (t) => {
  const places = new SendPlaces(4, 3);
  const started: string[] = [];
  const a = [0, 1, 2, 3, 4].map(() => held(places, 'a', started));
  await turn();
  t.same(started, ['a', 'a', 'a'], 'project a takes its three places, no more, with one free');
  t.equal(places.inUse('a'), 3);
  const b = [0, 1].map(() => held(places, 'b', started));
  const c = held(places, 'c', started);
  await turn();
  t.same(started.slice(3), ['b'], 'b takes the fourth place at once, while a waits');
  a[0]!.end();
  await turn();
  t.same(started.slice(4), ['c'], 'the freed place goes to c, which holds none, not to a, which asked first');
  a[1]!.end();
  await turn();
  t.same(started.slice(5), ['a'], 'then a (one held, as b and c), first in turn');
  a[2]!.end();
  await turn();
  t.same(started.slice(6), ['b'], 'then b: a went to the back of the turn');
  const all = [...a, ...b, c];
  while (places.inUse() > 0) {
    for (const s of all) s.end();
    await turn();
  }
  await Promise.all(all.map((s) => s.done));
  t.equal(places.inUse(), 0, 'every place given back');
});

t.test('a receiver that keeps timing out gets less time on each try, down to a floor', async (t) => {
  t.same(
    [0, 1, 2, 3, 4, 5, 40].map((n) => attemptTimeoutMs(10_000, n)),
    [10_000, 5000, 2500, 1250, 1000, 1000, 1000],
  );
  t.equal(attemptTimeoutMs(500, 3), 500, 'a configured timeout under the floor is kept');
});

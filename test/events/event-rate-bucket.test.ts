// A project's token bucket in-process (src/events/event-rate.ts): a batch admitted or refused whole, and
// the check made before a batch is read, which takes nothing and refuses only when not one event may pass,
// or, after a refusal by the rate, not the refused batch's events.
import t from 'tap';
import { EventRate } from '../../src/events/event-rate.js';

t.test('a second of the rate at once, then the rate; a batch passes whole or waits', async (t) => {
  const rate = new EventRate(1000, 1);
  t.equal(rate.take('p', 1000, 0), 0, 'a second of the rate passes at once');
  t.equal(rate.take('p', 1, 0), 1, 'then nothing more in the same instant: wait a second');
  t.equal(rate.take('p', 500, 500), 0, 'half a second refills half');
  t.equal(rate.take('p', 600, 1000), 1, 'more than refilled waits, and takes nothing');
  t.equal(rate.take('p', 500, 1000), 0, 'what was not taken is still there');
  t.equal(rate.take('q', 1000, 1000), 0, 'another project has a bucket of its own');
});

t.test('exhausted: refuses before a batch is read only when not one event may pass, and takes nothing', async (t) => {
  const rate = new EventRate(1000, 2);
  t.equal(rate.exhausted('p', 0), 0, 'a fresh project may send');
  t.equal(rate.take('p', 500, 0), 0, "two front-end threads: each holds half a second's worth");
  t.equal(rate.exhausted('p', 0), 1, 'an empty bucket: wait');
  t.equal(rate.exhausted('p', 1), 1, 'half an event refilled (500 a second on this thread): still wait');
  t.equal(rate.exhausted('p', 2), 0, 'one event refilled: a batch may be read (take decides)');
  t.equal(rate.take('p', 1, 2), 0, 'exhausted took nothing: the one event is still there');
  t.equal(rate.exhausted('p', 2), 1, 'and now it is spent');
  t.equal(rate.exhausted('q', 2), 0, 'another project is not held by this one');
});

t.test('exhausted after a refusal: the refused batch size must be there before another is read, until one passes', async (t) => {
  const rate = new EventRate(1000, 1);
  t.equal(rate.take('p', 900, 0), 0, 'most of the second spent');
  t.equal(rate.take('p', 500, 0), 1, 'a batch of 500 refused by the rate');
  t.equal(rate.exhausted('p', 100), 1, '200 events in the bucket: fewer than the refused 500, refused before it is read');
  t.equal(rate.exhausted('p', 400), 0, '500 refilled: the next batch is read');
  t.equal(rate.take('p', 10, 400), 0, 'a small batch passes');
  t.equal(rate.exhausted('p', 400), 0, 'and once one passes, one event is enough again');
  t.equal(rate.exhausted('q', 0), 0, "another project's refusal is not this one's");
});

t.test("a batch larger than a thread's share passes on a full bucket, and the rate is kept by the debt", async (t) => {
  const rate = new EventRate(1000, 8);
  t.equal(rate.take('p', 1000, 0), 0, '8 threads: 125 a second each, but a full batch of 1,000 passes on a full bucket');
  t.equal(rate.take('p', 1, 0), 8, 'the bucket owes 875: nothing passes for 8 s');
  t.equal(rate.exhausted('p', 4000), 4, 'half way, refused before it is read');
  t.equal(rate.take('p', 1000, 7999), 1, 'not yet full: the next full batch waits');
  t.equal(rate.take('p', 1000, 8000), 0, 'full again after 8 s: it passes, 1,000 events per 8 s on this thread, the rate');
});

// The front end's refusals before reading (src/events/refused-keys.ts) in-process: a key refused until a
// time answers Retry-After until then and is forgotten after; other keys are not held by it; whatever is
// refused, no more than the bound is held, the expired going first. And the time the events thread
// tells it (EventRate.refusedUntil) is exactly when the thread itself stops refusing the project.
import t from 'tap';
import { EventRate } from '../../src/events/event-rate.js';
import { kMaxRefusedKeys, RefusedKeys } from '../../src/events/refused-keys.js';

t.test('a key is refused until its time, in whole seconds, then forgotten; another key is not held', async (t) => {
  const keys = new RefusedKeys();
  t.equal(keys.retryAfter('fwc_a', 0), 0, 'nothing refused at first');
  keys.refuse('fwc_a', 1500, 0);
  t.equal(keys.retryAfter('fwc_a', 0), 2, '1.5 s left: Retry-After 2');
  t.equal(keys.retryAfter('fwc_a', 1000), 1, '0.5 s left: at least 1');
  t.equal(keys.retryAfter('fwc_a', 1499), 1, 'a millisecond left: still refused');
  t.equal(keys.retryAfter('fwc_b', 1000), 0, 'another key (another project) is not held by it');
  t.equal(keys.retryAfter('fwc_a', 1500), 0, 'at its time it may send');
  t.equal(keys.size, 0, 'and is forgotten');
});

t.test('a batch that passes lets its key send again at once', async (t) => {
  const keys = new RefusedKeys();
  keys.refuse('fwc_a', 1000, 0);
  keys.admit('fwc_a');
  t.equal(keys.retryAfter('fwc_a', 1), 0, 'admitted');
  t.equal(keys.size, 0);
});

t.test('bounded: the expired go first, then the oldest; a forgotten key is read again', async (t) => {
  const keys = new RefusedKeys();
  for (let i = 0; i < kMaxRefusedKeys; i++) keys.refuse(`fwc_${i}`, i < 10 ? 100 : 5000, 0);
  t.equal(keys.size, kMaxRefusedKeys, 'held up to the bound');
  keys.refuse('fwc_new', 5000, 200);
  t.equal(keys.size, kMaxRefusedKeys - 9, 'past it, the ten expired went');
  t.equal(keys.retryAfter('fwc_10', 200), 5, 'the live ones stay');
  for (let i = 0; i < 3 * kMaxRefusedKeys; i++) keys.refuse(`fwc_more_${i}`, 5000, 300);
  t.equal(keys.size, kMaxRefusedKeys, 'however many are refused, the bound holds');
  t.equal(keys.retryAfter('fwc_10', 300), 0, 'the oldest went: its next batch is read (the thread refuses it again)');
  t.equal(keys.retryAfter(`fwc_more_${3 * kMaxRefusedKeys - 1}`, 300), 5, 'the newest stay');
  keys.refuse(`fwc_more_${3 * kMaxRefusedKeys - 1}`, 6000, 300);
  t.equal(keys.size, kMaxRefusedKeys, 'a key refused again is held once');
});

t.test("the thread's time: exhausted refuses until it, with the same Retry-After, and not after", async (t) => {
  const rate = new EventRate(1000, 1);
  t.equal(rate.refusedUntil('p'), 0, 'a project never seen is not refused');
  t.equal(rate.take('p', 900, 0), 0);
  t.equal(rate.take('p', 500, 0), 1, 'a batch of 500 refused');
  const until = rate.refusedUntil('p');
  t.equal(until, 400, '100 events left: 400 ms until the bucket holds 500');
  const keys = new RefusedKeys();
  keys.refuse('fwc_a', until, 0);
  for (const now of [0, 100, 399]) {
    t.equal(keys.retryAfter('fwc_a', now), rate.exhausted('p', now), `at ${now} ms: refused alike`);
    t.ok(rate.exhausted('p', now) > 0);
  }
  t.equal(rate.exhausted('p', until), 0, 'the thread reads at the time it told');
  t.equal(keys.retryAfter('fwc_a', until), 0, 'and so does the front end');
});

t.test('a batch larger than the bucket holds passes on a full bucket; the next waits until it is full again', async (t) => {
  const rate = new EventRate(1000, 2);
  t.equal(rate.take('p', 1000, 0), 0, "1,000 events past a thread's 500 a second pass on a full bucket");
  t.equal(rate.take('p', 1000, 0), 2, 'the bucket owes 500: the next full batch waits 2 s');
  t.equal(rate.refusedUntil('p'), 2000, 'the front end is told: until the bucket is full again');
  t.equal(rate.exhausted('p', 1999), 1, 'refused before it is read until then');
  t.equal(rate.exhausted('p', 2000), 0, 'and read from then on: the project is never shut out for good');
});

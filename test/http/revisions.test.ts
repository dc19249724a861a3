// The revision headers' parts, in-process: what Flagwire-Min-Revision accepts, and the waiter's rules
// (a read only when needed, answers never synchronous, the bound, deadlines, close).
import t from 'tap';
import { kInvalidMinRevision, minRevisionOf, RevisionWaiter } from '../../src/http/revisions.js';
import { waiterAt } from '../helpers/revision-waiter.js';

t.test('minRevisionOf: absent is 0 (always met), whole numbers of up to 15 digits, anything else invalid', async (t) => {
  t.equal(minRevisionOf(''), 0);
  t.equal(minRevisionOf('0'), 0);
  t.equal(minRevisionOf('42'), 42);
  t.equal(minRevisionOf('007'), 7);
  t.equal(minRevisionOf('999999999999999'), 999_999_999_999_999);
  for (const bad of ['-1', '1.5', '1e3', ' 1', 'abc', '0x1', '1234567890123456', '１'])
    t.equal(minRevisionOf(bad), kInvalidMinRevision, bad);
});

/** A waiter whose store is at revision 5 until the test moves it. */
function waiter(waitMs: number, maxWaiting = 10) {
  const { at, waiter } = waiterAt(5, waitMs, maxWaiting);
  return { store: at, w: waiter };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('has(): free at or below what was seen, one read above', async (t) => {
  const { store, w } = waiter(100);
  w.saw(5);
  t.equal(w.has(5), true);
  t.equal(store.reads, 0, 'no read');
  t.equal(w.has(6), false);
  t.equal(store.reads, 1);
  store.revision = 9;
  t.equal(w.has(8), true);
  t.equal(w.latest, 9, 'what a read saw is known');
  t.equal(w.has(9), true);
  t.equal(store.reads, 2);
});

t.test('wait(): answered once the store has it, never synchronously; in time otherwise false', async (t) => {
  const { store, w } = waiter(60);
  const answers: [string, boolean][] = [];
  t.equal(
    w.wait(7, (reached) => answers.push(['seven', reached])),
    true,
  );
  t.equal(
    w.wait(100, (reached) => answers.push(['far', reached])),
    true,
  );
  t.same(answers, [], 'not synchronously');
  t.equal(w.size, 2);
  store.revision = 7;
  // By order, not by time (a busy machine may stall past the 60 ms bound before either is answered):
  // seven is answered reached, the far one not reached once its bound passes, seven first.
  while (answers.length < 2) await sleep(10);
  t.same(answers, [
    ['seven', true],
    ['far', false],
  ]);
  t.equal(w.size, 0);
  const reads = store.reads;
  await sleep(20);
  t.equal(store.reads, reads, 'nothing waits: no more reads');
});

t.test('the bound: past maxWaiting wait() refuses; close() answers every waiting one as not reached', async (t) => {
  const { w } = waiter(10_000, 2);
  const answers: boolean[] = [];
  t.same(
    [1, 2, 3].map(() => w.wait(50, (reached) => answers.push(reached))),
    [true, true, false],
  );
  w.close();
  t.same(answers, [false, false]);
  t.equal(w.size, 0);
});

t.test('an unreadable store answers nothing but lets deadlines run out', async (t) => {
  const w = new RevisionWaiter({
    current: () => {
      throw new Error('unreadable');
    },
    waitMs: 20,
    maxWaiting: 5,
    pollMs: 1,
  });
  const answer = await new Promise<boolean>((resolve) => w.wait(1, resolve));
  t.equal(answer, false);
});

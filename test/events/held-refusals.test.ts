// Refusals from headers held half a second to a second (src/events/held-refusals.ts), in-process with
// responses that record their answer: none is answered before half the bound or after its client went,
// a draining front end answers at once, and past the bound on what waits refusals are answered at once.
import t from 'tap';
import { HeldRefusals, kMaxHoldMs } from '../../src/events/held-refusals.js';
import type { PendingResponse } from '../../src/http/http.js';

/** A response as uWS gives it, as far as holding uses it: its abort handler, its front end's drain. */
function response(drain = { draining: false }) {
  let onAborted: (() => void) | null = null;
  const res = { onAborted: (fn: () => void) => (onAborted = fn), drain } as unknown as PendingResponse;
  return { res, abort: () => onAborted?.() };
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const kTick = 20;

t.test('each answer waits half the bound to the bound, spread over it; a client gone is never answered', async (t) => {
  // The test's clock: what is due is decided by it alone, however late the machine runs the timer.
  let now = 1_000_000;
  const held = new HeldRefusals(undefined, () => now);
  let answered = 0;
  for (let i = 0; i < 40; i++) held.hold(response().res, () => answered++);
  const gone = response();
  let goneAnswered = false;
  held.hold(gone.res, () => (goneAnswered = true));
  t.equal(answered, 0, 'none answered at once');
  t.equal(held.size, 41);
  gone.abort();
  now += kMaxHoldMs / 2 - kTick;
  held.answerDue();
  t.equal(answered, 0, 'none before half the bound (a tick early at most)');
  now += kMaxHoldMs / 4;
  held.answerDue();
  t.ok(answered > 0 && answered < 40, `spread over the range, not due together: ${answered} of 40 by three quarters of the bound`);
  now += kMaxHoldMs / 4 + kTick;
  held.answerDue();
  t.equal(answered, 40, 'every held one answered by the bound');
  t.notOk(goneAnswered, 'the one whose client went is not');
  t.equal(held.size, 0, 'nothing waits');
});

t.test('a draining front end answers what waits at the next tick, and new refusals at once', async (t) => {
  const held = new HeldRefusals();
  const drain = { draining: false };
  const answered: number[] = [];
  held.hold(response(drain).res, () => answered.push(1));
  drain.draining = true;
  held.hold(response(drain).res, () => answered.push(2));
  t.same(answered, [2], 'a refusal while draining is answered at once');
  while (held.size > 0) await sleep(10);
  t.same(answered, [2, 1], 'the one waiting is answered once the drain began');
});

t.test('past its bound, refusals are answered at once: what waits stays bounded', async (t) => {
  const held = new HeldRefusals(3);
  let answered = 0;
  for (let i = 0; i < 5; i++) held.hold(response().res, () => answered++);
  t.equal(held.size, 3, 'three wait');
  t.equal(answered, 2, 'the two past the bound answered at once');
  while (held.size > 0) await sleep(20);
  t.equal(answered, 5);
});

// Refusals from headers answered late (a tarpit). A flooding client's connection carries one request at
// a time: answered at once, refusals from headers are cheap one by one, but a few dozen connections
// asking as fast as they are answered kept most of a large node's cores busy, and another project's
// evaluations' p99 grew many times over (bench/RESULTS.md, events.bench, 16 cores). Held half a
// second to a second, each such connection asks at most twice a second, whatever the client does. Drawn
// in that range, not fixed, so that a flood's connections, refused together, do not come due together:
// held only until the refusal ended (a short time at the default rate), many connections came due as
// one burst each time, and the other project's p99 grew again. A client that honours Retry-After
// sends no batch while refused, so it never waits here.
//
// Bounded: at most kMaxHeld answers wait per front-end thread (past it, a refusal is answered at once,
// as before), each the response and its refusal, never the body. Due times are kept in slots of kTickMs
// (a timing wheel): one timer per thread while anything waits, none when nothing does. A client gone is
// skipped; a front end draining for shutdown answers what waits at the next tick, with Connection: close.
import { type PendingResponse, trackAbort } from '../http/http.js';

/** The longest a refusal is held (the shortest is half of it): about a refused batch's Retry-After. */
export const kMaxHoldMs = 1000;
/** The most answers waiting per front-end thread. */
export const kMaxHeld = 10_000;
const kTickMs = 20;

interface Held {
  readonly res: PendingResponse;
  readonly answer: () => void;
}

export class HeldRefusals {
  /** Answers due in the tick of the key (due time / kTickMs, rounded up). */
  private readonly slots = new Map<number, Held[]>();
  private count = 0;
  private timer: NodeJS.Timeout | null = null;

  /** `now`: this thread's monotonic clock in ms (a test gives its own, and calls answerDue itself). */
  constructor(
    private readonly max = kMaxHeld,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** How many answers wait now. */
  get size(): number {
    return this.count;
  }

  /**
   * Answers `res` (by `answer`) in half a second to a second; at once when as many wait as may, or the
   * front end drains. Timed by this thread's monotonic clock, whatever the node's clock says.
   */
  hold(res: PendingResponse, answer: () => void): void {
    if (this.count >= this.max || res.drain?.draining === true) {
      answer();
      return;
    }
    trackAbort(res);
    const tick = Math.ceil((this.now() + kMaxHoldMs * (0.5 + Math.random() / 2)) / kTickMs);
    const slot = this.slots.get(tick);
    if (slot === undefined) this.slots.set(tick, [{ res, answer }]);
    else slot.push({ res, answer });
    this.count++;
    this.timer ??= setInterval(() => this.answerDue(), kTickMs);
  }

  /** Answers what is due now, and what waits if the front end drains; the timer's every kTickMs. */
  answerDue(): void {
    const tick = this.now() / kTickMs;
    for (const [due, slot] of this.slots) {
      // Every response of a front end shares its drain: one says whether it drains.
      if (due > tick && slot[0]!.res.drain?.draining !== true) continue;
      this.slots.delete(due);
      this.count -= slot.length;
      for (const { res, answer } of slot) if (!res.aborted) answer();
    }
    if (this.count === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }
}

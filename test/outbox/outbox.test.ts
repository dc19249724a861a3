// The outbox rule in-process: a claim is a lease that takes a due item only, and the retry schedule's
// delays, jitter and two kinds of give-up (after a count of attempts: mail; after an age: webhooks).
import t from 'tap';
import { afterFailure, claimLease, claimMsFor, type RetrySchedule, retryDelayMs } from '../../src/outbox/outbox.js';

const t0 = Date.UTC(2030, 0, 1);

t.test('a claim leases a due item to one node until the lease runs out', async (t) => {
  const item = { id: 'a', nextAttemptAt: t0, claimedBy: null as string | null };
  t.equal(claimLease(item, { nodeId: 'n1', claimMs: 1000 }, t0 - 1), null, 'not before its next attempt');
  const held = claimLease(item, { nodeId: 'n1', claimMs: 1000 }, t0);
  t.strictSame(
    held,
    { id: 'a', nextAttemptAt: t0 + 1000, claimedBy: 'n1' },
    'due at its time: leased, next attempt moved to the lease end',
  );
  t.equal(claimLease(held!, { nodeId: 'n2', claimMs: 1000 }, t0 + 999), null, 'another node finds it held');
  t.match(
    claimLease(held!, { nodeId: 'n2', claimMs: 1000 }, t0 + 1000),
    { claimedBy: 'n2' },
    'once the lease ran out (its node died), another takes it',
  );
  t.equal(claimLease({ nextAttemptAt: null }, { nodeId: 'n1', claimMs: 1 }, t0), null, 'nothing to try: never claimed');
  t.strictSame(item, { id: 'a', nextAttemptAt: t0, claimedBy: null }, 'the item read is left as it was');
  t.equal(claimMsFor(10_000), 30_000, 'a lease outlasts an attempt with room to record it');
});

t.test('delays double from the first and are capped; without jitter they are exact', async (t) => {
  const schedule: RetrySchedule = { firstDelayMs: 1000, maxDelayMs: 8000, jitter: false, giveUp: { afterAttempts: 5 } };
  t.strictSame(
    [0, 1, 2, 3, 4, 5, 40].map((n) => retryDelayMs(schedule, n)),
    [1000, 1000, 2000, 4000, 8000, 8000, 8000],
  );
  t.strictSame(afterFailure(schedule, { attempts: 3, queuedAt: t0 }, t0 + 10), { retryAt: t0 + 10 + 4000, givenUp: false });
  t.strictSame(afterFailure(schedule, { attempts: 4, queuedAt: t0 }, t0), { retryAt: t0 + 8000, givenUp: false });
  t.strictSame(
    afterFailure(schedule, { attempts: 5, queuedAt: t0 }, t0),
    { retryAt: t0 + 8000, givenUp: true },
    'given up at the fifth failure',
  );
});

t.test('with jitter each delay is drawn between half and all of it; an age gives up what would retry past it', async (t) => {
  const schedule: RetrySchedule = { firstDelayMs: 5000, maxDelayMs: 3_600_000, jitter: true, giveUp: { afterQueuedMs: 60_000 } };
  t.equal(afterFailure(schedule, { attempts: 1, queuedAt: t0 }, t0, () => 0).retryAt, t0 + 2500, 'the least: half');
  t.equal(afterFailure(schedule, { attempts: 1, queuedAt: t0 }, t0, () => 0.999_999).retryAt, t0 + 5000, 'the most: all of it');
  t.equal(
    afterFailure(schedule, { attempts: 2, queuedAt: t0 }, t0, () => 0.5).retryAt,
    t0 + 7500,
    'doubled: 10 s, drawn at three quarters',
  );
  t.strictSame(
    afterFailure(schedule, { attempts: 1, queuedAt: t0 }, t0 + 55_000, () => 0),
    { retryAt: t0 + 57_500, givenUp: false },
  );
  t.strictSame(
    afterFailure(schedule, { attempts: 1, queuedAt: t0 }, t0 + 58_000, () => 0),
    { retryAt: t0 + 60_500, givenUp: true },
    'its next try would come after the give-up age: given up',
  );
});

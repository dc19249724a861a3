// The one rule for everything Flagwire sends out (mail over SMTP, webhook deliveries): how a node
// claims an item, and when a failed attempt is tried again or given up. Each kind keeps its records and
// its own schedule (its figures are what its users read in docs/operations.md and docs/webhooks.md);
// the rule is written here once.
//
// A claim is a lease: the node that takes a due item writes its name and moves the item's next attempt
// to the lease's end, in a writer transaction. Writers of every node of a PostgreSQL cluster run one at
// a time against the same records (src/store/pg/pg-write-path.ts), so the second node's claim finds the
// item no longer due and takes nothing: one node holds it. The lease outlasts an attempt with room to
// record its outcome; a node that dies while holding one leaves it to run out, and then any node takes
// the item again (at least once, never lost).
//
//   due ──claim──> leased (nextAttemptAt = lease end) ──outcome──> sent / given up
//    ^                  │                                    └───> due again at the backoff's time
//    └── lease ran out ─┘  (its node died, or gave it back when stopping mid-send)
import { randomId } from '../model/ids.js';

/** How an item is retried after a failed attempt, and when it is given up. */
export interface RetrySchedule {
  /** The delay after the first failure; each next one doubles, up to maxDelayMs. */
  firstDelayMs: number;
  maxDelayMs: number;
  /**
   * Each delay drawn between half and all of it, so that the items of one receiver that failed together
   * are not all tried again at the same moment.
   */
  jitter: boolean;
  /** Given up after this many attempts, or once the next attempt would come this long after it was queued. */
  giveUp: { afterAttempts: number } | { afterQueuedMs: number };
}

/** The claim's part of an item's record. */
export interface Lease {
  /** When it may be tried next (Unix ms); while claimed, when the claim runs out. Null: nothing to try. */
  nextAttemptAt: number | null;
  /** The node that claimed it last; null since its last outcome (or never). */
  claimedBy?: string | null;
}

/** A name for this process's claims (one per sender: the mailer, the webhook deliverer). */
export function newSenderId(): string {
  return `node_${randomId(8)}`;
}

/** What a claim asks: the claiming node and the lease's length. */
export interface ClaimRequest {
  nodeId: string;
  claimMs: number;
}

/** How long a sender claims an item whose attempt may take `attemptMs`: room for the attempt and for recording it. */
export function claimMsFor(attemptMs: number): number {
  return attemptMs * 3;
}

/**
 * `item` leased to the node at `now`, or null when it is not due (another node holds it, or its next
 * try is still to come). The caller checks first that it is still to send at all.
 */
export function claimLease<T extends Lease>(item: T, claim: ClaimRequest, now: number): T | null {
  if (item.nextAttemptAt === null || item.nextAttemptAt > now) return null;
  const lease: Lease = { claimedBy: claim.nodeId, nextAttemptAt: now + claim.claimMs };
  return { ...item, ...lease };
}

/** The delay before the try after `attempts` failed ones, before any jitter: first, doubled each time, capped. */
export function retryDelayMs(schedule: Pick<RetrySchedule, 'firstDelayMs' | 'maxDelayMs'>, attempts: number): number {
  return Math.min(schedule.maxDelayMs, schedule.firstDelayMs * 2 ** Math.max(0, attempts - 1));
}

/**
 * The wait after `attempts` failed tries: retryDelayMs, drawn between half and all of it with jitter.
 * The one backoff rule of everything that retries a peer: the outbox's senders, and a relay dialling its
 * upstream (src/relay/upstream-follower.ts).
 */
export function backoffMs(
  schedule: Pick<RetrySchedule, 'firstDelayMs' | 'maxDelayMs' | 'jitter'>,
  attempts: number,
  random: () => number = Math.random,
): number {
  const delay = retryDelayMs(schedule, attempts);
  return schedule.jitter ? Math.round(delay * (0.5 + random() / 2)) : delay;
}

/**
 * After a failed attempt (`attempts` failed so far, this one included): when to try next, and whether
 * the item is given up instead. `random` draws the jitter (Math.random; a test passes its own).
 */
export function afterFailure(
  schedule: RetrySchedule,
  item: { attempts: number; queuedAt: number },
  now: number,
  random: () => number = Math.random,
): { retryAt: number; givenUp: boolean } {
  const retryAt = now + backoffMs(schedule, item.attempts, random);
  const { giveUp } = schedule;
  const givenUp = 'afterAttempts' in giveUp ? item.attempts >= giveUp.afterAttempts : retryAt - item.queuedAt > giveUp.afterQueuedMs;
  return { retryAt, givenUp };
}

// The mail outbox's delivery as writer commands, by the outbox rule (src/outbox/outbox.ts): a node's
// mailer claims a due message, sends it over SMTP, and records the outcome: sent, or retried later with
// backoff. On several PostgreSQL nodes with SMTP set up, the claim is what makes one node send it.
import { isPending, type MailMessage } from '../model/mail.js';
import { afterFailure, type ClaimRequest, claimLease, type RetrySchedule, retryDelayMs } from '../outbox/outbox.js';
import type { StoreWriter } from '../store/interfaces.js';
import { getMail, putMail } from '../model/records/mail-records.js';

export const kMaxMailAttempts = 12;

/** 1 s, 2 s, 4 s ... capped at 30 min, no jitter; after kMaxMailAttempts the message is marked failed (docs/operations.md). */
const kMailSchedule: RetrySchedule = {
  firstDelayMs: 1000,
  maxDelayMs: 30 * 60 * 1000,
  jitter: false,
  giveUp: { afterAttempts: kMaxMailAttempts },
};

/** The delay before the next try after `attempts` failed ones. */
export function mailRetryDelayMs(attempts: number): number {
  return retryDelayMs(kMailSchedule, attempts);
}

/** The mailer of `nodeId` takes a due message for `claimMs`: null when it is sent, given up, not due or held by another node. */
export function mailClaim(w: StoreWriter, input: { seq: number } & ClaimRequest, now: number): MailMessage | null {
  const message = getMail(w, input.seq);
  if (message === undefined || !isPending(message)) return null;
  const claimed = claimLease(message, input, now);
  if (claimed !== null) putMail(w, claimed);
  return claimed;
}

/**
 * The claim of `nodeId` given back unused (its mailer stopped before the send ended, and records no
 * outcome): the message is due again at once, for this node after its restart or for another node.
 */
export function mailRelease(w: StoreWriter, input: { seq: number; nodeId: string }, now: number): MailMessage | null {
  const message = getMail(w, input.seq);
  if (message === undefined || !isPending(message) || message.claimedBy !== input.nodeId) return null;
  const released = { ...message, claimedBy: null, nextAttemptAt: now };
  putMail(w, released);
  return released;
}

export function mailResult(w: StoreWriter, input: { seq: number; error: string | null }, now: number): MailMessage | null {
  const message = getMail(w, input.seq);
  if (!message || message.sentAt !== null) return null;
  const attempts = message.attempts + 1;
  // claimedBy is cleared only on a message that was claimed: one never claimed keeps its shape.
  const free = message.claimedBy === undefined ? {} : { claimedBy: null };
  let next: MailMessage;
  if (input.error === null) next = { ...message, ...free, attempts, sentAt: now, lastError: null };
  else {
    const { retryAt, givenUp } = afterFailure(kMailSchedule, { attempts, queuedAt: message.at }, now);
    next = { ...message, ...free, attempts, lastError: input.error, nextAttemptAt: retryAt, failedAt: givenUp ? now : null };
  }
  putMail(w, next);
  return next;
}

// Outcome of one SMTP delivery attempt of an outbox message: sent, or retried later with backoff.
import type { MailMessage } from '../model/mail.js';
import type { StoreWriter } from '../store/interfaces.js';

export const kMaxMailAttempts = 12;
const kFirstRetryMs = 1000;
const kMaxRetryMs = 30 * 60 * 1000;

/** 1 s, 2 s, 4 s ... capped at 30 min; after kMaxMailAttempts the message is marked failed. */
export function mailRetryDelayMs(attempts: number): number {
  return Math.min(kMaxRetryMs, kFirstRetryMs * 2 ** Math.max(0, attempts - 1));
}

export function mailResult(w: StoreWriter, input: { seq: number; error: string | null }, now: number): MailMessage | null {
  const message = w.getMail(input.seq);
  if (!message || message.sentAt !== null) return null;
  const attempts = message.attempts + 1;
  const next: MailMessage =
    input.error === null
      ? { ...message, attempts, sentAt: now, lastError: null }
      : {
          ...message,
          attempts,
          lastError: input.error,
          nextAttemptAt: now + mailRetryDelayMs(attempts),
          failedAt: attempts >= kMaxMailAttempts ? now : null,
        };
  w.putMail(next);
  return next;
}

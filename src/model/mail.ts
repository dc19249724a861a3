// The mail outbox: every message queued, with its delivery state (who may read one in the web console:
// src/model/records/mail-records.ts readableMail). Plain data, like every record Flagwire keeps: the
// store writes them as they are and they cross threads as is.

export interface MailMessage {
  seq: number;
  at: number;
  to: string;
  /**
   * The organisation the message is about (a denial notice: the token's). Absent on messages queued
   * before it was recorded: those are shown to no one in the web console (`mail list` shows them).
   */
  orgId?: string;
  subject: string;
  text: string;
  sentAt: number | null;
  /** Delivery attempts over SMTP so far, the next one's earliest time, and the last failure. */
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  /** Set when delivery was given up after too many attempts. */
  failedAt: number | null;
  /**
   * The node whose mailer claimed it last (src/outbox/outbox.ts): while claimed, nextAttemptAt is when
   * the claim runs out. Null since its last outcome; absent on a message never claimed.
   */
  claimedBy?: string | null;
}

/** A message to queue (appendMail, src/model/records/mail-records.ts, numbers it): due at once, not yet tried. */
export function newMail(message: Pick<MailMessage, 'at' | 'to' | 'subject' | 'text'> & { orgId: string }): Omit<MailMessage, 'seq'> {
  return { ...message, sentAt: null, attempts: 0, nextAttemptAt: message.at, lastError: null, failedAt: null };
}

/** Still to send: neither sent nor given up. */
export function isPending(message: MailMessage): boolean {
  return message.sentAt === null && message.failedAt === null;
}

// The mail outbox: every message queued, with its delivery state.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.

export interface MailMessage {
  seq: number;
  at: number;
  to: string;
  subject: string;
  text: string;
  sentAt: number | null;
  /** Delivery attempts over SMTP so far, the next one's earliest time, and the last failure. */
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  /** Set when delivery was given up after too many attempts. */
  failedAt: number | null;
}

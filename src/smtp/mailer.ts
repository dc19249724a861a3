// Delivers the mail outbox over SMTP when FLAGWIRE_SMTP_URL is set. It runs beside the request path:
// a slow or failing SMTP server never delays or fails an API request; failures are retried with
// backoff (mail/mail-commands.ts) and every outcome is recorded through the writer.
//
// Nor may a hung SMTP server hold up shutdown. nodemailer's own timeouts (2 min to connect, 30 s for
// the greeting, 10 min of socket silence) would keep a send, and a stop() that waited for it, going
// long past the server's shutdown deadline, which then exits 1 without closing the writer and the
// store. So the transport gets short timeouts, and stop() waits for a send in progress only briefly.
// A send cut short is not recorded: its message stays due in the outbox and is sent after the
// restart, so nothing is lost; if the SMTP server had in fact accepted it, it is sent twice.
import type nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { FlagwireError } from '../errors.js';
import type { SnapshotReader } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';
import { loadOnUse } from '../load-on-use.js';

export const kMailFrom = 'Flagwire <no-reply@flagwire.invalid>';
/** nodemailer, loaded when a server is configured with SMTP (src/load-on-use.ts). */
const nodemailerLib = loadOnUse<typeof nodemailer>('nodemailer');
const smtpTransportLib = loadOnUse<typeof SMTPTransport>('nodemailer/lib/smtp-transport/index.js');
/** Messages sent per poll at most; the rest wait for the next poll. */
const kBatch = 50;
/** Pause before asking again to record an attempt the writer refused as busy. */
const kRecordRetryMs = 1000;

export interface MailerOptions {
  /** How often the outbox is polled for due messages. */
  intervalMs?: number;
  /** nodemailer's DNS, connection, greeting and socket-inactivity timeouts, each. */
  timeoutMs?: number;
  /** How long stop() waits for a send in progress; the server's shutdown deadline is 4.5 s in all. */
  stopWaitMs?: number;
}

const kDefaults: Required<MailerOptions> = { intervalMs: 500, timeoutMs: 10_000, stopWaitMs: 1000 };

export class Mailer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopping = false;
  /** Set when stop() stopped waiting: the send in progress, if it ever ends, is not recorded. */
  private abandoned = false;
  private readonly transport: nodemailer.Transporter;
  private readonly options: Required<MailerOptions>;

  constructor(
    smtpUrl: string,
    private readonly store: SnapshotReader,
    private readonly writer: Pick<WriterClient, 'call'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    options: MailerOptions = {},
  ) {
    this.options = { ...kDefaults, ...options };
    const timeoutMs = this.options.timeoutMs;
    // The transport class itself, not createTransport({ url, ... }): given a `url`, createTransport
    // builds the options from the URL alone and drops every other key (nodemailer 7.0). Settings in
    // the URL's query (e.g. ?socketTimeout=60000) still win over these.
    this.transport = nodemailerLib().createTransport(
      new (smtpTransportLib())({
        url: smtpUrl,
        dnsTimeout: timeoutMs,
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs,
      }),
      { from: kMailFrom },
    );
  }

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.deliverDue()
        .catch((err: unknown) => this.log.error({ err }, 'mail delivery stopped by an error; the next poll tries again'))
        .finally(() => (this.running = null));
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** Starts no new send; waits at most `stopWaitMs` for the one in progress. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    if (this.running !== null) {
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        this.running.then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.options.stopWaitMs))),
      ]);
      clearTimeout(timer);
      if (!finished) {
        this.abandoned = true;
        this.log.warn(
          { waitedMs: this.options.stopWaitMs },
          'stopping with a mail delivery in progress; the message stays in the outbox and is sent after the restart',
        );
      }
    }
    this.transport.close();
  }

  private async deliverDue(): Promise<void> {
    this.store.resetReadTxn();
    const now = this.clock.now();
    // Only the messages due: the outbox keeps every message ever queued, the index only those to send.
    const due = this.store.listDueMail(now, kBatch);
    for (const message of due) {
      if (this.stopping) return;
      let error: string | null = null;
      try {
        await this.transport.sendMail({ to: message.to, subject: message.subject, text: message.text });
      } catch (err) {
        error = (err as Error).message;
        this.log.warn({ seq: message.seq, to: message.to, err: error }, 'mail delivery failed; will retry');
      }
      if (this.abandoned) return;
      await this.record(message.seq, error);
    }
  }

  /**
   * Records a delivery attempt. Refused with Storage busy (another process holds the write lock; not
   * applied), it is asked again until it is written or the mailer stops: a sent message left unrecorded
   * would be sent again. No other message is sent meanwhile.
   */
  private async record(seq: number, error: string | null): Promise<void> {
    for (;;) {
      try {
        await this.writer.call('mailResult', { seq, error });
        return;
      } catch (err) {
        if (!(err instanceof FlagwireError && err.code === 'STORE_BUSY') || this.stopping) {
          this.log.warn({ err, seq }, 'mail delivery could not be recorded; the message stays due and is sent again');
          return;
        }
        await sleep(kRecordRetryMs);
      }
    }
  }
}

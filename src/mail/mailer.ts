// Delivers the mail outbox over SMTP when FLAGWIRE_SMTP_URL is set. It runs beside the request path:
// a slow or failing SMTP server never delays or fails an API request; failures are retried with
// backoff (mail/mail-commands.ts) and every outcome is recorded through the writer. Each message is
// claimed through the writer before it is sent (the outbox rule, src/outbox/outbox.ts), so on several
// PostgreSQL nodes with SMTP set up one node sends it.
//
// Nor may a hung SMTP server hold up shutdown. nodemailer's own timeouts (2 min to connect, 30 s for
// the greeting, 10 min of socket silence) would keep a send, and a stop() that waited for it, going
// long past the server's shutdown deadline, which then exits 1 without closing the writer and the
// store. So the transport gets short timeouts, and stop() waits for a send in progress only briefly.
// A send cut short is not recorded: its message stays due in the outbox and is sent after the
// restart (its claim is given back, so at once), so nothing is lost; if the SMTP server had in fact
// accepted it, it is sent twice.
import type nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Periodic } from '../background/periodic.js';
import type { Clock } from '../clock.js';
import { FlagwireError } from '../errors.js';
import type { MailMessage } from '../model/mail.js';
import { claimMsFor, newSenderId } from '../outbox/outbox.js';
import type { SnapshotReader } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';
import { loadOnUse } from '../load-on-use.js';
import { kMailCommands } from './command-table.js';
import { listDueMail } from '../model/records/mail-records.js';

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
  /** This process: the name its claims carry. */
  readonly nodeId = newSenderId();
  private readonly polls: Periodic;
  /** The message being sent now (claimed by this node). */
  private sending: MailMessage | null = null;
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
    this.polls = new Periodic(() => this.deliverDue(), {
      intervalMs: this.options.intervalMs,
      onError: (err) => this.log.error({ err }, 'mail delivery stopped by an error; the next poll tries again'),
    });
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
    this.polls.start();
  }

  /**
   * Starts no new send; waits at most `stopWaitMs` for the one in progress. One it stops waiting for is
   * abandoned: its claim is given back, so the message is due again at once (after the restart, or on
   * another node).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      this.polls.stop().then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.options.stopWaitMs))),
    ]);
    clearTimeout(timer);
    const abandoned = this.sending;
    if (!finished && abandoned !== null) {
      this.abandoned = true;
      this.log.warn(
        { waitedMs: this.options.stopWaitMs },
        'stopping with a mail delivery in progress; the message stays in the outbox and is sent after the restart',
      );
      await this.release(abandoned.seq);
    }
    this.transport.close();
  }

  private async deliverDue(): Promise<void> {
    this.store.resetReadTxn();
    const now = this.clock.now();
    // Only the messages due: the outbox keeps every message ever queued, the index only those to send.
    const due = listDueMail(this.store, now, kBatch);
    for (const message of due) {
      if (this.stopping) return;
      // Claimed just before it is sent, not with the batch: a claim need only outlast one send.
      let claimed: MailMessage | null;
      try {
        claimed = await this.writer.call(kMailCommands.mailClaim, {
          seq: message.seq,
          nodeId: this.nodeId,
          claimMs: claimMsFor(this.options.timeoutMs),
        });
      } catch (err) {
        this.log.warn({ err, seq: message.seq }, 'mail delivery could not be claimed; the next poll tries again');
        return;
      }
      if (claimed === null) continue; // sent, or held by another node, since it was read
      if (this.stopping) return this.release(message.seq);
      this.sending = claimed;
      let error: string | null = null;
      try {
        await this.transport.sendMail({ to: message.to, subject: message.subject, text: message.text });
      } catch (err) {
        error = (err as Error).message;
        this.log.warn({ seq: message.seq, to: message.to, err: error }, 'mail delivery failed; will retry');
      }
      if (this.abandoned) return;
      await this.record(message.seq, error);
      this.sending = null;
    }
  }

  /** Gives this node's claim on a message back, unused: it is due again at once. */
  private async release(seq: number): Promise<void> {
    await this.writer
      .call(kMailCommands.mailRelease, { seq, nodeId: this.nodeId })
      .catch((err: unknown) => this.log.warn({ err, seq }, 'mail claim not given back; it runs out on its own'));
  }

  /**
   * Records a delivery attempt. Refused with Storage busy (another process holds the write lock; not
   * applied), it is asked again until it is written or the mailer stops: a sent message left unrecorded
   * would be sent again. No other message is sent meanwhile.
   */
  private async record(seq: number, error: string | null): Promise<void> {
    for (;;) {
      try {
        await this.writer.call(kMailCommands.mailResult, { seq, error });
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

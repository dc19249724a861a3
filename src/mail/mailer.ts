// Delivers the mail outbox over SMTP when FLAGWIRE_SMTP_URL is set. It runs beside the request path:
// a slow or failing SMTP server never delays or fails an API request; failures are retried with
// backoff (writer/mail-commands.ts) and every outcome is recorded through the writer.
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { StoreReader } from '../store/store.js';
import type { WriterClient } from '../writer/client.js';

export const kMailFrom = 'Flagwire <no-reply@flagwire.invalid>';
/** Messages sent per poll at most; the rest wait for the next poll. */
const kBatch = 50;

export class Mailer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly transport: nodemailer.Transporter;

  constructor(
    smtpUrl: string,
    private readonly store: StoreReader & { resetReadTxn(): void },
    private readonly writer: Pick<WriterClient, 'call'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly intervalMs = 500,
  ) {
    this.transport = nodemailer.createTransport(smtpUrl, { from: kMailFrom });
  }

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.deliverDue().finally(() => (this.running = null));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
    this.transport.close();
  }

  private async deliverDue(): Promise<void> {
    this.store.resetReadTxn();
    const now = this.clock.now();
    // Only the messages due: the outbox keeps every message ever queued, the index only those to send.
    const due = this.store.listDueMail(now, kBatch);
    for (const message of due) {
      let error: string | null = null;
      try {
        await this.transport.sendMail({ to: message.to, subject: message.subject, text: message.text });
      } catch (err) {
        error = (err as Error).message;
        this.log.warn({ seq: message.seq, to: message.to, err: error }, 'mail delivery failed; will retry');
      }
      try {
        await this.writer.call('mailResult', { seq: message.seq, error });
      } catch (err) {
        this.log.warn({ err }, 'mail delivery could not be recorded');
      }
    }
  }
}

// The mail capability's background work: the mailer, on a node with an SMTP server (FLAGWIRE_SMTP_URL).
import type { NodeServices, RunningWork } from '../capability/background-work.js';
import { Mailer } from './mailer.js';

/** The mailer, polling the outbox from now on; null without an SMTP server. */
export async function startMailer({ config, store, writer, clock, log }: NodeServices): Promise<RunningWork | null> {
  if (config.smtpUrl === null) return null;
  const mailer = new Mailer(config.smtpUrl, store, writer, clock, log);
  mailer.start();
  return { stop: () => mailer.stop() };
}

// The mail outbox as the store keeps it (keyedRecords: each message under its number, numbered in
// sequence, in the mail database, and while still to send filed by when its next attempt is due), and
// every read and write of it, and who may read a message in the web console. A node's own work: not relayed, and no write of it moves the revision.
import type { User } from '../accounts.js';
import { isPending, type MailMessage } from '../mail.js';
import type { StoreReader, StoreWriter } from '../../store/interfaces.js';
import { keyedRecords } from '../../store/record-kinds.js';
import { getRole } from './member-records.js';

export const kMailRecords = keyedRecords<MailMessage>()({
  name: 'mail',
  database: 'mail',
  relayed: false,
  key: (message) => String(message.seq),
  sequence: (message) => message.seq,
  indexes: {
    /** The messages still to send, by when their next attempt is due, then by number: the mailer's poll reads only these. */
    due: { keysOf: (message) => (isPending(message) ? [[message.nextAttemptAt, message.seq]] : []) },
  },
});

/** Every message of the outbox, oldest first. */
export function listMail(r: Pick<StoreReader, 'listKeyed'>): MailMessage[] {
  return r.listKeyed(kMailRecords).sort((a, b) => a.seq - b.seq);
}

export function getMail(r: Pick<StoreReader, 'getKeyed'>, seq: number): MailMessage | undefined {
  return r.getKeyed(kMailRecords, String(seq));
}

/** Up to `limit` messages still to send whose next attempt is due at `now`, earliest due first. */
export function listDueMail(r: Pick<StoreReader, 'listKeyedBy'>, now: number, limit: number): MailMessage[] {
  return r.listKeyedBy(kMailRecords, 'due', [], { through: [now], limit });
}

/** Queues a message under the next number of the outbox. */
export function appendMail(w: Pick<StoreWriter, 'nextSeq' | 'putKeyed'>, message: Omit<MailMessage, 'seq'>): MailMessage {
  const full: MailMessage = { seq: w.nextSeq(kMailRecords), ...message };
  w.putKeyed(kMailRecords, full);
  return full;
}

export function putMail(w: Pick<StoreWriter, 'putKeyed'>, message: MailMessage): void {
  w.putKeyed(kMailRecords, message);
}

/**
 * The messages `user` may read, newest first: addressed to them (addresses compare without case) and
 * about an organisation they belong to now. Mail about an organisation they left stays unread until
 * they belong to it again; no one reads another person's mail, whatever organisations they share.
 * The one home of the rule: every view of mail asks it.
 */
export function readableMail(r: Pick<StoreReader, 'listKeyed' | 'getKeyed'>, user: User): MailMessage[] {
  const to = user.email.toLowerCase();
  return listMail(r)
    .filter((m) => m.to.toLowerCase() === to && m.orgId !== undefined && getRole(r, m.orgId, user.id) !== undefined)
    .reverse();
}

// The console's mail page: the signed-in user's own mail.
import { readableMail } from '../model/records/mail-records.js';
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { getOrg } from '../model/records/org-records.js';

export function mailView(call: ApiCall) {
  const messages = readableMail(call.store, call.user).map(({ seq, at, to, orgId, subject, text, sentAt, failedAt, attempts }) => ({
    seq,
    at,
    to,
    orgId,
    orgName: orgId === undefined ? null : (getOrg(call.store, orgId)?.name ?? null),
    subject,
    text,
    sentAt,
    failedAt,
    attempts,
  }));
  return { messages };
}
export type MailView = ReturnType<typeof mailView>;

export const kMailRoutes: readonly ApiRoute[] = [
  {
    // The signed-in user's own mail, by the one rule of who reads a message (model/mail.ts).
    method: 'GET',
    pattern: 'mail',
    run: mailView,
  },
];

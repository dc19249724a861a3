// The mail an invitation sends its addressee: who invites them to which organisation with which role,
// and how to answer. Queued in the outbox like every message (the mailer sends it when SMTP is set).
import type { Org, User } from '../model/accounts.js';
import type { Invitation } from '../model/invitations.js';
import type { MailMessage } from '../model/mail.js';

/**
 * `joinToken`: the one-time token of an address no user has; the link creates the user. Without it the
 * addressee has a user already, and answers on the console's home page once signed in.
 */
export function invitationMail(
  invitation: Invitation,
  org: Org,
  inviter: User,
  consoleUrl: string,
  joinToken: string | null,
): Omit<MailMessage, 'seq'> {
  const until = new Date(invitation.expiresAt).toISOString();
  const answer =
    joinToken === null
      ? [`Sign in to the Flagwire console at ${consoleUrl} and accept or decline it on the home page before ${until}.`]
      : [
          'Open this link to choose your name and a password; your account is created and you join at once:',
          `${consoleUrl}#/join/${invitation.id}/${joinToken}`,
          `The link works once, until ${until}, and no longer once the invitation is answered or replaced.`,
        ];
  return {
    at: invitation.createdAt,
    to: invitation.email,
    orgId: org.id,
    subject: `Flagwire: ${inviter.name} invites you to ${org.name}`,
    text: [`${inviter.name} (${inviter.email}) invites you to the organisation "${org.name}" as ${invitation.role}.`, ...answer].join('\n'),
    sentAt: null,
    attempts: 0,
    nextAttemptAt: invitation.createdAt,
    lastError: null,
    failedAt: null,
  };
}

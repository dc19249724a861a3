// Invitations to an organisation (web console): an Admin or Owner invites an e-mail address with a
// role; the user signed in with that address accepts (and becomes a member) or declines. Only this
// makes someone a member from the web console: membership, and with it what the organisation's
// owners see, is never given to a person without their consent. The CLI's `org add-member` stays the
// operator's direct tool.
import { FlagwireError } from '../errors.js';
import type { Membership, User } from '../model/accounts.js';
import { hashSecret, randomId } from '../model/ids.js';
import {
  isInvitationLive,
  kInvitationLifetimeMs,
  kJoinTokenLength,
  kMaxPendingInvitations,
  type Invitation,
} from '../model/invitations.js';
import { notFoundDetail, requireOrg, requireUser } from '../model/records/lookups.js';
import { isPasswordHash } from '../model/passwords.js';
import type { StoreWriter } from '../store/interfaces.js';
import { requireEmail } from '../model/input-checks.js';
import { auditMembership, checkMayGiveRole, requireRole, userCreate } from '../orgs/org-commands.js';
import { invitationMail } from './invitation-mail.js';
import { personActor, personOf, type Principal } from '../actor/audit-actor.js';
import { findUserByEmail } from '../model/records/org-records.js';
import { deleteInvitation, getInvitation, listOrgInvitations, putInvitation } from '../model/records/invitation-records.js';
import { appendMail } from '../model/records/mail-records.js';
import { getRole, putMember } from '../model/records/member-records.js';
import { putCredential } from '../model/records/session-records.js';

export interface OrgInviteInput {
  orgId: string;
  email: string;
  role: string;
  /** Who asks: only a person invites (the web console's signed-in user), never a token. */
  principal: Principal;
  /** The console's address (…/console/), for the mail's link: the route knows it, the writer does not. */
  consoleUrl: string;
}

/** What the inviter is answered: never the join link's hash. */
export type InvitationView = Omit<Invitation, 'linkHash'>;

/**
 * A new invitation, answered the same whether or not a user has the address (the inviter learns
 * nothing about accounts). Inviting an address again replaces its pending invitation; expired ones are
 * dropped here, so an organisation holds at most kMaxPendingInvitations records. The addressee is
 * mailed; an address no user has gets a one-time link that creates the user (invitationJoin), whose
 * token is kept only as its hash, on the invitation, so it ends with it.
 */
export function orgInvite(w: StoreWriter, input: OrgInviteInput, now: number): InvitationView {
  const person = personActor(w, input.principal, 'invite a member');
  const org = requireOrg(w, input.orgId);
  const role = requireRole(input.role);
  checkMayGiveRole(w, org.id, person.userId, role);
  const email = requireEmail(input.email).toLowerCase();
  const existing = findUserByEmail(w, email);
  if (existing !== undefined && getRole(w, org.id, existing.id) !== undefined) {
    throw new FlagwireError('INVALID_REQUEST', `${email} is already a member of organisation ${org.id}; change their role instead.`);
  }
  let pending = 0;
  for (const invitation of listOrgInvitations(w, org.id)) {
    if (!isInvitationLive(invitation, now) || invitation.email === email) deleteInvitation(w, invitation);
    else pending++;
  }
  if (pending >= kMaxPendingInvitations) {
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Organisation ${org.id} already has ${kMaxPendingInvitations} pending invitations; wait for one to be accepted, declined or to expire.`,
    );
  }
  const invitation: Invitation = {
    id: `inv_${randomId(16)}`,
    orgId: org.id,
    email,
    role,
    invitedBy: person.userId,
    createdAt: now,
    expiresAt: now + kInvitationLifetimeMs,
  };
  const joinToken = existing === undefined ? randomId(kJoinTokenLength) : null;
  putInvitation(w, joinToken === null ? invitation : { ...invitation, linkHash: hashSecret(joinToken) });
  // The mail names the inviter with their address, which only the user's record has.
  appendMail(w, invitationMail(invitation, org, requireUser(w, person.userId), input.consoleUrl, joinToken));
  auditMembership(w, person, 'member.invite', org.id, `invitation of ${email}`, { before: null, after: role }, now);
  return invitation;
}

export interface InvitationJoinInput {
  invitationId: string;
  /** SHA-256 of the link's token: the token itself never reaches the writer. */
  tokenHash: string;
  name: string;
  /** Hashed by the caller (scrypt is never run on the writer thread: session-commands.ts). */
  passwordHash: string;
}

/**
 * The mailed link, used: creates the invited address's user with its name and password and makes it a
 * member, in one change, so there is never a user without the membership nor a second use of the link.
 * An unknown, expired, answered or replaced invitation, a wrong token, and an address that has a user by
 * now (they sign in instead) are the same 404: the link tells its holder nothing more.
 */
export function invitationJoin(w: StoreWriter, input: InvitationJoinInput, now: number): { user: User; member: Membership } {
  const invitation = getInvitation(w, input.invitationId);
  if (
    invitation?.linkHash === undefined ||
    invitation.linkHash !== input.tokenHash ||
    !isInvitationLive(invitation, now) ||
    findUserByEmail(w, invitation.email) !== undefined
  ) {
    throw new FlagwireError('NOT_FOUND', notFoundDetail('invitation', input.invitationId));
  }
  if (typeof input.passwordHash !== 'string' || !isPasswordHash(input.passwordHash)) {
    throw new FlagwireError('INVALID_REQUEST', 'the password hash is not one Flagwire made');
  }
  const user = userCreate(w, { email: invitation.email, name: input.name }, now);
  putCredential(w, { userId: user.id, passwordHash: input.passwordHash, updatedAt: now });
  deleteInvitation(w, invitation);
  const member: Membership = { orgId: invitation.orgId, userId: user.id, role: invitation.role };
  putMember(w, member);
  auditMembership(w, personOf(user), 'member.accept', member.orgId, `role of user:${user.id}`, { before: null, after: member.role }, now);
  return { user, member };
}

export interface InvitationAnswerInput {
  invitationId: string;
  /** Who answers: only the invited person (the web console's signed-in user). */
  principal: Principal;
}

/** The user's live invitation; any other (someone else's, expired, answered, unknown) is the same 404. */
function requireOwnInvitation(w: StoreWriter, input: InvitationAnswerInput, now: number): { invitation: Invitation; user: User } {
  const user = requireUser(w, personActor(w, input.principal, 'answer an invitation').userId);
  const invitation = getInvitation(w, input.invitationId);
  if (invitation === undefined || invitation.email !== user.email.toLowerCase() || !isInvitationLive(invitation, now)) {
    throw new FlagwireError('NOT_FOUND', notFoundDetail('invitation', input.invitationId));
  }
  return { invitation, user };
}

/** Accepting makes the user a member with the invited role (a member already keeps their role). */
export function invitationAccept(w: StoreWriter, input: InvitationAnswerInput, now: number): Membership {
  const { invitation, user } = requireOwnInvitation(w, input, now);
  deleteInvitation(w, invitation);
  const before = getRole(w, invitation.orgId, user.id) ?? null;
  const member: Membership = { orgId: invitation.orgId, userId: user.id, role: before ?? invitation.role };
  putMember(w, member);
  auditMembership(w, personOf(user), 'member.accept', member.orgId, `role of user:${user.id}`, { before, after: member.role }, now);
  return member;
}

export function invitationDecline(w: StoreWriter, input: InvitationAnswerInput, now: number): { declined: true } {
  const { invitation, user } = requireOwnInvitation(w, input, now);
  deleteInvitation(w, invitation);
  auditMembership(
    w,
    personOf(user),
    'member.decline',
    invitation.orgId,
    `invitation of ${invitation.email}`,
    { before: invitation.role, after: null },
    now,
  );
  return { declined: true };
}

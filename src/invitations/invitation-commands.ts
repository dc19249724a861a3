// Invitations to an organisation (web console): an Admin or Owner invites an e-mail address with a
// role; the user signed in with that address accepts (and becomes a member) or declines. Only this
// makes someone a member from the web console: membership, and with it what the organisation's
// owners see, is never given to a person without their consent. The CLI's `org add-member` stays the
// operator's direct tool.
import { FlagwireError } from '../errors.js';
import type { Membership } from '../model/accounts.js';
import { randomId } from '../model/ids.js';
import { isInvitationLive, kInvitationLifetimeMs, kMaxPendingInvitations, type Invitation } from '../model/invitations.js';
import { notFoundDetail, requireOrg, requireUser } from '../model/lookups.js';
import type { StoreWriter } from '../store/interfaces.js';
import { requireEmail } from '../model/input-checks.js';
import { auditMembership, checkMayGiveRole, requireRole } from '../orgs/org-commands.js';

export interface OrgInviteInput {
  orgId: string;
  email: string;
  role: string;
  asUserId: string;
}

/**
 * A new invitation, answered the same whether or not a user has the address (the inviter learns
 * nothing about accounts). Inviting an address again replaces its pending invitation; expired ones are
 * dropped here, so an organisation holds at most kMaxPendingInvitations records.
 */
export function orgInvite(w: StoreWriter, input: OrgInviteInput, now: number): Invitation {
  const org = requireOrg(w, input.orgId);
  const role = requireRole(input.role);
  checkMayGiveRole(w, org.id, input.asUserId, role);
  const email = requireEmail(input.email).toLowerCase();
  const existing = w.findUserByEmail(email);
  if (existing !== undefined && w.getRole(org.id, existing.id) !== undefined) {
    throw new FlagwireError('INVALID_REQUEST', `${email} is already a member of organisation ${org.id}; change their role instead.`);
  }
  let pending = 0;
  for (const invitation of w.listOrgInvitations(org.id)) {
    if (!isInvitationLive(invitation, now) || invitation.email === email) w.deleteInvitation(invitation);
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
    invitedBy: input.asUserId,
    createdAt: now,
    expiresAt: now + kInvitationLifetimeMs,
  };
  w.putInvitation(invitation);
  auditMembership(w, requireUser(w, input.asUserId), 'member.invite', org.id, `invitation of ${email}`, { before: null, after: role }, now);
  return invitation;
}

export interface InvitationAnswerInput {
  invitationId: string;
  asUserId: string;
}

/** The user's live invitation; any other (someone else's, expired, answered, unknown) is the same 404. */
function requireOwnInvitation(w: StoreWriter, input: InvitationAnswerInput, now: number): Invitation {
  const user = requireUser(w, input.asUserId);
  const invitation = w.getInvitation(input.invitationId);
  if (invitation === undefined || invitation.email !== user.email.toLowerCase() || !isInvitationLive(invitation, now)) {
    throw new FlagwireError('NOT_FOUND', notFoundDetail('invitation', input.invitationId));
  }
  return invitation;
}

/** Accepting makes the user a member with the invited role (a member already keeps their role). */
export function invitationAccept(w: StoreWriter, input: InvitationAnswerInput, now: number): Membership {
  const invitation = requireOwnInvitation(w, input, now);
  const user = requireUser(w, input.asUserId);
  w.deleteInvitation(invitation);
  const before = w.getRole(invitation.orgId, user.id) ?? null;
  const member: Membership = { orgId: invitation.orgId, userId: user.id, role: before ?? invitation.role };
  w.putMember(member);
  auditMembership(w, user, 'member.accept', member.orgId, `role of user:${user.id}`, { before, after: member.role }, now);
  return member;
}

export function invitationDecline(w: StoreWriter, input: InvitationAnswerInput, now: number): { declined: true } {
  const invitation = requireOwnInvitation(w, input, now);
  w.deleteInvitation(invitation);
  auditMembership(
    w,
    requireUser(w, input.asUserId),
    'member.decline',
    invitation.orgId,
    `invitation of ${invitation.email}`,
    { before: invitation.role, after: null },
    now,
  );
  return { declined: true };
}

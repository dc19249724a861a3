// An invitation to an organisation, made in the web console by its Admin or Owner: the invited person
// becomes a member only by accepting it, signed in as the user with the invited e-mail address.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.
import type { Role } from './accounts.js';

export interface Invitation {
  id: string;
  orgId: string;
  /** Lowercased: addresses compare without case, as sign-in's. */
  email: string;
  role: Role;
  /** The user who invited. */
  invitedBy: string;
  createdAt: number;
  /** Unix ms; from then on it can no longer be accepted and no longer takes one of the organisation's slots. */
  expiresAt: number;
  /**
   * SHA-256 (hex) of the one-time token in the link mailed to an address no user had when invited:
   * the link creates that user. Absent when the address had a user (they sign in and accept).
   */
  linkHash?: string;
}

/** 32 base62 characters: 190 bits. */
export const kJoinTokenLength = 32;

/** Pending (unexpired) invitations an organisation may hold at once. */
export const kMaxPendingInvitations = 20;
export const kInvitationLifetimeMs = 7 * 24 * 3600 * 1000;

export function isInvitationLive(invitation: Invitation, now: number): boolean {
  return invitation.expiresAt > now;
}

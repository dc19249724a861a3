// Invitations to an organisation as the store keeps them (keyedRecords: each under its id in the
// invitations database, filed by organisation and by the lowercased address invited), and every read and
// write of them. A node's own: not relayed, and no write of one moves the revision (no reader caches them).
import { byCreation } from '../by-creation.js';
import type { Invitation } from '../invitations.js';
import type { StoreReader, StoreWriter } from '../../store/interfaces.js';
import { keyedRecords } from '../../store/record-kinds.js';

export const kInvitationRecords = keyedRecords<Invitation>()({
  name: 'invitation',
  database: 'invitations',
  relayed: false,
  key: (invitation) => invitation.id,
  // Accepted, declined, or dropped when expired.
  deletedAs: 'invitationEnded',
  indexes: {
    org: { keysOf: (invitation) => [invitation.orgId] },
    /** By the address invited (stored lowercased: Invitation.email). */
    email: { keysOf: (invitation) => [invitation.email] },
  },
});

/** An invitation by id, expired ones included (the caller checks expiresAt). */
export function getInvitation(r: Pick<StoreReader, 'getKeyed'>, id: string): Invitation | undefined {
  return r.getKeyed(kInvitationRecords, id);
}

/** The organisation's invitations, expired ones included, oldest first. */
export function listOrgInvitations(r: Pick<StoreReader, 'listKeyedBy'>, orgId: string): Invitation[] {
  return r.listKeyedBy(kInvitationRecords, 'org', orgId).sort(byCreation);
}

/** The invitations addressed to `email`, compared without case, expired ones included, oldest first. */
export function listEmailInvitations(r: Pick<StoreReader, 'listKeyedBy'>, email: string): Invitation[] {
  return r.listKeyedBy(kInvitationRecords, 'email', email.toLowerCase()).sort(byCreation);
}

export function putInvitation(w: Pick<StoreWriter, 'putKeyed'>, invitation: Invitation): void {
  w.putKeyed(kInvitationRecords, invitation);
}

export function deleteInvitation(w: Pick<StoreWriter, 'deleteKeyed'>, invitation: Invitation): void {
  w.deleteKeyed(kInvitationRecords, invitation);
}

// Memberships as the store keeps them (keyedRecords: each under its organisation's and user's ids, a
// composite key, in the memberships database, filed by organisation and by user), and every read and
// write of them. Not relayed; every write of one moves the store's revision all the same (configuration:
// roles decide what a person's requests may do).
import type { Membership, Role } from '../accounts.js';
import type { ProjectRole } from '../permissions.js';
import type { Project } from '../projects.js';
import type { StoreReader, StoreWriter } from '../../store/interfaces.js';
import { compositeKey, keyedRecords } from '../../store/record-kinds.js';

export const kMemberRecords = keyedRecords<Membership>()({
  name: 'member',
  database: 'memberships',
  relayed: false,
  configuration: true,
  key: (member) => compositeKey(member.orgId, member.userId),
  // A membership can end (a person deprovisioned).
  deletedAs: 'memberRemoved',
  indexes: {
    /** An organisation's members, by user id. */
    org: { keysOf: (member) => [member.orgId] },
    /** A user's organisations (the console's home), by organisation id: never every organisation of the node. */
    user: { keysOf: (member) => [member.userId] },
  },
});

type MemberReader = Pick<StoreReader, 'getKeyed'>;

export function getMember(r: MemberReader, orgId: string, userId: string): Membership | undefined {
  return r.getKeyed(kMemberRecords, compositeKey(orgId, userId));
}

/** The user's role in the organisation; undefined: not a member. */
export function getRole(r: MemberReader, orgId: string, userId: string): Role | undefined {
  return getMember(r, orgId, userId)?.role;
}

export function listMembers(r: Pick<StoreReader, 'listKeyedBy'>, orgId: string): Membership[] {
  return r.listKeyedBy(kMemberRecords, 'org', orgId);
}

/** The organisations a user belongs to, with their role (in no particular order). */
export function listUserMemberships(r: Pick<StoreReader, 'listKeyedBy'>, userId: string): Membership[] {
  return r.listKeyedBy(kMemberRecords, 'user', userId);
}

export function putMember(w: Pick<StoreWriter, 'putKeyed'>, member: Membership): void {
  w.putKeyed(kMemberRecords, member);
}

/** Ends a membership; nothing when there is none. */
export function deleteMember(w: Pick<StoreWriter, 'getKeyed' | 'deleteKeyed'>, member: Pick<Membership, 'orgId' | 'userId'>): void {
  const stored = getMember(w, member.orgId, member.userId);
  if (stored !== undefined) w.deleteKeyed(kMemberRecords, stored);
}

/** The user's standing in a project: their role in its organisation, `personal` for the owner of a personal project, else undefined. */
export function projectRole(r: MemberReader, project: Pick<Project, 'orgId' | 'ownerUserId'>, userId: string): ProjectRole | undefined {
  if (project.orgId === null) return project.ownerUserId === userId ? 'personal' : undefined;
  return getRole(r, project.orgId, userId);
}

// What SCIM's writes do to the organisation (docs/scim.md), in the writer's transaction: a User is a
// person with a membership while active (a new person is made without a password: they sign in by
// single sign-on, another part's work; an existing account is linked only once its person has joined);
// deprovisioning (active false, or DELETE) ends the membership and the console sessions that reach only
// the organisation, and revokes every token they made in the organisation's projects, with
// the reason the 401 then says; a Group's members hold the role the owner mapped its displayName to (the
// highest of their groups'; a member of none holds Viewer). No write removes or demotes the last Owner.
// Every write is audited in each of the organisation's projects, as a membership's change is.
import { type Actor, writeAudit } from '../actor/audit-actor.js';
import type { FlagwireError } from '../errors.js';
import { highestMappedRole, type Role } from '../model/accounts.js';
import { entityTagList } from '../http/entity-tags.js';
import { randomId } from '../model/ids.js';
import { inRotationGrace } from '../model/permissions.js';
import type { StoreWriter } from '../store/interfaces.js';
import { auditMembership, auditOrg } from '../orgs/org-commands.js';
import { lastOwnerRefusal } from '../orgs/owners.js';
import { scimRefusal } from './errors.js';
import { type GroupState, personEmail, personName, type UserState } from './resources.js';
import { kScimGroupRecords, kScimUserRecords, orgUsersBy, type ScimGroup, type ScimSettings, type ScimUser } from './records.js';
import { listOrgProjects } from '../model/records/project-records.js';
import { putToken, listTokens } from '../model/records/token-records.js';
import { putUser, findUserByEmail } from '../model/records/org-records.js';
import { deleteMember, getRole, listUserMemberships, putMember } from '../model/records/member-records.js';
import { deleteSession, listUserSessions } from '../model/records/session-records.js';

/** Bounds on what one organisation's identity provider may store here. */
export const kMaxScimUsers = 10_000;
export const kMaxScimGroups = 1_000;

/** A Viewer is what a provisioned member of no mapped group holds. */
export const kBaseRole: Role = 'viewer';

/** Who SCIM's writes are audited as: the organisation's identity provider. */
export function scimActor(orgId: string): Actor {
  return { id: `scim:${orgId}`, name: 'SCIM provisioning', environments: [] };
}

export function orgGroups(w: StoreWriter, orgId: string): ScimGroup[] {
  return w.listKeyedBy(kScimGroupRecords, 'org', orgId);
}

/** The If-Match a write was sent with, against the resource's version now: 412 when it names another. */
export function checkVersion(ifMatch: string, version: number, what: string): void {
  if (ifMatch === '' || ifMatch.trim() === '*') return;
  const named = entityTagList(ifMatch).map((tag) => tag.replace(/^W\//, ''));
  if (!named.includes(`"${version}"`))
    throw scimRefusal('preconditionFailed', `${what} has changed: it is at version W/"${version}", not ${ifMatch}. Read it again.`);
}

/** A user's state checked against the organisation's others: userName and externalId are unique in it. */
function checkUserUnique(w: StoreWriter, orgId: string, state: UserState, self: string | null): void {
  const named = orgUsersBy(w, orgId, 'userName', state.userName).find((other) => other.id !== self);
  if (named !== undefined) throw scimRefusal('uniqueness', `A user with userName "${state.userName}" already exists here (${named.id}).`);
  if (state.externalId === null) return;
  const linked = orgUsersBy(w, orgId, 'externalId', state.externalId).find((other) => other.id !== self);
  if (linked !== undefined)
    throw scimRefusal('uniqueness', `A user with externalId "${state.externalId}" already exists here (${linked.id}).`);
}

/**
 * POST /Users: the person provisioned into the organisation: made without a password, or, for an address
 * that has an account, that account when its person is a member already (joined by invitation); refused otherwise.
 */
export function createUser(w: StoreWriter, settings: ScimSettings, state: UserState, now: number): ScimUser {
  const orgId = settings.orgId;
  checkUserUnique(w, orgId, state, null);
  if (w.tallyOf(kScimUserRecords, 'userName', orgId).count >= kMaxScimUsers)
    throw scimRefusal('tooMany', `An organisation holds at most ${kMaxScimUsers} SCIM users.`);
  const email = personEmail(state);
  let person = findUserByEmail(w, email);
  if (person === undefined) {
    // No credential: a person SCIM makes signs in by single sign-on (docs/scim.md: the seam), never a password.
    const name = personName(state);
    person = { id: `usr_${randomId(12)}`, email, name: name === undefined ? email.split('@')[0]! : name.slice(0, 100), createdAt: now };
    putUser(w, person);
  } else if (w.getKeyed(kScimUserRecords, `${orgId}/${person.id}`) !== undefined) {
    throw scimRefusal('uniqueness', `The person with e-mail address ${email} is provisioned here already (${person.id}).`);
  } else if (getRole(w, orgId, person.id) === undefined) {
    // An account is its person's: an organisation links only someone who joined it (an invitation they
    // accepted), never another organisation's member found by address, whom it could then sign out,
    // lock out of their password and sign in as through an identity provider it controls.
    throw scimRefusal(
      'uniqueness',
      `${email} is a Flagwire account that is not a member of this organisation: SCIM links a person only once they have joined it (an Owner invites them and they accept).`,
    );
  }
  const user: ScimUser = { orgId, id: person.id, ...state, created: now, lastModified: now, version: 1 };
  const actor = scimActor(orgId);
  if (user.active && getRole(w, orgId, user.id) === undefined) {
    putMember(w, { orgId, userId: user.id, role: kBaseRole });
    auditMembership(w, actor, 'member.role', orgId, `role of user:${user.id}`, { before: null, after: kBaseRole }, now);
  }
  if (!user.active) deprovision(w, user, now);
  w.putKeyed(kScimUserRecords, user);
  auditOrg(w, actor, 'scim.user.create', orgId, { [`user:${user.id}`]: { before: null, after: auditView(user) } }, now);
  return user;
}

/** PUT or PATCH /Users/{id}: the new state, with what a change of `active` does. */
export function updateUser(w: StoreWriter, settings: ScimSettings, before: ScimUser, state: UserState, now: number): ScimUser {
  checkUserUnique(w, before.orgId, state, before.id);
  const after: ScimUser = { ...before, ...state, lastModified: now, version: before.version + 1 };
  const actor = scimActor(before.orgId);
  if (before.active && !after.active) {
    deprovision(w, after, now);
    auditOrg(w, actor, 'scim.user.deactivate', before.orgId, { [`user:${before.id}`]: { before: true, after: false } }, now);
  } else if (!before.active && after.active) {
    const role = roleFromGroups(w, settings, before.id) ?? kBaseRole;
    putMember(w, { orgId: before.orgId, userId: before.id, role });
    auditMembership(w, actor, 'member.role', before.orgId, `role of user:${before.id}`, { before: null, after: role }, now);
    auditOrg(w, actor, 'scim.user.reactivate', before.orgId, { [`user:${before.id}`]: { before: false, after: true } }, now);
  }
  w.putKeyed(kScimUserRecords, after);
  auditOrg(
    w,
    actor,
    'scim.user.update',
    before.orgId,
    { [`user:${before.id}`]: { before: auditView(before), after: auditView(after) } },
    now,
  );
  return after;
}

/** DELETE /Users/{id}: deprovisioned, out of every group, and no longer a SCIM user (the person and their tokens stay, listed). */
export function deleteUser(w: StoreWriter, user: ScimUser, now: number): void {
  if (user.active) deprovision(w, user, now);
  for (const group of orgGroups(w, user.orgId)) {
    if (group.members.includes(user.id))
      w.putKeyed(kScimGroupRecords, {
        ...group,
        members: group.members.filter((id) => id !== user.id),
        lastModified: now,
        version: group.version + 1,
      });
  }
  w.deleteKeyed(kScimUserRecords, user);
  auditOrg(
    w,
    scimActor(user.orgId),
    'scim.user.delete',
    user.orgId,
    { [`user:${user.id}`]: { before: auditView(user), after: null } },
    now,
  );
}

/**
 * Ends the person's part in the organisation: refused for its last Owner; otherwise the membership
 * goes, the console sessions that reach only this organisation end, and every token they made in the
 * organisation's projects is revoked, saying why.
 */
function deprovision(w: StoreWriter, user: ScimUser, now: number): void {
  const orgId = user.orgId;
  const role = getRole(w, orgId, user.id);
  const lastOwner = lastOwnerRefusal(w, orgId, user.id, null);
  if (lastOwner !== null) throw scimRefusal('mutability', `${user.userName}: ${lastOwner}`);
  if (role !== undefined) {
    deleteMember(w, { orgId, userId: user.id });
    auditMembership(w, scimActor(orgId), 'member.role', orgId, `role of user:${user.id}`, { before: role, after: null }, now);
  }
  // Their sessions signed in through this organisation's identity provider end. A session signed in
  // with a password ends only where the person has no other organisation left: it reaches this one no
  // more (the membership is gone), and their other organisations are not this one's to sign them out of.
  const elsewhere = listUserMemberships(w, user.id).some((m) => m.orgId !== orgId);
  for (const session of listUserSessions(w, user.id)) {
    if (session.orgId === orgId || (session.orgId === undefined && !elsewhere)) deleteSession(w, session);
  }
  const reason = `its creator ${user.userName} was deprovisioned by the organisation's identity provider (SCIM)`;
  for (const project of listOrgProjects(w, orgId)) {
    for (const token of listTokens(w, project.id)) {
      if (token.createdBy !== user.id) continue;
      // A rotated token's old secret still in its grace period stops now too.
      const inGrace = inRotationGrace(token, now);
      if (token.revokedAt !== null && !inGrace) continue;
      putToken(w, inGrace ? { ...token, graceEndsAt: now, revokedReason: reason } : { ...token, revokedAt: now, revokedReason: reason });
      writeAudit(
        w,
        scimActor(orgId),
        {
          projectId: project.id,
          action: 'token.revoke',
          changes: { token: { before: { id: token.id, name: token.name }, after: null }, reason: { before: null, after: reason } },
        },
        now,
      );
    }
  }
}

/** The highest role the owner mapped any of the person's groups to; null when none of them is mapped. */
function roleFromGroups(w: StoreWriter, settings: ScimSettings, userId: string): Role | null {
  const names = orgGroups(w, settings.orgId)
    .filter((group) => group.members.includes(userId))
    .map((group) => group.displayName);
  return highestMappedRole(settings.groupRoles, names);
}

/**
 * Gives each of `userIds` (the members of the mapped groups a change reached) who is an active member
 * the role its groups give now (Viewer for none),
 * audited as member.role; refused, with nothing written, where that would demote the last Owner.
 */
export function applyGroupRoles(w: StoreWriter, settings: ScimSettings, userIds: Iterable<string>, now: number): void {
  const orgId = settings.orgId;
  for (const userId of new Set(userIds)) {
    const user = w.getKeyed(kScimUserRecords, `${orgId}/${userId}`);
    const current = getRole(w, orgId, userId);
    if (user === undefined || !user.active || current === undefined) continue;
    const role = roleFromGroups(w, settings, userId) ?? kBaseRole;
    if (role === current) continue;
    const lastOwner = lastOwnerRefusal(w, orgId, userId, role);
    if (lastOwner !== null) throw scimRefusal('mutability', `${user.userName}: ${lastOwner}`);
    putMember(w, { orgId, userId, role });
    auditMembership(w, scimActor(orgId), 'member.role', orgId, `role of user:${userId}`, { before: current, after: role }, now);
  }
}

/** A group's state checked against the organisation: its displayName unique there, its members its SCIM users. */
function checkGroup(w: StoreWriter, orgId: string, state: GroupState, self: string | null): void {
  for (const other of orgGroups(w, orgId)) {
    if (other.id !== self && other.displayName.toLowerCase() === state.displayName.toLowerCase())
      throw scimRefusal('uniqueness', `A group named "${state.displayName}" already exists here (${other.id}).`);
  }
  if (state.members.length > kMaxScimUsers) throw scimRefusal('tooMany', `A group has at most ${kMaxScimUsers} members.`);
  for (const id of state.members) {
    if (w.getKeyed(kScimUserRecords, `${orgId}/${id}`) === undefined)
      throw scimRefusal('invalidValue', `Member ${id} is not a SCIM user of this organisation: provision the user first.`);
  }
}

/** Whether the Owner mapped a group of this displayName to a role: only such a group's change moves roles. */
function isMapped(settings: ScimSettings, displayName: string): boolean {
  return Object.keys(settings.groupRoles).some((name) => name.toLowerCase() === displayName.toLowerCase());
}

/** The members whose role a group's change may move: none for a group mapped to nothing, before and after. */
function reached(settings: ScimSettings, ...groups: ScimGroup[]): string[] {
  return groups.filter((g) => isMapped(settings, g.displayName)).flatMap((g) => g.members);
}

export function createGroup(w: StoreWriter, settings: ScimSettings, state: GroupState, now: number): ScimGroup {
  const orgId = settings.orgId;
  checkGroup(w, orgId, state, null);
  if (orgGroups(w, orgId).length >= kMaxScimGroups)
    throw scimRefusal('tooMany', `An organisation holds at most ${kMaxScimGroups} SCIM groups.`);
  const group: ScimGroup = { orgId, id: `grp_${randomId(12)}`, ...state, created: now, lastModified: now, version: 1 };
  w.putKeyed(kScimGroupRecords, group);
  applyGroupRoles(w, settings, reached(settings, group), now);
  auditOrg(w, scimActor(orgId), 'scim.group.create', orgId, { [`group:${group.id}`]: { before: null, after: groupAudit(group) } }, now);
  return group;
}

export function updateGroup(w: StoreWriter, settings: ScimSettings, before: ScimGroup, state: GroupState, now: number): ScimGroup {
  checkGroup(w, before.orgId, state, before.id);
  const after: ScimGroup = { ...before, ...state, lastModified: now, version: before.version + 1 };
  w.putKeyed(kScimGroupRecords, after);
  applyGroupRoles(w, settings, reached(settings, before, after), now);
  auditOrg(
    w,
    scimActor(before.orgId),
    'scim.group.update',
    before.orgId,
    { [`group:${before.id}`]: { before: groupAudit(before), after: groupAudit(after) } },
    now,
  );
  return after;
}

export function deleteGroup(w: StoreWriter, settings: ScimSettings, group: ScimGroup, now: number): void {
  w.deleteKeyed(kScimGroupRecords, group);
  applyGroupRoles(w, settings, reached(settings, group), now);
  auditOrg(
    w,
    scimActor(group.orgId),
    'scim.group.delete',
    group.orgId,
    { [`group:${group.id}`]: { before: groupAudit(group), after: null } },
    now,
  );
}

function auditView(user: ScimUser) {
  return { userName: user.userName, externalId: user.externalId, active: user.active };
}

function groupAudit(group: ScimGroup) {
  return { displayName: group.displayName, members: group.members.length };
}

/** A refusal for a command that reached the writer without the organisation's settings: SCIM was disabled meanwhile. */
export function notEnabled(orgId: string): FlagwireError {
  return scimRefusal('unauthorized', `SCIM is not enabled for organisation ${orgId}, or its secret was rotated.`);
}

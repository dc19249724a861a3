// SCIM's writer commands (docs/scim.md): an owner's enable (or rotate), disable and group-role mapping,
// and the identity provider's writes of Users and Groups. Each provisioning write names the secret it
// was sent with: the writer finds the organisation's settings by it again as it applies the change (a
// secret rotated or disabled meanwhile is refused), so a write is authorised when it is applied.
import { personOrOperator, type Principal } from '../actor/audit-actor.js';
import { FlagwireError } from '../errors.js';
import type { Role } from '../model/accounts.js';
import { hashSecret, newSecret } from '../model/ids.js';
import { requireOrg } from '../model/records/lookups.js';
import { auditOrg, requireRole } from '../orgs/org-commands.js';
import type { StoreWriter } from '../store/interfaces.js';
import { scimRefusal } from './errors.js';
import { patchGroup, patchOperations, patchUser } from './patch.js';
import {
  applyGroupRoles,
  checkVersion,
  createGroup,
  createUser,
  deleteGroup,
  deleteUser,
  notEnabled,
  orgGroups,
  updateGroup,
  updateUser,
} from './provisioning.js';
import { kScimGroupRecords, kScimSettingsRecords, kScimUserRecords, type ScimGroup, type ScimSettings } from './records.js';
import { groupResource, groupStateOf, type GroupResource, type UserResource, userResource, userStateOf } from './resources.js';
import { getRole } from '../model/records/member-records.js';

/** A SCIM secret's prefix (src/model/ids.ts newSecret): never taken for an API token, a relay key or a client key. */
export const kScimSecretPrefix = 'fws';

export interface ScimSettingsView {
  orgId: string;
  createdAt: number;
  secretAt: number;
  groupRoles: Record<string, Role>;
}

export function settingsView(s: ScimSettings): ScimSettingsView {
  return { orgId: s.orgId, createdAt: s.createdAt, secretAt: s.secretAt, groupRoles: s.groupRoles };
}

/** Only an Owner (or the operator at the command line) sets SCIM up: its groups may give the Owner role. */
function requireOwner(w: StoreWriter, orgId: string, principal: Principal, doing: string) {
  requireOrg(w, orgId);
  const person = personOrOperator(w, principal, doing);
  if (person !== null && getRole(w, orgId, person.userId) !== 'owner')
    throw new FlagwireError('FORBIDDEN', `Only an Owner of organisation ${orgId} may ${doing}; user ${person.userId} is not one.`);
  return person ?? { id: 'console', name: 'console', environments: [] };
}

/** Enables SCIM for the organisation with a new secret, or rotates it (the old one stops at once); the secret is shown once. */
export function scimEnable(
  w: StoreWriter,
  input: { orgId: string; principal: Principal },
  now: number,
): ScimSettingsView & { secret: string; rotated: boolean } {
  const actor = requireOwner(w, input.orgId, input.principal, 'enable SCIM or rotate its secret');
  const before = w.getKeyed(kScimSettingsRecords, input.orgId);
  const secret = newSecret(kScimSecretPrefix);
  const settings: ScimSettings = {
    orgId: input.orgId,
    secretHash: hashSecret(secret),
    createdAt: before?.createdAt ?? now,
    secretAt: now,
    groupRoles: before?.groupRoles ?? {},
  };
  w.putKeyed(kScimSettingsRecords, settings);
  auditOrg(
    w,
    actor,
    before === undefined ? 'scim.enable' : 'scim.rotate',
    input.orgId,
    { scim: { before: before?.secretAt ?? null, after: now } },
    now,
  );
  return { ...settingsView(settings), secret, rotated: before !== undefined };
}

/** Disables SCIM: its secret stops working; the users and groups it provisioned stay as they are. */
export function scimDisable(
  w: StoreWriter,
  input: { orgId: string; principal: Principal },
  now: number,
): { orgId: string; disabled: boolean } {
  const actor = requireOwner(w, input.orgId, input.principal, 'disable SCIM');
  const settings = w.getKeyed(kScimSettingsRecords, input.orgId);
  if (settings !== undefined) {
    w.deleteKeyed(kScimSettingsRecords, settings);
    auditOrg(w, actor, 'scim.disable', input.orgId, { scim: { before: settings.secretAt, after: null } }, now);
  }
  return { orgId: input.orgId, disabled: settings !== undefined };
}

export const kMaxGroupRoles = 100;

/** Maps a group's displayName to a role (null: unmapped); every provisioned member's role follows at once. */
export function scimGroupRole(
  w: StoreWriter,
  input: { orgId: string; principal: Principal; group: string; role: string | null },
  now: number,
): ScimSettingsView {
  const actor = requireOwner(w, input.orgId, input.principal, 'map a SCIM group to a role');
  const settings = w.getKeyed(kScimSettingsRecords, input.orgId);
  if (settings === undefined)
    throw new FlagwireError('INVALID_REQUEST', `SCIM is not enabled for organisation ${input.orgId}; enable it first.`);
  const group = typeof input.group === 'string' ? input.group.trim() : '';
  if (group === '' || group.length > 256)
    throw new FlagwireError('INVALID_REQUEST', 'group must be a group displayName of 1 to 256 characters.');
  const groupRoles = Object.fromEntries(Object.entries(settings.groupRoles).filter(([name]) => name.toLowerCase() !== group.toLowerCase()));
  if (input.role !== null) groupRoles[group] = requireRole(input.role);
  if (Object.keys(groupRoles).length > kMaxGroupRoles)
    throw new FlagwireError('INVALID_REQUEST', `At most ${kMaxGroupRoles} groups map to roles.`);
  const next: ScimSettings = { ...settings, groupRoles };
  w.putKeyed(kScimSettingsRecords, next);
  // The members of the groups of that name: their role follows the mapping now.
  const named = orgGroups(w, input.orgId).filter((g) => g.displayName.toLowerCase() === group.toLowerCase());
  applyGroupRoles(
    w,
    next,
    named.flatMap((g) => g.members),
    now,
  );
  auditOrg(
    w,
    actor,
    'scim.groupRole',
    input.orgId,
    { [`group ${group}`]: { before: settings.groupRoles[group] ?? null, after: input.role } },
    now,
  );
  return settingsView(next);
}

/** What a provisioning write names: the organisation, the secret's hash, and where its resources live. */
export interface ScimWrite {
  orgId: string;
  secretHash: string;
  /** The API's base URL (meta.location). */
  base: string;
  verb: 'create' | 'replace' | 'patch' | 'delete';
  /** The resource's id (all but create). */
  id?: string;
  body?: unknown;
  /** The If-Match header ('' when absent). */
  ifMatch?: string;
}

function settingsFor(w: StoreWriter, write: ScimWrite): ScimSettings {
  const settings = w.getKeyed(kScimSettingsRecords, write.orgId);
  if (settings === undefined || settings.secretHash !== write.secretHash) throw notEnabled(write.orgId);
  return settings;
}

function userGroups(groups: readonly ScimGroup[], userId: string) {
  return groups.filter((g) => g.members.includes(userId));
}

/** POST, PUT, PATCH or DELETE of a User: its resource as the API shows it then (null once deleted). */
export function scimUserWrite(w: StoreWriter, write: ScimWrite, now: number): UserResource | null {
  const settings = settingsFor(w, write);
  const show = (u: Parameters<typeof userResource>[0]) => userResource(u, userGroups(orgGroups(w, u.orgId), u.id), write.base);
  if (write.verb === 'create') return show(createUser(w, settings, userStateOf(write.body), now));
  const before = w.getKeyed(kScimUserRecords, `${write.orgId}/${write.id}`);
  if (before === undefined) throw scimRefusal('notFound', `No user ${write.id} here.`);
  checkVersion(write.ifMatch ?? '', before.version, `User ${before.id}`);
  if (write.verb === 'delete') {
    deleteUser(w, before, now);
    return null;
  }
  const state = write.verb === 'replace' ? userStateOf(write.body) : patchUser(before, patchOperations(write.body));
  return show(updateUser(w, settings, before, state, now));
}

/** POST, PUT, PATCH or DELETE of a Group: its resource as the API shows it then (null once deleted). */
export function scimGroupWrite(w: StoreWriter, write: ScimWrite, now: number): GroupResource | null {
  const settings = settingsFor(w, write);
  const names = (id: string) => w.getKeyed(kScimUserRecords, `${write.orgId}/${id}`)?.userName ?? id;
  if (write.verb === 'create') return groupResource(createGroup(w, settings, groupStateOf(write.body), now), names, write.base);
  const before = w.getKeyed(kScimGroupRecords, `${write.orgId}/${write.id}`);
  if (before === undefined) throw scimRefusal('notFound', `No group ${write.id} here.`);
  checkVersion(write.ifMatch ?? '', before.version, `Group ${before.id}`);
  if (write.verb === 'delete') {
    deleteGroup(w, settings, before, now);
    return null;
  }
  const state = write.verb === 'replace' ? groupStateOf(write.body) : patchGroup(before, patchOperations(write.body));
  return groupResource(updateGroup(w, settings, before, state, now), names, write.base);
}

// The web console's SCIM settings of an organisation (docs/scim.md), for its Owners: whether SCIM is on,
// enable or rotate its secret (shown once), disable it, map a group's displayName to a role, and see
// what the identity provider provisioned (its latest-changed users and groups, and when it last synced). Each
// change is the command line's own writer command, given the signed-in user; the writer checks the role.
import { orgAccess } from '../console-route/access.js';
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { compileForm, FormText } from '../console-route/forms.js';
import { FlagwireError } from '../errors.js';
import type { Org } from '../model/accounts.js';
import { Type } from '../typebox.js';
import { kScimGroupRecords, kScimSettingsRecords, kScimUserRecords } from './records.js';
import { kScimBasePath } from './resources.js';
import { kScimCommands } from './command-table.js';
import { getRole } from '../model/records/member-records.js';

/** The role is the writer's to check; an empty role unmaps the group. */
const kGroupRoleForm = compileForm(Type.Object({ group: FormText, role: Type.Union([FormText, Type.Null()]) }));

function ownerOnly(call: ApiCall): Org {
  const { org, role } = orgAccess(call.store, call.user, call.params.orgId!);
  if (role !== 'owner') throw new FlagwireError('FORBIDDEN', `Only an Owner of organisation ${org.id} sees and changes its SCIM settings.`);
  return org;
}

/** The most users, and groups, the page lists: the latest changed (an organisation may hold 10,000 users). */
export const kScimShown = 200;

const latestFirst = (a: { lastModified: number }, b: { lastModified: number }) => b.lastModified - a.lastModified;

export function scimView(call: ApiCall) {
  const org = ownerOnly(call);
  const orgId = org.id;
  const settings = call.store.getKeyed(kScimSettingsRecords, orgId);
  const groupRoles = settings?.groupRoles ?? {};
  const mapped = new Map(Object.entries(groupRoles).map(([name, role]) => [name.toLowerCase(), role]));
  const users = call.store.listKeyedBy(kScimUserRecords, 'org', orgId).sort(latestFirst);
  const groups = call.store.listKeyedBy(kScimGroupRecords, 'org', orgId).sort(latestFirst);
  return {
    orgId,
    orgName: org.name,
    enabled: settings !== undefined,
    baseUrl: new URL(kScimBasePath, call.config.baseUrl).href,
    secretAt: settings?.secretAt ?? null,
    groupRoles,
    users: users.slice(0, kScimShown).map((u) => ({
      id: u.id,
      userName: u.userName,
      displayName: u.displayName,
      active: u.active,
      role: getRole(call.store, orgId, u.id) ?? null,
      lastModified: u.lastModified,
    })),
    userCount: users.length,
    groups: groups.slice(0, kScimShown).map((g) => ({
      id: g.id,
      displayName: g.displayName,
      members: g.members.length,
      role: mapped.get(g.displayName.toLowerCase()) ?? null,
      lastModified: g.lastModified,
    })),
    groupCount: groups.length,
    shown: kScimShown,
    // Sorted latest first: the first of each is the identity provider's latest change.
    lastSync: Math.max(users[0]?.lastModified ?? 0, groups[0]?.lastModified ?? 0) || null,
  };
}

export const kScimConsoleRoutes: readonly ApiRoute[] = [
  { method: 'GET', pattern: 'orgs/:orgId/scim', run: scimView },
  {
    // Enable, or rotate: the answer holds the new secret, shown this once.
    method: 'POST',
    pattern: 'orgs/:orgId/scim/secret',
    run: (call) => call.writer.call(kScimCommands.scimEnable, { orgId: ownerOnly(call).id, principal: call.principal }),
  },
  {
    method: 'DELETE',
    pattern: 'orgs/:orgId/scim',
    run: (call) => call.writer.call(kScimCommands.scimDisable, { orgId: ownerOnly(call).id, principal: call.principal }),
  },
  {
    method: 'POST',
    pattern: 'orgs/:orgId/scim/group-roles',
    run(call) {
      const orgId = ownerOnly(call).id;
      const body = kGroupRoleForm.read(call.received);
      return call.writer.call(kScimCommands.scimGroupRole, {
        orgId,
        principal: call.principal,
        group: body.group,
        role: body.role === null || body.role === '' ? null : body.role,
      });
    },
  },
];

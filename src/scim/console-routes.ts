// The web console's SCIM settings of an organisation (docs/scim.md), for its Owners: whether SCIM is on,
// enable or rotate its secret (shown once), disable it, and map a group's displayName to a role. Each
// change is the command line's own writer command, given the signed-in user; the writer checks the role.
import { principalOf } from '../actor/audit-actor.js';
import { orgAccess } from '../console-route/access.js';
import type { ApiCall, ApiRoute } from '../console-route/call.js';
import { compileForm, FormText } from '../console-route/forms.js';
import { FlagwireError } from '../errors.js';
import { Type } from '../typebox.js';
import { kScimSettingsRecords } from './records.js';
import { kScimBasePath } from './resources.js';
import { kScimCommands } from './scim-commands.js';

/** The role is the writer's to check; an empty role unmaps the group. */
const kGroupRoleForm = compileForm(Type.Object({ group: FormText, role: Type.Union([FormText, Type.Null()]) }));

function ownerOnly(call: ApiCall): string {
  const { org, role } = orgAccess(call.store, call.user, call.params.orgId!);
  if (role !== 'owner') throw new FlagwireError('FORBIDDEN', `Only an Owner of organisation ${org.id} sees and changes its SCIM settings.`);
  return org.id;
}

export function scimView(call: ApiCall) {
  const orgId = ownerOnly(call);
  const settings = call.store.getKeyed(kScimSettingsRecords, orgId);
  return {
    orgId,
    enabled: settings !== undefined,
    baseUrl: new URL(kScimBasePath, call.config.baseUrl).href,
    secretAt: settings?.secretAt ?? null,
    groupRoles: settings?.groupRoles ?? {},
  };
}

export const kScimConsoleRoutes: readonly ApiRoute[] = [
  { method: 'GET', pattern: 'orgs/:orgId/scim', run: scimView },
  {
    // Enable, or rotate: the answer holds the new secret, shown this once.
    method: 'POST',
    pattern: 'orgs/:orgId/scim/secret',
    run: (call) => call.writer.call(kScimCommands.scimEnable, { orgId: ownerOnly(call), principal: principalOf(call.user.id) }),
  },
  {
    method: 'DELETE',
    pattern: 'orgs/:orgId/scim',
    run: (call) => call.writer.call(kScimCommands.scimDisable, { orgId: ownerOnly(call), principal: principalOf(call.user.id) }),
  },
  {
    method: 'POST',
    pattern: 'orgs/:orgId/scim/group-roles',
    run(call) {
      const orgId = ownerOnly(call);
      const body = kGroupRoleForm.read(call.received);
      return call.writer.call(kScimCommands.scimGroupRole, {
        orgId,
        principal: principalOf(call.user.id),
        group: body.group,
        role: body.role === null || body.role === '' ? null : body.role,
      });
    },
  },
];

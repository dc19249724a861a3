// The web console's single sign-on settings of an organisation (docs/sso.md), for its Owners: read them,
// change them (the Management API's body and writer command, given the signed-in user; the writer checks
// the role and the lock-out rule), and remove them.
import { orgAccess } from '../console-route/access.js';
import { type ApiCall, type ApiRoute, requireReceived } from '../console-route/call.js';
import { FlagwireError } from '../errors.js';
import { kSsoSettingsRecords } from './records.js';
import { ssoView } from './sso-commands.js';
import { kSsoCommands } from './command-table.js';

function ownerOnly(call: ApiCall): string {
  const { org, role } = orgAccess(call.store, call.user, call.params.orgId!);
  if (role !== 'owner')
    throw new FlagwireError('FORBIDDEN', `Only an Owner of organisation ${org.id} sees and changes its single sign-on settings.`);
  return org.id;
}

export const kSsoConsoleRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    pattern: 'orgs/:orgId/sso',
    run(call) {
      const orgId = ownerOnly(call);
      return ssoView(orgId, call.store.getKeyed(kSsoSettingsRecords, orgId));
    },
  },
  {
    method: 'PATCH',
    pattern: 'orgs/:orgId/sso',
    run: (call) =>
      call.writer.call(kSsoCommands.ssoSet, {
        orgId: ownerOnly(call),
        principal: call.principal,
        received: requireReceived(call),
      }),
  },
  {
    method: 'DELETE',
    pattern: 'orgs/:orgId/sso',
    run: (call) => call.writer.call(kSsoCommands.ssoRemove, { orgId: ownerOnly(call), principal: call.principal }),
  },
];

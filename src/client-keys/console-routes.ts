// The client keys capability's web console routes: the console's client keys page, listing a project's
// keys (never a secret), making one (its secret answered once) and revoking one. Every change is the
// capability's writer command, as the signed-in user, which applies the Management API's rules.
import { clientKeyNotFound, kMaxActiveClientKeys } from './client-key-commands.js';
import { kClientKeyCommands } from './command-table.js';
import { kClientKeyUses } from './client-key.js';
import { getClientKey, listClientKeys } from './records.js';
import { clientKeyView } from './schemas.js';
import { projectAccess } from '../console-route/access.js';
import { type ApiCall, type ApiRoute, requireReceived } from '../console-route/call.js';

export function clientKeysView(call: ApiCall) {
  const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
  return {
    ...access,
    clientKeys: listClientKeys(call.store, access.project.id).map(clientKeyView),
    // The writer's rule (client-key-commands.ts, actingOn): a person makes and revokes keys where they may change flags.
    canManage: access.can.editFlags,
    uses: [...kClientKeyUses],
    maxActive: kMaxActiveClientKeys,
  };
}
export type ClientKeysView = ReturnType<typeof clientKeysView>;

export const kClientKeyConsoleRoutes: readonly ApiRoute[] = [
  {
    method: 'GET',
    pattern: 'projects/:projectId/client-keys',
    run: clientKeysView,
  },
  {
    method: 'POST',
    pattern: 'projects/:projectId/client-keys',
    run(call) {
      const access = projectAccess(call.store, call.user, call.params.projectId!, call.now);
      // The Management API's body ({name, environment, uses}), checked by the writer.
      const input = { principal: call.principal, projectId: access.project.id, received: requireReceived(call) };
      return call.writer.call(kClientKeyCommands.clientKeyCreate, input);
    },
  },
  {
    method: 'POST',
    pattern: 'client-keys/:keyId/revoke',
    run(call) {
      const id = call.params.keyId!;
      const key = getClientKey(call.store, id);
      // Another project's key is not found, as for a token acting outside its project.
      if (key === undefined) throw clientKeyNotFound(id);
      try {
        projectAccess(call.store, call.user, key.projectId, call.now);
      } catch {
        throw clientKeyNotFound(id);
      }
      return call.writer.call(kClientKeyCommands.clientKeyRevoke, { principal: call.principal, keyId: id });
    },
  },
];

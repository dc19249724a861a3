// Single sign-on's Management API routes (docs/api.md, docs/sso.md): the settings of the organisation of
// the token's project, read, changed and removed. Only a token whose creator is an Owner of the
// organisation now may (the writer checks again as it applies a change: sso-commands.ts requireOwner).
import type { ManagementRouteSpec } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import type { AuthContext } from '../model/records/token-access.js';
import { apiErrors, json } from '../routes/openapi-parts.js';
import { tokenPrincipal } from '../routes/route-helpers.js';
import type { StoreReader } from '../store/interfaces.js';
import { kSsoSettingsRecords } from './records.js';
import { SsoRemoved, SsoSettingsPatch, SsoSettingsView } from './schemas.js';
import { ssoView } from './sso-commands.js';
import { kSsoCommands } from './command-table.js';
import { getRole } from '../model/records/member-records.js';

/** The organisation of the token's project, where the token's creator is its Owner. */
function ownersOrg(store: StoreReader, auth: AuthContext): string {
  if (getRole(store, auth.org.id, auth.token.createdBy) !== 'owner')
    throw new FlagwireError(
      'FORBIDDEN',
      `Single sign-on is an Owner's to see and change: this token's creator (${auth.token.createdBy}) is not an Owner of organisation ${auth.org.id}.`,
    );
  return auth.org.id;
}

export const kSsoApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiGetSso: {
    method: 'get',
    pattern: '/api/v1/sso',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'getSso',
      tag: 'Management API',
      summary: "The single sign-on (OpenID Connect) settings of the token's organisation, never the client secret",
      responses: { '200': json(SsoSettingsView, 'The settings'), ...apiErrors([401, 402, 403, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run: (_request, auth, { store }) => {
        const orgId = ownersOrg(store, auth);
        return ssoView(orgId, store.getKeyed(kSsoSettingsRecords, orgId));
      },
    },
  },
  apiPatchSso: {
    method: 'patch',
    pattern: '/api/v1/sso',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'patchSso',
      tag: 'Management API',
      summary: "Configure single sign-on for the token's organisation: the keys sent change, the others stay",
      request: { schema: SsoSettingsPatch, required: true },
      responses: { '200': json(SsoSettingsView, 'The settings now'), ...apiErrors([400, 401, 402, 403, 413, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      async run(_request, auth, received, release, deps) {
        const input = { orgId: auth.org.id, principal: tokenPrincipal(auth), received };
        return { status: 200, value: await deps.writer.call(kSsoCommands.ssoSet, input, release) };
      },
    },
  },
  apiDeleteSso: {
    method: 'del',
    pattern: '/api/v1/sso',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'deleteSso',
      tag: 'Management API',
      summary: "Turn single sign-on off for the token's organisation: its people sign in with passwords again",
      responses: { '200': json(SsoRemoved, 'Removed, or was not on'), ...apiErrors([401, 402, 403, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      async run(_request, auth, _received, release, deps) {
        const input = { orgId: auth.org.id, principal: tokenPrincipal(auth) };
        return { status: 200, value: await deps.writer.call(kSsoCommands.ssoRemove, input, release) };
      },
    },
  },
};

// The client keys capability's Management API routes: a project's client keys made (the secret shown
// once), listed and revoked (docs/api.md: Client keys).
import type { ManagementRouteSpec } from '../capability/capability.js';
import { isEnvironmentAllowed } from '../model/environments.js';
import { apiErrors, json, pathParam } from '../routes/openapi-parts.js';
import { projectBodyWrite, tokenPrincipal } from '../routes/route-helpers.js';
import { kClientKeyCommands } from './command-table.js';
import { listClientKeys } from './records.js';
import { ClientKeyCreate, ClientKeyCreated, ClientKeyList, ClientKeyRevoked, clientKeyView } from './schemas.js';

export const kClientKeyApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiCreateClientKey: {
    method: 'post',
    pattern: '/api/v1/client-keys',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'createClientKey',
      tag: 'Management API',
      summary:
        "Make a client key of the token's project: a public key for browsers and apps that may only do what its uses name (events: send exposures and outcomes; frontend: Unleash's front-end API)",
      request: { schema: ClientKeyCreate, required: true },
      responses: {
        '201': json(ClientKeyCreated, 'Made; its secret is shown only now'),
        ...apiErrors([400, 401, 402, 403, 413, 429, 500, 503]),
      },
    },
    handler: projectBodyWrite(kClientKeyCommands.clientKeyCreate, 201),
  },
  apiListClientKeys: {
    method: 'get',
    pattern: '/api/v1/client-keys',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'listClientKeys',
      tag: 'Management API',
      summary: "The token's project's client keys (never their secrets), revoked ones too, oldest first",
      responses: { '200': json(ClientKeyList, 'The client keys'), ...apiErrors([401, 402, 429, 500]) },
    },
    handler: {
      kind: 'read',
      // A token limited to some environments sees the keys of those (and a single project's, which have none).
      run: (_request, auth, { store }) => ({
        clientKeys: listClientKeys(store, auth.project.id)
          .filter((key) => key.environment === null || isEnvironmentAllowed(auth.token.environments, key.environment))
          .map(clientKeyView),
      }),
    },
  },
  apiRevokeClientKey: {
    method: 'post',
    pattern: '/api/v1/client-keys/:key_id/revoke',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'revokeClientKey',
      tag: 'Management API',
      summary: "Revoke a client key: refused from then on (a POST: the spec's CORS allows no DELETE); revoking it again answers the same",
      parameters: [pathParam('key_id', 'Client key id (ck_…)')],
      responses: { '200': json(ClientKeyRevoked, 'Revoked'), ...apiErrors([401, 402, 403, 404, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      async run(request, auth, _received, release, deps) {
        const input = { principal: tokenPrincipal(auth), keyId: request.params.key_id! };
        return { status: 200, value: await deps.writer.call(kClientKeyCommands.clientKeyRevoke, input, release) };
      },
    },
  },
};

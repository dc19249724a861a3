// The tokens capability's Management API route: the calling token, described.
import type { ManagementRouteSpec } from '../capability/capability.js';
import { TokenDescription, tokenDescription } from './representation.js';
import { apiErrors, json } from '../routes/openapi-parts.js';

export const kTokenApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiToken: {
    method: 'get',
    pattern: '/api/v1/token',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'getToken',
      tag: 'Management API',
      summary: 'Describe the calling token',
      responses: { '200': json(TokenDescription, 'The token'), ...apiErrors([400, 401, 402, 429, 500]) },
    },
    handler: { kind: 'read', run: (_request, auth) => tokenDescription(auth.token, auth.project) },
  },
};

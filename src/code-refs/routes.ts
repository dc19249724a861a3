// The code references capability's Management API routes (docs/api.md: Code references): a scan pushed
// by CI with a write token, a flag's references, and the keys code names that are no flags.
import type { ManagementRouteSpec } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import { apiErrors, json, queryParam } from '../routes/openapi-parts.js';
import { projectBodyWrite } from '../routes/route-helpers.js';
import { kCodeRefCommands } from './command-table.js';
import { codeRefsOfFlag, missingFlags } from './code-ref-reads.js';
import { CodeRefsMissing, CodeRefsOfFlag, CodeRefsPush, CodeRefsPushed } from './schemas.js';

export const kCodeRefApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiPushCodeRefs: {
    method: 'post',
    pattern: '/api/v1/code-refs',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'pushCodeRefs',
      tag: 'Management API',
      summary:
        "Store a scan's code references (`flagwire refs scan --push`) for a repository and branch of the token's project, replacing that branch's last scan",
      request: { schema: CodeRefsPush, required: true },
      responses: { '200': json(CodeRefsPushed, 'Stored'), ...apiErrors([400, 401, 402, 403, 413, 429, 500, 503]) },
    },
    handler: projectBodyWrite(kCodeRefCommands.codeRefsPush, 200),
  },
  apiCodeRefsOfFlag: {
    method: 'get',
    pattern: '/api/v1/code-refs',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'codeRefsOfFlag',
      tag: 'Management API',
      summary: "A flag key's references in code, on each pushed branch whose last scan names it",
      parameters: [queryParam('flag', 'The flag key (required)')],
      responses: { '200': json(CodeRefsOfFlag, "The key's references"), ...apiErrors([400, 401, 402, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run: (request, auth, { store }) => {
        const flag = request.query.get('flag');
        if (flag === null || flag === '')
          throw new FlagwireError('INVALID_REQUEST', 'flag is required: the key whose references to list (?flag=KEY)');
        return codeRefsOfFlag(store, auth.project.id, flag);
      },
    },
  },
  apiMissingFlags: {
    method: 'get',
    pattern: '/api/v1/code-refs/missing',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'codeRefsMissingFlags',
      tag: 'Management API',
      summary: "Keys the project's pushed scans name that are no flag of the project, and how many references have a computed key",
      responses: { '200': json(CodeRefsMissing, 'The keys'), ...apiErrors([401, 402, 429, 500]) },
    },
    handler: { kind: 'read', run: (_request, auth, { store }) => missingFlags(store, auth.project.id) },
  },
};

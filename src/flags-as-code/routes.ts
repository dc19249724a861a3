// The flags-as-code capability's Management API routes: a project's flags as a file (export), and a file
// planned and applied (docs/flags-as-code.md).
import { JsonText } from '../routes/handler.js';
import { movableBuffers } from '../model/request-body.js';
import { tokenPrincipal } from '../routes/route-helpers.js';
import type { ManagementRouteSpec } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import { requireEnvironmentAllowed } from '../model/environments.js';
import { apiErrors, changeRequested, json, kPruneParam, queryParam, ref } from '../routes/openapi-parts.js';
import { kPlanJob } from './apply-commands.js';
import { kFlagsAsCodeCommands } from './command-table.js';
import { type ExportFormat, exportProject, kExportFormats } from './export.js';
import { FlagFile, fileText } from './flag-file.js';
import type { ProjectRevision } from './plan.js';
import { PlanResult } from './schemas.js';

/** A true/false query parameter (absent: false); anything else is a 400 naming it. */
function booleanParam(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null || value === 'false') return false;
  if (value === 'true') return true;
  throw new FlagwireError('INVALID_REQUEST', `"${name}" must be true or false, not "${value}".`);
}

/** apply's `ifRevision`: a project revision from a plan (its `revision`), or null when absent. */
function projectRevisionParam(query: URLSearchParams): ProjectRevision | null {
  const value = query.get('ifRevision');
  if (value === null) return null;
  if (!/^\d{1,15}$/.test(value))
    throw new FlagwireError('INVALID_REQUEST', `"ifRevision" must be a revision number (from a plan), not "${value}".`);
  return Number(value);
}

/** apply's `ifPlan`: the digest of a plan (a plan's `digest`), or null when absent. */
function planDigestParam(query: URLSearchParams): string | null {
  const value = query.get('ifPlan');
  if (value === null) return null;
  if (!/^[0-9a-f]{64}$/.test(value))
    throw new FlagwireError('INVALID_REQUEST', `"ifPlan" must be a plan's digest (64 hexadecimal digits, from a plan), not "${value}".`);
  return value;
}

export const kFlagsAsCodeApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiExport: {
    method: 'get',
    pattern: '/api/v1/export',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'exportFlags',
      tag: 'Management API',
      summary: "The token's project as a flag file (Flagwire's format or flagd's); the same state gives the same bytes",
      parameters: [
        queryParam(
          'format',
          'flagwire (default): a Flagwire flag file (FlagFile), which plan and apply read; flagd: a flagd flag-definition file',
        ),
        queryParam('env', "flagd's format of a multi-environment project: the environment to export (flagd has none)"),
      ],
      responses: {
        '200': {
          description:
            'The file (two-space JSON, a final newline). A group flag-wide cohort list and audience definitions are left out: the API neither reads nor sets them',
          content: { 'application/json': { schema: ref(FlagFile) } },
        },
        ...apiErrors([400, 401, 402, 429, 500]),
      },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store, clock, flagSetReads }) {
        const format = request.query.get('format') ?? 'flagwire';
        if (!(kExportFormats as readonly string[]).includes(format))
          throw new FlagwireError('INVALID_REQUEST', `"format" must be flagwire or flagd, not "${format}".`);
        // A read that names an environment is limited as every such read is (spec: GET /api/v1/flags).
        const env = request.query.get('env');
        requireEnvironmentAllowed(auth.token.environments, env);
        const now = clock.now();
        const file = fileText(exportProject(store, auth.project, { format: format as ExportFormat, env }, 'api', now));
        // A flagd file may be served by a stock flagd that reports nothing: a read of the set it holds.
        if (format === 'flagd') flagSetReads.read(auth.project.id, env, now);
        return new JsonText(file);
      },
    },
  },
  apiPlan: {
    method: 'post',
    pattern: '/api/v1/plan',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'planFlags',
      tag: 'Management API',
      summary: 'What applying a flag file would change, field by field (a read token may plan)',
      parameters: [kPruneParam],
      request: { schema: FlagFile, required: true },
      responses: {
        '200': json(PlanResult, 'The plan (changed: false when the project matches the file)'),
        ...apiErrors([400, 401, 402, 413, 429, 500]),
      },
    },
    handler: {
      kind: 'write',
      permission: 'read',
      async run(request, auth, received, release, { sideThread }) {
        const input = { projectId: auth.project.id, received, prune: booleanParam(request.query, 'prune') };
        // The body is moved, not copied: the request hands it over whole (ReceivedBody).
        const { value, storeRevision } = await sideThread.run(kPlanJob, input, { move: movableBuffers(received), release });
        return { status: 200, value, storeRevision };
      },
    },
  },
  apiApply: {
    method: 'post',
    pattern: '/api/v1/apply',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'applyFlags',
      tag: 'Management API',
      summary: 'Make the project what a flag file says: all or nothing, in one transaction, each change audited as the token',
      parameters: [
        kPruneParam,
        queryParam('ifRevision', 'Refuse (409, nothing applied) unless the project is still at this revision, the one the plan showed'),
        queryParam(
          'ifPlan',
          "Refuse (409, nothing applied) unless the changes to make are those of the plan with this digest (the plan's `digest`): the plan that was reviewed",
        ),
      ],
      request: { schema: FlagFile, required: true },
      responses: {
        '200': json(PlanResult, 'Applied (changed: false when there was nothing to change); revision is the one it left'),
        ...changeRequested(),
        ...apiErrors([400, 401, 402, 403, 409, 413, 429, 500, 503]),
      },
    },
    handler: {
      kind: 'write',
      async run(request, auth, received, release, deps) {
        const prune = booleanParam(request.query, 'prune');
        const ifProjectRevision = projectRevisionParam(request.query);
        const ifPlan = planDigestParam(request.query);
        const input = { principal: tokenPrincipal(auth), projectId: auth.project.id, received, prune, ifProjectRevision, ifPlan };
        const { value, storeRevision } = await deps.writer.callAt(kFlagsAsCodeCommands.flagsApply, input, release);
        return { status: 200, value, storeRevision };
      },
    },
  },
};

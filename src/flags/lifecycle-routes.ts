// The Management API's routes of a flag's lifecycle (issue 99; docs/api.md: Flag lifecycle): the stage of
// every flag of the project, one flag's, its type, owner and lifetime changed, and archive and restore.
import { tokenPrincipal } from '../routes/route-helpers.js';
import type { ManagementRouteSpec } from '../capability/capability.js';
import { apiErrors, changeRequested, json, pathParam, queryParam } from '../routes/openapi-parts.js';
import { kFlagCommands } from './command-table.js';
import { getUsage } from '../flag-records/flag-store.js';
import { requireProjectFlag } from './flag-lookups.js';
import { lifecycleView, projectLifecycle } from './lifecycle-facts.js';
import { FlagLifecycle, LifecycleList, LifecyclePatch } from './lifecycle-shapes.js';
import { representFlag } from './representation.js';
import { FlagRepresentation } from './representation-shapes.js';
import { FlagwireError } from '../errors.js';
import { stageParam } from './lifecycle.js';
import { parseJsonObject } from '../model/request-body.js';

const kFlagParam = pathParam('flag_id', 'Flag id');

/** POST .../archive and .../restore: one command each, answering the flag (environments form). */
function archiveRoute(command: 'flagArchive' | 'flagRestore', summary: string): ManagementRouteSpec {
  const name = command === 'flagArchive' ? 'archive' : 'restore';
  return {
    method: 'post',
    pattern: `/api/v1/flags/:flag_id/${name}`,
    via: 'management',
    auth: 'token',
    docs: {
      operationId: command,
      tag: 'Management API',
      summary,
      parameters: [kFlagParam],
      responses: {
        '200': json(FlagRepresentation, 'The flag (a group flag in environments form); unchanged when it already was'),
        ...changeRequested(),
        ...apiErrors([401, 402, 403, 404, 412, 429, 500, 503]),
      },
    },
    handler: {
      kind: 'write',
      async run(request, auth, _received, release, deps) {
        const input = { flagId: request.flagId!, principal: tokenPrincipal(auth), ifMatch: request.ifMatch };
        const { value: flag, storeRevision } = await deps.writer.callAt(kFlagCommands[command], input, release);
        return { status: 200, value: representFlag(flag, auth.project, null, getUsage(deps.store, flag.id)), storeRevision };
      },
    },
  };
}

export const kLifecycleApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiListLifecycle: {
    method: 'get',
    pattern: '/api/v1/lifecycle',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'listLifecycle',
      tag: 'Management API',
      summary: "Every flag of the token's project with its lifecycle, archived flags included",
      parameters: [queryParam('stage', 'Only flags at this stage'), queryParam('owner', 'Only flags of this owner')],
      responses: { '200': json(LifecycleList, 'The flags'), ...apiErrors([400, 401, 402, 403, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store, clock }) {
        const only = { stage: stageParam(request.query.get('stage')), owner: request.query.get('owner') };
        return { flags: projectLifecycle(store, auth.project, clock.now(), only) };
      },
    },
  },
  apiGetLifecycle: {
    method: 'get',
    pattern: '/api/v1/flags/:flag_id/lifecycle',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'getLifecycle',
      tag: 'Management API',
      summary: "A flag's lifecycle: type, owner, lifetime and stage",
      parameters: [kFlagParam],
      responses: { '200': json(FlagLifecycle, 'The lifecycle'), ...apiErrors([401, 402, 403, 404, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store, clock }) {
        const flag = requireProjectFlag(store, auth.project.id, request.flagId!);
        return lifecycleView(flag, auth.project, getUsage(store, flag.id), clock.now());
      },
    },
  },
  apiPatchLifecycle: {
    method: 'patch',
    pattern: '/api/v1/flags/:flag_id/lifecycle',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'patchLifecycle',
      tag: 'Management API',
      summary: "Change a flag's type, owner or lifetime (merge patch; null returns a field to its default)",
      parameters: [kFlagParam],
      request: { schema: LifecyclePatch, required: true },
      responses: {
        '200': json(FlagLifecycle, 'The lifecycle as changed'),
        ...changeRequested(),
        ...apiErrors([400, 401, 402, 403, 404, 412, 413, 429, 500, 503]),
      },
    },
    handler: {
      kind: 'write',
      async run(request, auth, received, release, deps) {
        const parsed = parseJsonObject(received, 'patch');
        if (!parsed.ok) throw new FlagwireError('INVALID_REQUEST', parsed.problem);
        const input = { flagId: request.flagId!, principal: tokenPrincipal(auth), ifMatch: request.ifMatch, patch: parsed.value };
        const { value: flag, storeRevision } = await deps.writer.callAt(kFlagCommands.flagLifecycle, input, release);
        return { status: 200, value: lifecycleView(flag, auth.project, getUsage(deps.store, flag.id), deps.clock.now()), storeRevision };
      },
    },
  },
  apiArchiveFlag: archiveRoute(
    'flagArchive',
    'Archive a flag: every evaluation surface answers as for no flag; its name, history and audit are kept',
  ),
  apiRestoreFlag: archiveRoute('flagRestore', 'Restore an archived flag: it serves again as it was archived'),
};

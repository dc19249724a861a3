// The flags capability's Management API routes: a project's flags listed, created, read and patched,
// and their lifecycle (issue 99; docs/api.md: Flag lifecycle): the stage of every flag of the project,
// one flag's, its type, owner and lifetime changed, and archive and restore.
import { tokenPrincipal } from '../routes/route-helpers.js';
import { precheckFlagChange, requireProjectFlag } from './flag-lookups.js';
import type { ManagementRouteSpec } from '../capability/capability.js';
import { requireEnvironmentAllowed, resolveEnvParam, type EnvRoute } from '../model/environments.js';
import { flagList, patchResult, representFlag } from './representation.js';
import { FlagList, FlagRepresentation, PatchResult } from './representation-shapes.js';
import { FlagCreate, FlagPatch } from '../model/schemas.js';
import type { AuthContext } from '../model/records/token-access.js';
import { apiErrors, changeRequested, json, kEnvParam, pathParam, queryParam } from '../routes/openapi-parts.js';
import { kFlagCommands } from './command-table.js';
import { flagdServing } from './flagd-serving.js';
import { FlagdServingAnswer } from './flagd-serving-shape.js';
import { findFlagByName, getUsage, listFlags } from './records/flag-store.js';
import { flagEtag } from './flag-version.js';
import { JsonText } from '../routes/handler.js';
import type { Flag } from '../model/flags.js';
import { flagLifecycle, projectLifecycle } from './lifecycle-facts.js';
import { FlagLifecycle, LifecycleList, LifecyclePatch } from './lifecycle-shapes.js';
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
        return flagLifecycle(store, flag, auth.project, clock.now());
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
        return { status: 200, value: flagLifecycle(deps.store, flag, auth.project, deps.clock.now()), storeRevision };
      },
    },
  },
  apiArchiveFlag: archiveRoute(
    'flagArchive',
    'Archive a flag: every evaluation surface answers as for no flag; its name, history and audit are kept',
  ),
  apiRestoreFlag: archiveRoute('flagRestore', 'Restore an archived flag: it serves again as it was archived'),
};

/** A flag's answer with its ETag, which names the stored flag's version (flag-version.ts), not these bytes. */
function withEtag(value: unknown, flag: Flag): JsonText {
  return new JsonText(JSON.stringify(value), [['ETag', flagEtag(flag)]]);
}

const kFlagEtag = {
  ETag: {
    schema: { type: 'string' },
    description:
      "Names the flag's version: the whole stored flag, every environment's state with it (not its usage counts). Send it as If-Match to change the flag only if it is unchanged",
  },
};

const kIfMatch = {
  name: 'If-Match',
  in: 'header',
  schema: { type: 'string' },
  description:
    'The ETag a GET of the flag answered: the change is refused (412, nothing applied) if the flag has changed since. Absent: no precondition',
};

/** Checks `env` of a read against the project and the token; returns the environment to read. */
function checkEnv(auth: AuthContext, env: string | null, route: EnvRoute): string | null {
  const resolved = resolveEnvParam(auth.project, env, false, route);
  requireEnvironmentAllowed(auth.token.environments, resolved);
  return resolved;
}

export const kFlagApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiListFlags: {
    method: 'get',
    pattern: '/api/v1/flags',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'listKeyedBy',
      tag: 'Management API',
      summary: "Every flag of the token's project",
      parameters: [kEnvParam, queryParam('name', 'Only the flag with this name')],
      responses: {
        '200': json(FlagList, 'The flags'),
        ...apiErrors(
          [400, 401, 402, 403, 429, 500],
          [
            'INVALID_REQUEST',
            'MISSING_TOKEN',
            'MALFORMED_TOKEN',
            'UNKNOWN_TOKEN',
            'TOKEN_REVOKED',
            'TOKEN_EXPIRED',
            'PLAN_REQUIRED',
            'ENVIRONMENT_NOT_PERMITTED',
            'TOO_MANY_AUTH_FAILURES',
            'INTERNAL',
          ],
        ),
      },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store }) {
        // An environment-restricted token still lists every flag; naming an environment is checked.
        const resolved = checkEnv(auth, request.query.get('env'), 'list');
        const name = request.query.get('name');
        // `?name=` finds one flag by the index of names (unique in a project), not by reading every flag.
        const named = name === null ? undefined : findFlagByName(store, auth.project.id, name);
        // An archived flag keeps its name but is listed by GET /api/v1/lifecycle only.
        const listed = named === undefined || named.archivedAt !== undefined ? [] : [named];
        const flags = name === null ? listFlags(store, auth.project.id) : listed;
        return flagList(flags, auth.project, resolved, (id) => getUsage(store, id));
      },
    },
  },
  apiCreateFlag: {
    method: 'post',
    pattern: '/api/v1/flags',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'createFlag',
      tag: 'Management API',
      summary: 'Create a flag',
      request: { schema: FlagCreate, required: true },
      responses: {
        '201': json(FlagRepresentation, 'Created (a group flag in environments form)'),
        ...changeRequested(),
        ...apiErrors([400, 401, 402, 403, 413, 429, 500, 503]),
      },
    },
    handler: {
      kind: 'write',
      async run(_request, auth, received, release, deps) {
        const { value: flag, storeRevision } = await deps.writer.callAt(
          kFlagCommands.flagCreate,
          { projectId: auth.project.id, principal: tokenPrincipal(auth), received },
          release,
        );
        return { status: 201, value: representFlag(flag, auth.project, null, getUsage(deps.store, flag.id)), storeRevision };
      },
    },
  },
  apiGetFlag: {
    method: 'get',
    pattern: '/api/v1/flags/:flag_id',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'getKeyed',
      tag: 'Management API',
      summary: 'One flag',
      parameters: [pathParam('flag_id', 'Flag id'), kEnvParam],
      responses: { '200': json(FlagRepresentation, 'The flag', kFlagEtag), ...apiErrors([400, 401, 402, 403, 404, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store }) {
        const flag = requireProjectFlag(store, auth.project.id, request.flagId!);
        const value = representFlag(flag, auth.project, checkEnv(auth, request.query.get('env'), 'flag'), getUsage(store, flag.id));
        return withEtag(value, flag);
      },
    },
  },
  apiGetFlagFlagd: {
    method: 'get',
    pattern: '/api/v1/flags/:flag_id/flagd',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'getFlagFlagd',
      tag: 'Management API',
      summary: "Whether flagd's flag sets serve the flag, per environment, and why not (docs/design.md §2c)",
      parameters: [pathParam('flag_id', 'Flag id')],
      responses: { '200': json(FlagdServingAnswer, 'The flag in each flag set'), ...apiErrors([401, 402, 403, 404, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store, clock }) {
        const flag = requireProjectFlag(store, auth.project.id, request.flagId!);
        return { id: flag.id, name: flag.name, flagd: flagdServing(store, flag, auth.project, auth.org, clock.now()) };
      },
    },
  },
  apiPatchFlag: {
    method: 'patch',
    pattern: '/api/v1/flags/:flag_id',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'patchFlag',
      tag: 'Management API',
      summary: "Change a flag's state (merge patch)",
      parameters: [pathParam('flag_id', 'Flag id'), kEnvParam, kIfMatch],
      request: { schema: FlagPatch, required: true },
      responses: {
        '200': json(PatchResult, 'Applied (or nothing to change)', kFlagEtag),
        ...changeRequested(),
        ...apiErrors([400, 401, 402, 403, 404, 412, 413, 429, 500, 503]),
      },
    },
    handler: {
      kind: 'write',
      precheck: precheckFlagChange,
      async run(request, auth, received, release, deps) {
        const input = {
          flagId: request.flagId!,
          env: request.query.get('env'),
          principal: tokenPrincipal(auth),
          ifMatch: request.ifMatch,
          received,
        };
        const { value: result, storeRevision } = await deps.writer.callAt(kFlagCommands.flagPatch, input, release);
        const value = patchResult(result.changed, result.flag, input.env, getUsage(deps.store, result.flag.id));
        return { status: 200, value: withEtag(value, result.flag), storeRevision };
      },
    },
  },
  ...kLifecycleApiRoutes,
};

// The OpenFeature CLI's manifest API (open-feature/cli api/v0/sync.yaml): a project's flags as the CLI's
// `pull` reads them, and its `push` creating, updating and deleting them. Management API routes outside
// /api/v1: the same pipeline, tokens and limits, their refusals in the CLI's ErrorResponse (manifest-errors.ts);
// each write is a writer command that runs the flags' own rules, held as a change request where the
// environment is guarded (202, as the Management API answers). docs/openfeature-cli.md says what the
// manifest cannot say of a flag.
import type { ManagementRouteSpec } from '../capability/capability.js';
import { listFlags } from '../flags/records/flag-store.js';
import { isEnvironmentAllowed, requireEnvironmentAllowed, resolveEnvParam } from '../model/environments.js';
import type { AuthContext } from '../model/records/token-access.js';
import { type ApiRequest, JsonText, type WriteHandler } from '../routes/handler.js';
import type { ReceivedBody } from '../model/request-body.js';
import type { WriterCommand } from '../writer/command.js';
import { changeRequested, json, pathParam, queryParam } from '../routes/openapi-parts.js';
import { tokenPrincipal } from '../routes/route-helpers.js';
import { kManifestCommands } from './command-table.js';
import { manifestErrorBody, manifestErrors } from './manifest-errors.js';
import { manifestFlag } from './manifest-flag.js';
import { ManifestArchived, ManifestEnvelope, ManifestFlagCreate, ManifestFlagResponse, ManifestFlagUpdate } from './schemas.js';

const kCapabilitiesHeader = 'X-Manifest-Capabilities';
const kCapabilitiesDoc = {
  [kCapabilitiesHeader]: {
    schema: { type: 'string' },
    description: 'What the token may do: read (a read token) or read,write,delete (a write token)',
  },
};

/** The answer with the token's capabilities, which the API's document has every answer carry. */
function withCapabilities(auth: AuthContext, value: unknown): JsonText {
  const can = auth.token.permission === 'write' ? 'read,write,delete' : 'read';
  return new JsonText(JSON.stringify(value), [[kCapabilitiesHeader, can]]);
}

/** Who asks, and in which project: every write's. */
function asker(auth: AuthContext) {
  return { principal: tokenPrincipal(auth), projectId: auth.project.id };
}

/**
 * A write that hands `command` the input `inputOf` reads off the request (the body's reservation freed
 * when the writer holds it no more) and answers `status` with its value and the token's capabilities.
 */
function manifestWrite<I>(
  command: WriterCommand<I, unknown>,
  status: number,
  inputOf: (request: ApiRequest, auth: AuthContext, received: ReceivedBody) => I,
): WriteHandler {
  return {
    kind: 'write',
    async run(request, auth, received, release, deps) {
      const { value, storeRevision } = await deps.writer.callAt(command, inputOf(request, auth, received), release);
      return { status, value: withCapabilities(auth, value), storeRevision };
    },
  };
}

const kKeyParam = pathParam('key', "The flag's key: its name in the token's project");
const kWriteErrors = manifestErrors([400, 401, 402, 403, 404, 413, 429, 500, 503]);

export const kManifestRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  manifestGet: {
    method: 'get',
    pattern: '/openfeature/v0/manifest',
    via: 'management',
    auth: 'token',
    errorBody: manifestErrorBody,
    docs: {
      operationId: 'getOpenFeatureManifest',
      tag: 'Management API',
      summary: "The token's project's flags as the OpenFeature CLI's manifest (docs/openfeature-cli.md)",
      parameters: [
        queryParam(
          'env',
          "The environment whose default values to read (multi-environment projects; absent: each flag's first environment with variants)",
        ),
      ],
      responses: {
        '200': json(ManifestEnvelope, 'The manifest', kCapabilitiesDoc),
        ...manifestErrors([400, 401, 402, 403, 429, 500]),
        // A read's 503, which the document would otherwise add in the envelope (src/openapi/document.ts).
        ...manifestErrors([503], ['REVISION_NOT_REACHED', 'SERVER_BUSY']),
      },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store }) {
        const env = resolveEnvParam(auth.project, request.query.get('env'), false, 'list');
        requireEnvironmentAllowed(auth.token.environments, env);
        // A token limited to some environments reads its own alone.
        const read = env !== null ? [env] : auth.project.environments.filter((e) => isEnvironmentAllowed(auth.token.environments, e));
        const flags = listFlags(store, auth.project.id)
          .map((flag) => manifestFlag(flag, read))
          .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
        return withCapabilities(auth, { flags });
      },
    },
  },
  manifestCreate: {
    method: 'post',
    pattern: '/openfeature/v0/manifest/flags',
    via: 'management',
    auth: 'token',
    errorBody: manifestErrorBody,
    docs: {
      operationId: 'createOpenFeatureManifestFlag',
      tag: 'Management API',
      summary: 'Create a flag from its manifest entry (a write token)',
      request: { schema: ManifestFlagCreate, required: true },
      responses: { '201': json(ManifestFlagResponse, 'Created', kCapabilitiesDoc), ...changeRequested(), ...kWriteErrors },
    },
    handler: manifestWrite(kManifestCommands.manifestFlagCreate, 201, (_request, auth, received) => ({ ...asker(auth), received })),
  },
  manifestUpdate: {
    method: 'put',
    pattern: '/openfeature/v0/manifest/flags/:key',
    via: 'management',
    auth: 'token',
    errorBody: manifestErrorBody,
    docs: {
      operationId: 'updateOpenFeatureManifestFlag',
      tag: 'Management API',
      summary: "Set a flag's default value and description from its manifest entry (a write token)",
      parameters: [kKeyParam],
      request: { schema: ManifestFlagUpdate, required: true },
      responses: {
        '200': json(ManifestFlagResponse, 'Updated (or nothing to change)', kCapabilitiesDoc),
        ...changeRequested(),
        ...kWriteErrors,
      },
    },
    handler: manifestWrite(kManifestCommands.manifestFlagUpdate, 200, (request, auth, received) => ({
      ...asker(auth),
      key: request.params.key!,
      received,
    })),
  },
  manifestDelete: {
    method: 'del',
    pattern: '/openfeature/v0/manifest/flags/:key',
    via: 'management',
    auth: 'token',
    errorBody: manifestErrorBody,
    docs: {
      operationId: 'deleteOpenFeatureManifestFlag',
      tag: 'Management API',
      summary: 'Delete a flag (a write token; Flagwire keeps no archive)',
      parameters: [kKeyParam],
      responses: {
        '200': json(ManifestArchived, 'Deleted', kCapabilitiesDoc),
        ...changeRequested(),
        ...manifestErrors([401, 402, 403, 404, 429, 500, 503]),
      },
    },
    handler: manifestWrite(kManifestCommands.manifestFlagDelete, 200, (request, auth) => ({ ...asker(auth), key: request.params.key! })),
  },
};

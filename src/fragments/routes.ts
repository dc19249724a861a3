// The fragments capability's Management API routes: the token's project's shared fragments listed,
// made, changed and deleted (docs/api.md: Shared fragments). Another project's fragment is not found.
import type { ManagementRouteSpec } from '../capability/capability.js';
import { apiErrors, json, pathParam } from '../routes/openapi-parts.js';
import { tokenPrincipal } from '../routes/route-helpers.js';
import { kFragmentCommands } from './command-table.js';
import { fragmentJson, fragmentView } from './fragment-commands.js';
import { JsonText } from '../routes/handler.js';
import { putPrepared } from './fragment-prepare.js';
import { listFragments } from '../flags/records/fragment-records.js';
import { FragmentBody, FragmentCreate, FragmentDeleted, FragmentList, FragmentUpdate } from './schemas.js';

const kNameParam = pathParam('name', 'The fragment\'s name, as {"$ref": NAME} names it');

export const kFragmentApiRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiListFragments: {
    method: 'get',
    pattern: '/api/v1/fragments',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'listFragments',
      tag: 'Management API',
      summary: "The token's project's shared fragments (flagd's $evaluators), by name",
      responses: { '200': json(FragmentList, 'The fragments'), ...apiErrors([401, 402, 429, 500]) },
    },
    handler: {
      kind: 'read',
      run: (_request, auth, { store }) => ({ fragments: listFragments(store, auth.project.id).map(fragmentView) }),
    },
  },
  apiCreateFragment: {
    method: 'post',
    pattern: '/api/v1/fragments',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'createFragment',
      tag: 'Management API',
      summary: 'Make a shared fragment of the token\'s project: a named rule that flag rules use as {"$ref": NAME}',
      request: { schema: FragmentCreate, required: true },
      responses: { '201': json(FragmentBody, 'Made'), ...apiErrors([400, 401, 402, 403, 409, 413, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      async run(_request, auth, received, release, deps) {
        // Prepared on the side thread, so that the writer does no work that grows with the rule (fragment-prepare.ts);
        // answered with the rule's stored text as it is (fragmentJson), so that the front end does none either.
        const input = { principal: tokenPrincipal(auth), projectId: auth.project.id };
        const fragment = await putPrepared(deps, kFragmentCommands.fragmentCreate, input, received, release);
        return { status: 201, value: new JsonText(fragmentJson(fragment)) };
      },
    },
  },
  apiUpdateFragment: {
    method: 'patch',
    pattern: '/api/v1/fragments/:name',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'updateFragment',
      tag: 'Management API',
      summary: "Change a shared fragment's rule: every flag that uses it answers by the new rule (checked with each of them first)",
      parameters: [kNameParam],
      request: { schema: FragmentUpdate, required: true },
      responses: { '200': json(FragmentBody, 'Changed (or already so)'), ...apiErrors([400, 401, 402, 403, 404, 409, 413, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      async run(request, auth, received, release, deps) {
        // As the making's: prepared on the side thread (fragment-prepare.ts).
        const input = { principal: tokenPrincipal(auth), projectId: auth.project.id, name: request.params.name! };
        const fragment = await putPrepared(deps, kFragmentCommands.fragmentUpdate, input, received, release);
        return { status: 200, value: new JsonText(fragmentJson(fragment)) };
      },
    },
  },
  apiDeleteFragment: {
    method: 'post',
    pattern: '/api/v1/fragments/:name/delete',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'deleteFragment',
      tag: 'Management API',
      summary: "Delete a shared fragment no flag uses (a POST: the spec's CORS allows no DELETE)",
      parameters: [kNameParam],
      responses: { '200': json(FragmentDeleted, 'Deleted'), ...apiErrors([400, 401, 402, 403, 404, 429, 500, 503]) },
    },
    handler: {
      kind: 'write',
      async run(request, auth, _received, release, deps) {
        const input = { principal: tokenPrincipal(auth), projectId: auth.project.id, name: request.params.name! };
        return { status: 200, value: await deps.writer.call(kFragmentCommands.fragmentDelete, input, release) };
      },
    },
  },
};

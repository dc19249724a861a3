// GET /v1/snapshots/{project_id}[?env=NAME]: the native snapshot of one project environment (shape.ts),
// for the Flagwire OpenFeature provider (src/provider). It shows rules and cohort lists (often user ids),
// so unlike evaluation answers it needs a read token of the project, its environment limit honoured: it
// is a Management API route outside /api/v1, run by the Management API's pipeline (token check, lockout,
// rate limit, activity and denials, Flagwire-Revision; src/api/management.ts). ETag and If-None-Match
// cover its content less the revision, so a provider refetching on each change event gets a 304 when
// nothing of its environment changed.
import { TaggedJson } from '../routes/handler.js';
import type { ManagementRouteSpec } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import { requireEnvironmentAllowed, resolveEnvParam } from '../model/environments.js';
import { notFoundDetail } from '../model/records/lookups.js';
import { etag } from '../http/entity-tags.js';
import { apiErrors, json, pathParam, queryParam } from '../routes/openapi-parts.js';
import { buildSnapshot } from './build.js';
import { projectConfigTag } from '../evaluation/engine/config-tag.js';
import { listFlags } from '../flags/records/flag-store.js';
import { projectFragments } from '../flags/records/fragment-records.js';
import { listAudiences } from '../model/records/project-records.js';
import { kConfigTagHeader, Snapshot } from '../model/snapshot-shape.js';

const kEtagHeaders = {
  ETag: { schema: { type: 'string' }, description: "Covers the snapshot's content (not its revision): send it as If-None-Match" },
  [kConfigTagHeader]: {
    schema: { type: 'string' },
    description: "The project's configuration tag, which its OFREP bulk answers' ETags start with (docs/edge.md)",
  },
};

export const kSnapshotRoutes: Readonly<Record<string, ManagementRouteSpec>> = {
  apiSnapshot: {
    method: 'get',
    pattern: '/v1/snapshots/:project_id',
    via: 'management',
    auth: 'token',
    docs: {
      operationId: 'getSnapshot',
      tag: 'Management API',
      summary: "One project environment as Flagwire's evaluation engine reads it, for in-process evaluation (docs/provider.md)",
      parameters: [
        pathParam('project_id', "The token's project"),
        queryParam('env', 'The environment (required for a multi-environment project, refused for a single one)'),
        { name: 'If-None-Match', in: 'header', schema: { type: 'string' }, description: 'ETag of a previous answer: 304 when unchanged' },
      ],
      responses: {
        '200': json(Snapshot, 'The snapshot', kEtagHeaders),
        '304': { description: 'Not modified: the If-None-Match ETag is still current', headers: kEtagHeaders },
        ...apiErrors([400, 401, 402, 403, 404, 429, 500]),
      },
    },
    handler: {
      kind: 'read',
      run(request, auth, { store, clock }) {
        const projectId = request.params.project_id!;
        // A token reads its own project only; another project's id is as unknown as one nothing has.
        if (projectId !== auth.project.id) throw new FlagwireError('NOT_FOUND', notFoundDetail('project', projectId));
        const env = resolveEnvParam(auth.project, request.query.get('env'), true, 'list');
        requireEnvironmentAllowed(auth.token.environments, env);
        const snapshot = buildSnapshot(store, auth.project, env, auth.org, clock.now());
        const tag = etag('snapshot', Buffer.from(JSON.stringify({ ...snapshot, revision: 0 })));
        // The OFREP bulk answers' ETags start with it (src/ofrep/evaluate.ts): an edge that serves them
        // (src/edge) tags its answers as the server does, and on a 304 learns a tag that moved without
        // this environment's content moving (another environment's edit, the plan).
        const configTag = projectConfigTag(
          auth.project,
          listFlags(store, auth.project.id),
          listAudiences(store, auth.project.id),
          auth.org,
          projectFragments(store, auth.project.id)?.updatedAt,
        );
        return new TaggedJson(JSON.stringify(snapshot), tag.toString('latin1'), [[kConfigTagHeader, configTag]]);
      },
    },
  },
};

// GET /v1/flag-sets/{project_id}[?env=NAME]: the flag set the sync service streams, over HTTP, for
// flagd daemons (`--uri https://.../v1/flag-sets/<project id>` with a bearer token), flagd-proxy and
// serverless clients that cannot hold a stream. The same token rules as the sync service (access.ts),
// the same set, built once per change on each front end (flag-sets.ts); ETag and If-None-Match make a
// poll that finds nothing new a 304 without a body; Flagwire-Revision names the revision the set was
// built at. Errors are the Management API's envelope, in its words.
import type { ServiceRouteSpec } from '../capability/capability.js';
import { send } from '../http/http.js';
import { decodePathId } from '../http/path-id.js';
import { revisionHeaders } from '../http/revisions.js';
import { refuseUrlTokens } from '../tokens/auth.js';
import { apiErrors, kEnvParam, pathParam } from '../routes/openapi-parts.js';
import { clientAddresses, sendRefusal } from '../routes/service-route-parts.js';
import { FlagSetAccess } from './access.js';
import { FlagSets } from './flag-sets.js';
import { flagSetIdOf } from '../flags/records/flag-set-read-records.js';

const kPath = '/v1/flag-sets/:project_id';

export const kSyncRoutes = {
  flagSet: {
    method: 'get',
    pattern: kPath,
    auth: 'token',
    docs: {
      operationId: 'getFlagSet',
      tag: 'Sync',
      summary: "A project environment's flagd flag set (the sync service's, over HTTP)",
      waitsForRevision: false,
      parameters: [
        pathParam('project_id', 'Project id: the token must be one of this project'),
        kEnvParam,
        { name: 'If-None-Match', in: 'header', schema: { type: 'string' }, description: 'ETag of a previous answer: 304 when unchanged' },
      ],
      responses: {
        '200': {
          description:
            'A flagd flag-definition document keyed by flag name; its metadata names flagSetId, flagwireProject, flagwireEnvironment, flagwireRevision and flagwireOmitted (docs/api.md: Sync service)',
          headers: { ETag: { schema: { type: 'string' }, description: 'Changes when the set does' } },
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        '304': { description: 'Not modified: the If-None-Match ETag is still current' },
        ...apiErrors([400, 401, 402, 403, 404, 429]),
      },
    },
    handler: (deps, route) => {
      const sets = new FlagSets(deps.store);
      const access = new FlagSetAccess(deps.store, deps.authFailures, deps.activity);
      const addressOf = clientAddresses(deps.config);
      return (res, req) => {
        const now = deps.clock.now();
        const ip = addressOf(res, req);
        const path = req.getUrl();
        const projectId = decodePathId(req.getParameter(0) ?? '');
        const query = new URLSearchParams(req.getQuery() ?? '');
        const authorization = req.getHeader('authorization');
        const ifNoneMatch = req.getHeader('if-none-match');
        deps.store.resetReadTxn();
        let status = 200;
        try {
          refuseUrlTokens(query);
          const environment = query.get('env') || null;
          const selector = { flagSetId: flagSetIdOf(projectId, environment), projectId, environment, token: null };
          const source = authorization === '' ? 'none' : 'authorization';
          const granted = access.grant({ selector, authorization, source, ip, method: 'GET', path }, now);
          const set = sets.current(granted.project, granted.environment, now);
          // Read, answered 200 or 304 alike: a poller that finds nothing new serves the copy it holds.
          deps.flagSetReads.read(granted.project.id, granted.environment, now);
          const headers = revisionHeaders(set.revision, ['ETag', set.etag]);
          if (matches(ifNoneMatch, set.etag)) {
            status = 304;
            send(res, 304, '', 'application/json', headers);
          } else send(res, 200, set.json, 'application/json', headers);
        } catch (err) {
          status = sendRefusal(res, err, deps, kPath, 'unexpected error serving a flag set');
        }
        deps.metrics?.request(route, status);
      };
    },
  },
} as const satisfies Record<string, ServiceRouteSpec>;

/** Whether If-None-Match names `etag` (a list, `*`, or a weak form of it). */
function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch === '') return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

// GET /api/client/features: a project environment's flags in Unleash's client API model (version 2),
// for Unleash's stock server SDKs, which fetch it and evaluate locally (client-features.ts says how each
// flag is said, and which are left out). The token decides the project (access.ts); of the SDKs' filters,
// `namePrefix` is applied, and `project` and `tag` are not needed (the token's project is the one
// served) and are ignored. The ETag is what decides the answer (the project's configuration tag, the
// plan's audience switch, the environment, the prefix), so an SDK's poll that finds nothing new is a
// 304 without building anything.
import type { ServiceRouteSpec } from '../capability/capability.js';
import { projectConfigTag } from '../eval-engine/config-tag.js';
import { listFlags } from '../flags/flag-store.js';
import { projectFragments } from '../flags/fragment-records.js';
import { matchesIfNoneMatch } from '../http/entity-tags.js';
import { send } from '../http/http.js';
import { revisionHeaders } from '../http/revisions.js';
import { hasAudiences } from '../model/plans.js';
import { apiErrors } from '../routes/openapi-parts.js';
import { clientAddresses, sendRefusal } from '../routes/service-route-parts.js';
import { refuseUrlTokens } from '../tokens/auth.js';
import { FeaturesAccess } from './access.js';
import { buildClientFeatures } from './client-features.js';

const kPath = '/api/client/features';
/** The answer's form, in its ETag: a release that says an unchanged flag differently bumps it. */
const kForm = 1;

export const kUnleashRoutes = {
  clientFeatures: {
    method: 'get',
    pattern: kPath,
    auth: 'token',
    docs: {
      operationId: 'getUnleashClientFeatures',
      tag: 'Unleash',
      summary: "The token's project environment in Unleash's client API model, for Unleash's server SDKs",
      waitsForRevision: false,
      parameters: [
        { name: 'namePrefix', in: 'query', schema: { type: 'string' }, description: 'Only flags whose name starts with it' },
        { name: 'If-None-Match', in: 'header', schema: { type: 'string' }, description: 'ETag of a previous answer: 304 when unchanged' },
      ],
      responses: {
        '200': {
          description:
            "Unleash's client features (version 2): features, segments; `flagwire` names the project, the environment and the flags left out, each with why (docs/api.md: Unleash's SDKs)",
          headers: { ETag: { schema: { type: 'string' }, description: 'Changes when the answer does' } },
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        '304': { description: 'Not modified: the If-None-Match ETag is still current' },
        ...apiErrors([400, 401, 402, 403, 404, 429]),
      },
    },
    handler: (deps, route) => {
      const access = new FeaturesAccess(deps.store, deps.authFailures, deps.activity);
      const addressOf = clientAddresses(deps.config);
      return (res, req) => {
        const now = deps.clock.now();
        const ip = addressOf(res, req);
        const authorization = req.getHeader('authorization');
        const ifNoneMatch = req.getHeader('if-none-match');
        const query = new URLSearchParams(req.getQuery() ?? '');
        deps.store.resetReadTxn();
        let status = 200;
        try {
          refuseUrlTokens(query);
          const { project, environment } = access.grant(authorization, ip, kPath, now);
          const { store } = deps;
          const org = project.orgId === null ? null : (store.getOrg(project.orgId) ?? null);
          const audiencesAllowed = hasAudiences(org, now);
          const flags = listFlags(store, project.id);
          const audiences = store.listAudiences(project.id);
          const configTag = projectConfigTag(project, flags, audiences, org, projectFragments(store, project.id)?.updatedAt);
          const namePrefix = query.get('namePrefix') ?? '';
          const hex = (text: string | null) => (text === null || text === '' ? '' : `-${Buffer.from(text).toString('hex')}`);
          const tag = `"${kForm}${audiencesAllowed ? '+' : '-'}${configTag}${hex(environment)}.${hex(namePrefix)}"`;
          const headers = revisionHeaders(store.revision(), ['ETag', tag]);
          if (matchesIfNoneMatch(ifNoneMatch, Buffer.from(tag))) {
            status = 304;
            send(res, 304, '', 'application/json', headers);
          } else {
            const { json } = buildClientFeatures({ projectId: project.id, environment, flags, audiences, audiencesAllowed, namePrefix });
            send(res, 200, json, 'application/json', headers);
          }
        } catch (err) {
          status = sendRefusal(res, err, deps, kPath, 'unexpected error serving Unleash client features');
        }
        deps.metrics?.request(route, status);
      };
    },
  },
} as const satisfies Record<string, ServiceRouteSpec>;

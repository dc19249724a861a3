// POST /v1/relay/usage: a relay's usage report, with its relay key as GET /v1/relay takes it, counted
// as routes.ts counts the provider's (routes.ts says how a report is answered, and on a relay).
import type { ServiceRouteSpec } from '../capability/capability.js';
import { send } from '../http/http.js';
import { revisionHeaders } from '../http/revisions.js';
import { checkedBody } from '../model/request-body.js';
import { RelayKeyAccess } from '../relay/access.js';
import { apiErrors } from '../routes/openapi-parts.js';
import { clientAddresses, readServiceBody, sendRefusal } from '../routes/service-route-parts.js';
import { UsageReport, UsageReportAnswer } from './report.js';
import { countReport, inputOf, kRelayPath, kReport } from './routes.js';

export const kRelayUsageRoutes = {
  relayUsageReport: {
    method: 'post',
    pattern: kRelayPath,
    auth: 'token',
    docs: {
      operationId: 'postRelayUsageReport',
      tag: 'Sync',
      summary: 'Evaluations a relay answered, one batch counted once by its id (a relay key, not an API token)',
      waitsForRevision: false,
      request: { schema: UsageReport, required: true },
      responses: {
        '200': { description: 'Counted (or counted before)', content: { 'application/json': { schema: UsageReportAnswer } } },
        ...apiErrors([400, 401, 404, 413, 429, 503]),
      },
    },
    handler: (deps, route) => {
      const access = new RelayKeyAccess(deps.store, deps.authFailures);
      const addressOf = clientAddresses(deps.config);
      return (res, req) => {
        const ip = addressOf(res, req);
        const authorization = req.getHeader('authorization');
        const contentType = req.getHeader('content-type');
        readServiceBody(res, req.getHeader('content-length'), deps, route, (body, release) => {
          const answer = async (): Promise<number> => {
            try {
              const now = deps.clock.now();
              deps.store.resetReadTxn();
              const key = access.grant(authorization, ip, now);
              const input = inputOf(
                { kind: 'relay', keyHash: key.secretHash },
                checkedBody({ bytes: body, contentType }, kReport),
                now,
                null,
              );
              release();
              const { answer } = await countReport(
                { writer: deps.writer, usage: deps.config.upstream === null ? null : deps.usage },
                input,
              );
              send(res, 200, JSON.stringify(answer), 'application/json', revisionHeaders(deps.store.revision()));
              return 200;
            } catch (err) {
              release();
              return sendRefusal(res, err, deps, kRelayPath, 'unexpected error counting a relay usage report');
            }
          };
          void answer().then((status) => deps.metrics?.request(route, status));
        });
      };
    },
  },
} as const satisfies Record<string, ServiceRouteSpec>;

// GET /v1/relay: where a relay learns how to follow this node (docs/api.md: Relay service). With a live
// relay key (`Authorization: Bearer fwr_...`) it answers the sync service's port (the Follow stream is
// served there, at this URL's host), the source this node's revisions are of and its revision now; a
// missing, wrong or revoked key is a 401 in the spec's envelope, counted toward the address's lockout.
import type { ServiceRouteSpec } from '../capability/capability.js';
import { FlagwireError } from '../errors.js';
import { send } from '../http/http.js';
import { revisionHeaders } from '../http/revisions.js';
import { apiErrors } from '../routes/openapi-parts.js';
import { clientAddresses, sendRefusal } from '../routes/service-route-parts.js';
import { type Static, Type } from '../typebox.js';
import { RelayKeyAccess } from './access.js';
import { kEveryProject } from '../flags/records/flag-set-read-records.js';

export const RelayDiscovery = Type.Object(
  {
    syncPort: Type.Integer({ minimum: 1, maximum: 65535, description: 'The gRPC port of the sync service, where Follow is served' }),
    source: Type.String({ description: 'The id of the system of record whose revisions this node serves' }),
    revision: Type.Integer({ minimum: 0, description: "This node's revision now" }),
  },
  { additionalProperties: false },
);
export type RelayDiscovery = Static<typeof RelayDiscovery>;

const kPath = '/v1/relay';

export const kRelayRoutes = {
  relayDiscovery: {
    method: 'get',
    pattern: kPath,
    auth: 'token',
    docs: {
      operationId: 'getRelayDiscovery',
      tag: 'Sync',
      summary: "How a relay follows this node: the sync service's port, the source and the revision (a relay key, not an API token)",
      waitsForRevision: false,
      responses: {
        '200': { description: 'Where to follow this node', content: { 'application/json': { schema: RelayDiscovery } } },
        ...apiErrors([401, 404, 429]),
      },
    },
    handler: (deps, route) => {
      const access = new RelayKeyAccess(deps.store, deps.authFailures);
      const addressOf = clientAddresses(deps.config);
      return (res, req) => {
        const now = deps.clock.now();
        const ip = addressOf(res, req);
        const authorization = req.getHeader('authorization');
        deps.store.resetReadTxn();
        let status = 200;
        try {
          access.grant(authorization, ip, now);
          if (deps.config.syncPort === 0) {
            throw new FlagwireError('NOT_FOUND', 'This node serves no sync service (FLAGWIRE_SYNC_PORT is 0), so no relay can follow it.');
          }
          // A relay about to follow: every flag set counts as read (its Follow stream marks them while open).
          deps.flagSetReads.read(kEveryProject, null, now);
          const body: RelayDiscovery = { syncPort: deps.config.syncPort, source: deps.store.source(), revision: deps.store.revision() };
          send(res, 200, JSON.stringify(body), 'application/json', revisionHeaders(body.revision));
        } catch (err) {
          status = sendRefusal(res, err, deps, kPath, 'unexpected error in relay discovery');
        }
        deps.metrics?.request(route, status);
      };
    },
  },
} as const satisfies Record<string, ServiceRouteSpec>;

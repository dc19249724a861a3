// Unleash's client API, for Unleash's server SDKs (docs/api.md: Unleash's SDKs).
//
// GET /api/client/features: a project environment's flags in Unleash's client API model (version 2),
// for Unleash's stock server SDKs, which fetch it and evaluate locally (client-features.ts says how each
// flag is said, and which are left out). The token decides the project (access.ts); of the SDKs' filters,
// `namePrefix` is applied, and `project` and `tag` are not needed (the token's project is the one
// served) and are ignored. The ETag is what decides the answer (the project's configuration tag, the
// plan's audience switch, the environment, the prefix), so an SDK's poll that finds nothing new is a
// 304 without building anything.
//
// POST /api/client/register and /api/client/metrics: what the SDKs report, answered 202 as Unleash and
// Unleash Edge answer them (the SDK warns on anything else). A registration is checked and not kept; a
// report's counts join the flag usage the eval workers count, written with theirs at the next flush
// (src/evaluation/engine/usage.ts): 202 is "accepted", not "on disk", and no request pays a write.
//
// GET /api/client/streaming: the same features as Server-Sent Events (streaming.ts), for the SDKs'
// streaming mode, on Flagwire's change feed (src/stream), after the same token check; the stream ends
// once the token no longer holds.
import type { HttpRequest } from 'uWebSockets.js';
import type { ServiceRouteDeps, ServiceRouteSpec } from '../capability/capability.js';
import { listFlags } from '../flags/records/flag-store.js';
import { matchesIfNoneMatch } from '../http/entity-tags.js';
import { type PendingResponse, send } from '../http/http.js';
import { revisionHeaders } from '../http/revisions.js';
import { checkedBody } from '../model/request-body.js';
import { compileValidator } from '../model/validation.js';
import { apiErrors } from '../routes/openapi-parts.js';
import type { TSchema } from '../typebox.js';
import { clientAddresses, readServiceBody, sendRefusal } from '../routes/service-route-parts.js';
import { refuseUrlTokens } from '../tokens/auth.js';
import { FeaturesAccess } from './access.js';
import { buildClientFeatures } from './client-features.js';
import { readFeaturesSource } from './features-source.js';
import { UnleashStream } from './streaming.js';
import { UnleashClientMetrics, UnleashClientRegistration, usageOfReport } from './client-reports.js';
import { tooManyReports } from './report-rate.js';

const kPath = '/api/client/features';
const kRegisterPath = '/api/client/register';
const kMetricsPath = '/api/client/metrics';
const kStreamingPath = '/api/client/streaming';
const kRegistration = compileValidator(UnleashClientRegistration, { quoteKeys: false });
const kMetrics = compileValidator(UnleashClientMetrics, { quoteKeys: false });

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
          const { project, environment } = access.grant(authorization, ip, 'GET', kPath, now);
          const { input, tag } = readFeaturesSource(deps.store, project, environment, query.get('namePrefix') ?? '', now);
          const headers = revisionHeaders(deps.store.revision(), ['ETag', tag]);
          if (matchesIfNoneMatch(ifNoneMatch, Buffer.from(tag))) {
            status = 304;
            send(res, 304, '', 'application/json', headers);
          } else {
            const { json } = buildClientFeatures(input);
            send(res, 200, json, 'application/json', headers);
          }
        } catch (err) {
          status = sendRefusal(res, err, deps, kPath, 'unexpected error serving Unleash client features');
        }
        deps.metrics?.request(route, status);
      };
    },
  },
  clientStreaming: {
    method: 'get',
    pattern: kStreamingPath,
    auth: 'token',
    docs: {
      operationId: 'streamUnleashClientFeatures',
      tag: 'Unleash',
      summary:
        "The token's project environment in Unleash's client API model as Server-Sent Events, for Unleash's server SDKs in streaming mode",
      waitsForRevision: false,
      responses: {
        '200': {
          description:
            '`unleash-connected` {events: [{type: "hydration", eventId, features, segments}]} first, then `unleash-updated` ' +
            '{events: [feature-updated {eventId, feature} | feature-removed {eventId, featureName, project}]} for each commit that ' +
            "changes the features; each event's id the store revision; a comment heartbeat every 15 s (docs/api.md: Unleash's SDKs)",
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        ...apiErrors([400, 401, 402, 403, 404, 429, 503]),
      },
    },
    handler: (deps, route) => {
      const access = new FeaturesAccess(deps.store, deps.authFailures, deps.activity);
      const addressOf = clientAddresses(deps.config);
      const stream = new UnleashStream(deps.clock);
      return (res, req) => {
        const now = deps.clock.now();
        const ip = addressOf(res, req);
        const authorization = req.getHeader('authorization');
        const query = new URLSearchParams(req.getQuery() ?? '');
        deps.store.resetReadTxn();
        try {
          refuseUrlTokens(query);
          const granted = access.grant(authorization, ip, 'GET', kStreamingPath, now);
          deps.changes.openFollower(res, granted.project, granted.environment, stream, route, (store) =>
            FeaturesAccess.stillGranted(store, granted, deps.clock.now()),
          );
        } catch (err) {
          deps.metrics?.request(route, sendRefusal(res, err, deps, kStreamingPath, 'unexpected error opening an Unleash stream'));
        }
      };
    },
  },
  clientRegister: {
    method: 'post',
    pattern: kRegisterPath,
    auth: 'token',
    docs: reportDocs(
      'registerUnleashClient',
      "An Unleash server SDK's registration: checked, answered 202, not kept",
      UnleashClientRegistration,
    ),
    handler: (deps, route) => reportHandler(deps, route, kRegisterPath, kRegistration, () => {}),
  },
  clientMetrics: {
    method: 'post',
    pattern: kMetricsPath,
    auth: 'token',
    docs: reportDocs(
      'postUnleashClientMetrics',
      "An Unleash server SDK's counts: each of the project's flags it names counted in its usage (yes + no), written at the next usage flush",
      UnleashClientMetrics,
    ),
    handler: (deps, route) =>
      reportHandler(
        deps,
        route,
        kMetricsPath,
        kMetrics,
        (report, project, environment, now) => {
          const counts = usageOfReport(report, listFlags(deps.store, project), environment, now);
          if (counts.length > 0) deps.usage.addUsage(counts);
        },
        true,
      ),
  },
} as const satisfies Record<string, ServiceRouteSpec>;

function reportDocs(operationId: string, summary: string, schema: TSchema): ServiceRouteSpec['docs'] {
  return {
    operationId,
    tag: 'Unleash',
    summary,
    waitsForRevision: false,
    request: { schema, required: true },
    responses: { '202': { description: 'Accepted; the body is empty' }, ...apiErrors([400, 401, 402, 403, 404, 413, 429, 503]) },
  };
}

/**
 * A report's route: the body read within the body budget, the token granted, the report charged to its
 * project in the process's report limiter (when `limited`), the body checked against `validator`, then
 * `take` (the project's id and the token's environment) and 202; every refusal in the Management API's envelope.
 */
function reportHandler<T>(
  deps: ServiceRouteDeps,
  route: number,
  path: string,
  validator: { check(value: unknown): value is T; problems(value: unknown): string[] },
  take: (report: T, projectId: string, environment: string | null, now: number) => void,
  limited = false,
): (res: PendingResponse, req: HttpRequest) => void {
  const access = new FeaturesAccess(deps.store, deps.authFailures, deps.activity);
  const addressOf = clientAddresses(deps.config);
  return (res, req) => {
    const ip = addressOf(res, req);
    const authorization = req.getHeader('authorization');
    const contentType = req.getHeader('content-type');
    const query = new URLSearchParams(req.getQuery() ?? '');
    readServiceBody(res, req.getHeader('content-length'), deps, route, (body, release) => {
      let status = 202;
      try {
        const now = deps.clock.now();
        deps.store.resetReadTxn();
        refuseUrlTokens(query);
        let report: T | undefined;
        const { project, environment } = access.grant(authorization, ip, 'POST', path, now, (granted) => {
          // Charged to the project before its body is read (report-rate.ts).
          if (limited && !deps.reportRate.take(granted.project.id, now)) throw tooManyReports();
          report = checkedBody({ bytes: body, contentType }, validator);
        });
        take(report!, project.id, environment, now);
        send(res, 202, '', 'application/json', revisionHeaders(deps.store.revision()));
      } catch (err) {
        status = sendRefusal(res, err, deps, path, 'unexpected error taking an Unleash client report');
      } finally {
        release();
      }
      deps.metrics?.request(route, status);
    });
  };
}

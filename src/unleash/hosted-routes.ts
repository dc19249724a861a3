// Unleash's front-end API (issue 60, item 1; docs/api.md: Unleash's front-end API), an evaluation route set
// (src/evaluation/engine/routes.ts): the stock unleash-proxy-client, and so its React, Vue and mobile wrappers,
// connects unchanged. Each route is served at /api/frontend and at its legacy /api/proxy path, as Unleash
// Edge serves both. Main thread: read the POST body (the evaluation body cap, within the process's
// credential-free body budget and the client key's evaluation bytes per second:
// src/evaluation/engine/queued-body.ts) and put the request into the evaluation batch; the eval workers check
// the client key in the batch's snapshot and evaluate (frontend-evaluator.ts).
//
// Its requests in the batch (src/evaluation/engine/protocol.ts):
//
//   route            id          query                            extra
//   every one        flag name   the query (GET) or body (POST)   'q' (a query) or 'b' (a body), then the
//                    (features)                                   Authorization header, "\n", If-None-Match
//
// (HTTP header values hold no line break, so "\n" parts them.) A path's GET and POST share a route
// number (src/all-routes.ts numbers paths): the 'q' or 'b' says which the worker reads.
import { type FrontendKind, kFrontendKinds } from './frontend-kinds.js';
import type { HttpRequest, TemplatedApp } from 'uWebSockets.js';
import { ErrorBody } from '../error-schemas.js';
import type { Clock } from '../clock.js';
import {
  evalErrorBody,
  kBatchTimedOutBody,
  kInternalErrorBody,
  kOverloadedBody,
  kRevisionNotReachedBody,
  tooManyRequestsBody,
} from '../evaluation/engine/bodies.js';
import type { Route } from '../evaluation/engine/protocol.js';
import { kEvalBodyTooFast, kEvalBodyTooLarge, type QueueRefusals, queueWithBody } from '../evaluation/engine/queued-body.js';
import type { EvalQueue, EvalRoutes } from '../evaluation/engine/routes.js';
import { type BodyBudget, bodyRefusal } from '../http/body.js';
import { kAuthorizationKey, kContentLengthKey, kIfNoneMatchKey } from '../http/header-keys.js';
import { type PendingResponse, trackAbort } from '../http/http.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { json, pathParam } from '../routes/openapi-parts.js';
import { type RouteCounts, type RouteDeclaration, type RouteNumbers, registerRoutes } from '../routes/route-table.js';
import { UnleashContextRequest, UnleashToggle, UnleashToggles } from './schemas.js';

const kEtagHeader = { ETag: { schema: { type: 'string' }, description: 'Changes when the answer does' } };
const kIfNoneMatch = {
  name: 'If-None-Match',
  in: 'header',
  schema: { type: 'string' },
  description: 'ETag of a previous answer: 304 when unchanged',
};
const kContextQuery = {
  name: 'context',
  in: 'query',
  style: 'form',
  explode: true,
  schema: { type: 'object', additionalProperties: { type: 'string' } },
  description:
    "Unleash's context as unleash-proxy-client writes it: userId, sessionId, properties[<name>]=<value> (any other name is a property)",
};
/** Its refusals, in the Evaluation API's envelope ({error, detail}: src/client-keys/access.ts says which). */
const kErrors = {
  '400': json(
    ErrorBody,
    'Invalid request: a POST body that is not a JSON object, whose context or properties is not one, or whose context is past the bound (docs/operations.md: Evaluation work)',
  ),
  '401': json(ErrorBody, 'No client key, not one (an API token or a relay key among them), an unknown one or a revoked one'),
  '403': json(ErrorBody, "Insufficient permission: a key without the use frontend; Forbidden: the key's environment is gone"),
  '413': json(ErrorBody, 'The body is larger than any context within the bound takes (docs/operations.md: Evaluation work)'),
  '429': json(ErrorBody, "The client key's evaluation body bytes per second are spent; the body is not read (Retry-After: 1)"),
  '500': json(ErrorBody, 'Internal server error'),
  '503': json(
    ErrorBody,
    "The evaluation queue is full, the server is stopping, or the request's batch did not come back in time, or the server holds as many request bodies as it allows (Retry-After: 1)",
  ),
};

/** One path's routes, under `base` (/api/frontend or /api/proxy); `op` prefixes their operation ids. */
function frontendRoutes(base: string, op: string, legacy: string) {
  const read = (kind: 'enabled' | 'all', method: 'get' | 'post', path: string, what: string): RouteDeclaration => ({
    method,
    pattern: `${base}${path}`,
    auth: 'clientKey',
    docs: {
      operationId: `${op}${kind === 'all' ? 'All' : ''}${method === 'get' ? '' : 'Post'}`,
      tag: 'Unleash',
      summary: `${legacy}${what} for the context ${method === 'get' ? 'in the query' : 'in the body'}, in Unleash Edge's shape`,
      waitsForRevision: false,
      parameters: method === 'get' ? [kContextQuery, kIfNoneMatch] : [kIfNoneMatch],
      ...(method === 'post' ? { request: { schema: UnleashContextRequest, required: false } } : {}),
      responses: {
        '200': json(UnleashToggles, 'The toggles, by name', kEtagHeader),
        '304': { description: 'Not modified: the If-None-Match ETag is still current', headers: kEtagHeader },
        ...kErrors,
      },
    },
  });
  const feature = (method: 'get' | 'post'): RouteDeclaration => ({
    method,
    pattern: `${base}/features/:name`,
    auth: 'clientKey',
    docs: {
      operationId: `${op}Feature${method === 'get' ? '' : 'Post'}`,
      tag: 'Unleash',
      summary: `${legacy}One flag of the key's project environment, evaluated for the context, in Unleash Edge's toggle shape`,
      waitsForRevision: false,
      parameters: [pathParam('name', "The flag's name"), ...(method === 'get' ? [kContextQuery] : []), kIfNoneMatch],
      ...(method === 'post' ? { request: { schema: UnleashContextRequest, required: false } } : {}),
      responses: {
        '200': json(UnleashToggle, 'The toggle', kEtagHeader),
        '304': { description: 'Not modified: the If-None-Match ETag is still current', headers: kEtagHeader },
        '404': json(ErrorBody, "Not found: no flag of the key's project has this name"),
        ...kErrors,
      },
    },
  });
  const report = (path: string, what: string, id: string): RouteDeclaration => ({
    method: 'post',
    pattern: `${base}/client/${path}`,
    auth: 'clientKey',
    docs: {
      operationId: `${op}${id}`,
      tag: 'Unleash',
      summary: `${legacy}${what}: accepted (202) once the key is checked, and not kept (docs/api.md: Unleash's front-end API)`,
      waitsForRevision: false,
      responses: { '202': { description: 'Accepted; the body is empty' }, ...kErrors },
    },
  });
  return {
    Enabled: read('enabled', 'get', '', "The flags on for the context (Unleash's /api/frontend): the key's project environment"),
    EnabledPost: read('enabled', 'post', '', "The flags on for the context (Unleash's /api/frontend): the key's project environment"),
    All: read('all', 'get', '/all', "Every flag of the key's project environment, off ones too"),
    AllPost: read('all', 'post', '/all', "Every flag of the key's project environment, off ones too"),
    Feature: feature('get'),
    FeaturePost: feature('post'),
    Metrics: report('metrics', "The SDK's counts of its answers", 'Metrics'),
    Register: report('register', "The SDK's registration", 'Register'),
  } as const;
}

/** `routes` with each name prefixed: one path's routes under their route names. */
function named<P extends string, T extends Record<string, RouteDeclaration>>(
  prefix: P,
  routes: T,
): { [K in keyof T & string as `${P}${K}`]: T[K] } {
  return Object.fromEntries(Object.entries(routes).map(([name, route]) => [`${prefix}${name}`, route])) as {
    [K in keyof T & string as `${P}${K}`]: T[K];
  };
}

/** Its routes' declarations (the unleash capability lists them: capability.ts). */
export const kUnleashFrontendRoutes = {
  ...named('unleashFrontend', frontendRoutes('/api/frontend', 'unleashFrontend', '')),
  ...named('unleashProxy', frontendRoutes('/api/proxy', 'unleashProxy', 'Legacy path (Unleash Edge serves it too): ')),
} satisfies Record<string, RouteDeclaration>;

type Numbers = RouteNumbers<typeof kUnleashFrontendRoutes>;

/** A kind's route name within its path's routes (`all` -> `All`). */
const routeName = <K extends FrontendKind>(kind: K) => `${kind[0]!.toUpperCase()}${kind.slice(1)}` as Capitalize<K>;

/**
 * The route numbers of each kind, in kFrontendKinds' order, /api/frontend's then /api/proxy's: the
 * worker's table, derived from the declarations' names (a POST shares its GET's number: same path).
 */
function routesOf(numbers: Numbers): Route[] {
  return (['unleashFrontend', 'unleashProxy'] as const).flatMap((prefix) =>
    kFrontendKinds.map((kind) => numbers[`${prefix}${routeName(kind)}`]),
  );
}

export interface FrontendRoutesOptions {
  /** The credential-free share of the process's request-body budget: a client key is no secret. */
  bodies: BodyBudget;
  /** Each credential's evaluation body bytes per second: a POST's are charged to its client key. */
  evalBytes: RateLimiter;
  clock: Clock;
  /** Where refused (413, 429, 503) requests are counted; null when metrics are off. */
  metrics: RouteCounts | null;
  numbers: Numbers;
}

export function unleashFrontendRoutes(options: FrontendRoutesOptions): EvalRoutes {
  return {
    routes: routesOf(options.numbers),
    workerModule: new URL('./frontend-evaluator.js', import.meta.url).href,
    internalErrorBody: kInternalErrorBody,
    revisionNotReachedBody: kRevisionNotReachedBody,
    batchTimedOutBody: kBatchTimedOutBody,
    register: (app, queue) => registerFrontendRoutes(app, queue, options),
  };
}

const kTooLargeBody = evalErrorBody('PAYLOAD_TOO_LARGE', kEvalBodyTooLarge);
const kRefusals: QueueRefusals = {
  tooLarge: () => kTooLargeBody,
  tooFast: tooManyRequestsBody(kEvalBodyTooFast),
  busy: evalErrorBody('SERVER_BUSY', bodyRefusal('busy').detail),
  overloaded: kOverloadedBody,
};

function registerFrontendRoutes(
  app: TemplatedApp,
  queue: EvalQueue,
  { bodies, evalBytes, clock, metrics, numbers }: FrontendRoutesOptions,
): void {
  const parts = { queue, bodies, evalBytes, clock, metrics };
  const overloaded = (res: PendingResponse, route: Route) => {
    metrics?.request(route, 503);
    queue.refuse(res, 503, kOverloadedBody, true);
  };
  // Read everything off `req` first (stack-allocated), then queue the request or read its body.
  const get = (route: Route) => (res: PendingResponse, req: HttpRequest) => {
    const extra = `q${req.getHeader(kAuthorizationKey)}\n${req.getHeader(kIfNoneMatchKey)}`;
    const name = req.getParameter(0) ?? '';
    const query = req.getQuery() ?? '';
    trackAbort(res);
    if (!queue.add(res, route, name, query, extra)) overloaded(res, route);
  };
  const post = (route: Route) => (res: PendingResponse, req: HttpRequest) => {
    const authorization = req.getHeader(kAuthorizationKey);
    const extra = `b${authorization}\n${req.getHeader(kIfNoneMatchKey)}`;
    const name = req.getParameter(0) ?? '';
    // Charged to the key as sent, prefixed apart from OFREP's addresses: an unknown key is refused by the
    // worker before its body is parsed, so a flood under made-up keys costs no parsing.
    queueWithBody(res, req.getHeader(kContentLengthKey), route, name, extra, 0, `k${authorization}`, parts, kRefusals);
  };
  const handlers = Object.fromEntries(
    Object.entries(kUnleashFrontendRoutes).map(([name, route]) => {
      const number = numbers[name as keyof Numbers];
      return [name, route.method === 'get' ? get(number) : post(number)];
    }),
  );
  registerRoutes(app, kUnleashFrontendRoutes, handlers);
}

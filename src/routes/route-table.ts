// Every route of the service, declared once: its method and path pattern, who may call it, its metrics
// route number and label, and its OpenAPI operation (summary, parameters, request and response schemas).
// Derived from this table:
//   - the uWS registration: each route set attaches its handlers by route name (registerRoutes below);
//   - with each capability's Management API routes (src/capabilities.ts), the table of every route
//     (src/routes/all-routes.ts), and from it the metrics' route labels, the OpenAPI document's paths and
//     the Management API's dispatch behind its /api/v1/* entry, matched once per request
//     (matchManagementRoute).
// test/routes/route-table.test.ts and test/openapi check that every declared route is registered,
// labelled and documented, and that nothing registered is undeclared.
//
// Route numbers are fixed: an evaluation route's number travels in the evaluation batch as a u8
// (src/eval/protocol.ts), so every number stays below 256, and the label table is indexed by them.
import type { TSchema } from '../typebox.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { FlagList, FlagRepresentation, PatchResult, TokenDescription } from '../model/representation.js';
import { ErrorBody } from '../errors.js';
import { EvalFlag, EvalFlagList } from '../model/eval-shapes.js';
import { Health, ReadinessBody } from '../model/probes.js';
import { FlagCreate, FlagPatch } from '../model/schemas.js';
import {
  OfrepBulkFailure,
  OfrepBulkSuccess,
  OfrepEvaluationFailure,
  OfrepEvaluationRequest,
  OfrepEvaluationSuccess,
  OfrepFlagNotFound,
} from '../model/ofrep-schemas.js';
import {
  apiErrors,
  json,
  kEnvParam,
  kEtag,
  kEvalErrors,
  kEvalParams,
  kFramingError,
  kLastEventId,
  kOfrepErrors,
  kPageParams,
  kProjectHeader,
  kPruneParam,
  kStreamErrors,
  pathParam,
  queryParam,
  ref,
} from './openapi-parts.js';
import { FlagFile } from '../flags-as-code/flag-file.js';
import { PlanResult } from '../flags-as-code/schemas.js';
import { RolloutBody, RolloutCreate, RolloutList, ScheduleCreate, ScheduledChangeBody, ScheduleList } from '../release-plans/schemas.js';
import { DeliveryBody, DeliveryList, WebhookCreate, WebhookCreated, WebhookDeleted, WebhookList } from '../webhooks/schemas.js';

/** uWS's registration methods ('del' is DELETE). */
export type RouteMethod = 'get' | 'post' | 'patch' | 'del' | 'options' | 'any';

/**
 * Who may call a route: 'none' (public), 'token' (a Management API bearer token), 'session' (a web
 * console session), 'test' (test hooks, registered only with FLAGWIRE_TEST_HOOKS=1).
 */
export type RouteAuth = 'none' | 'token' | 'session' | 'test';

export type OpenApiTag = 'Management API' | 'Evaluation API' | 'OFREP' | 'Service';

/** A route's OpenAPI operation; its security follows from the route's auth. */
export interface RouteDocs {
  readonly operationId: string;
  readonly tag: OpenApiTag;
  readonly summary: string;
  readonly parameters?: readonly object[];
  /** The JSON request body's schema (one of the components, src/routes/openapi-parts.ts). */
  readonly request?: { readonly schema: TSchema; readonly required: boolean };
  /** By status: responses whose schemas are components (json() in src/routes/openapi-parts.ts). */
  readonly responses: Readonly<Record<string, object>>;
}

export interface RouteDeclaration {
  readonly method: RouteMethod;
  /** uWS's form: `:name` is a path parameter, a trailing `*` any rest of the path. */
  readonly pattern: string;
  /**
   * 'uws' (the default): registered on the app. 'management': one of the Management API's routes, which
   * uWS routes to its /api/v1/* entry and the Management API dispatches (src/api/management.ts).
   */
  readonly via?: 'uws' | 'management';
  readonly auth: RouteAuth;
  /** Its route number: the index of its label among the metrics' route labels; null: not counted. */
  readonly metric: number | null;
  /** Its metrics label, when not the pattern in OpenAPI's form. */
  readonly label?: string;
  /** Its OpenAPI operation; absent: not in the document (not a public API). */
  readonly docs?: RouteDocs;
}

/** Every route, in the OpenAPI document's order (documented routes first). */
export const kRoutes = {
  apiToken: {
    method: 'get',
    pattern: '/api/v1/token',
    via: 'management',
    auth: 'token',
    metric: 4,
    docs: {
      operationId: 'getToken',
      tag: 'Management API',
      summary: 'Describe the calling token',
      responses: { '200': json(TokenDescription, 'The token'), ...apiErrors([400, 401, 402, 429, 500]) },
    },
  },
  apiListFlags: {
    method: 'get',
    pattern: '/api/v1/flags',
    via: 'management',
    auth: 'token',
    metric: 5,
    docs: {
      operationId: 'listFlags',
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
  },
  apiCreateFlag: {
    method: 'post',
    pattern: '/api/v1/flags',
    via: 'management',
    auth: 'token',
    metric: 5,
    docs: {
      operationId: 'createFlag',
      tag: 'Management API',
      summary: 'Create a flag',
      request: { schema: FlagCreate, required: true },
      responses: {
        '201': json(FlagRepresentation, 'Created (a group flag in environments form)'),
        ...apiErrors([400, 401, 402, 403, 413, 429, 500, 503]),
      },
    },
  },
  apiGetFlag: {
    method: 'get',
    pattern: '/api/v1/flags/:flag_id',
    via: 'management',
    auth: 'token',
    metric: 6,
    docs: {
      operationId: 'getFlag',
      tag: 'Management API',
      summary: 'One flag',
      parameters: [pathParam('flag_id', 'Flag id'), kEnvParam],
      responses: { '200': json(FlagRepresentation, 'The flag'), ...apiErrors([400, 401, 402, 403, 404, 429, 500]) },
    },
  },
  apiPatchFlag: {
    method: 'patch',
    pattern: '/api/v1/flags/:flag_id',
    via: 'management',
    auth: 'token',
    metric: 6,
    docs: {
      operationId: 'patchFlag',
      tag: 'Management API',
      summary: "Change a flag's state (merge patch)",
      parameters: [pathParam('flag_id', 'Flag id'), kEnvParam],
      request: { schema: FlagPatch, required: true },
      responses: {
        '200': json(PatchResult, 'Applied (or nothing to change)'),
        ...apiErrors([400, 401, 402, 403, 404, 413, 429, 500, 503]),
      },
    },
  },
  // Flags as code (src/flags-as-code): a project's flags as a file, and a file planned and applied.
  apiExport: {
    method: 'get',
    pattern: '/api/v1/export',
    via: 'management',
    auth: 'token',
    metric: 16,
    docs: {
      operationId: 'exportFlags',
      tag: 'Management API',
      summary: "The token's project as a flag file (Flagwire's format or flagd's); the same state gives the same bytes",
      parameters: [
        queryParam(
          'format',
          'flagwire (default): a Flagwire flag file (FlagFile), which plan and apply read; flagd: a flagd flag-definition file',
        ),
        queryParam('env', "flagd's format of a multi-environment project: the environment to export (flagd has none)"),
      ],
      responses: {
        '200': {
          description:
            'The file (two-space JSON, a final newline). A group flag-wide cohort list and audience definitions are left out: the API neither reads nor sets them',
          content: { 'application/json': { schema: ref(FlagFile) } },
        },
        ...apiErrors([400, 401, 402, 429, 500]),
      },
    },
  },
  apiPlan: {
    method: 'post',
    pattern: '/api/v1/plan',
    via: 'management',
    auth: 'token',
    metric: 17,
    docs: {
      operationId: 'planFlags',
      tag: 'Management API',
      summary: 'What applying a flag file would change, field by field (a read token may plan)',
      parameters: [kPruneParam],
      request: { schema: FlagFile, required: true },
      responses: {
        '200': json(PlanResult, 'The plan (changed: false when the project matches the file)'),
        ...apiErrors([400, 401, 402, 413, 429, 500]),
      },
    },
  },
  apiApply: {
    method: 'post',
    pattern: '/api/v1/apply',
    via: 'management',
    auth: 'token',
    metric: 18,
    docs: {
      operationId: 'applyFlags',
      tag: 'Management API',
      summary: 'Make the project what a flag file says: all or nothing, in one transaction, each change audited as the token',
      parameters: [
        kPruneParam,
        queryParam('ifRevision', 'Refuse (409, nothing applied) unless the project is still at this revision, the one the plan showed'),
        queryParam(
          'ifPlan',
          "Refuse (409, nothing applied) unless the changes to make are those of the plan with this digest (the plan's `digest`): the plan that was reviewed",
        ),
      ],
      request: { schema: FlagFile, required: true },
      responses: {
        '200': json(PlanResult, 'Applied (changed: false when there was nothing to change); revision is the one it left'),
        ...apiErrors([400, 401, 402, 403, 409, 413, 429, 500, 503]),
      },
    },
  },
  // Release plans (src/release-plans): scheduled changes.
  apiScheduleFlag: {
    method: 'post',
    pattern: '/api/v1/flags/:flag_id/schedules',
    via: 'management',
    auth: 'token',
    metric: 19,
    docs: {
      operationId: 'scheduleFlagChange',
      tag: 'Management API',
      summary: 'Schedule a change of a flag: a PATCH body applied at a given time, audited as plan:<id>',
      parameters: [pathParam('flag_id', 'Flag id'), kEnvParam],
      request: { schema: ScheduleCreate, required: true },
      responses: {
        '201': json(ScheduledChangeBody, 'Scheduled'),
        ...apiErrors([400, 401, 402, 403, 404, 413, 429, 500, 503]),
      },
    },
  },
  apiListSchedules: {
    method: 'get',
    pattern: '/api/v1/schedules',
    via: 'management',
    auth: 'token',
    metric: 20,
    docs: {
      operationId: 'listSchedules',
      tag: 'Management API',
      summary: "The token's project's scheduled changes, pending and done, by due time, a page at a time",
      parameters: [...kPageParams, queryParam('status', 'pending: only the changes still to apply')],
      responses: { '200': json(ScheduleList, 'The scheduled changes'), ...apiErrors([400, 401, 402, 429, 500]) },
    },
  },
  apiCancelSchedule: {
    method: 'post',
    pattern: '/api/v1/schedules/:schedule_id/cancel',
    via: 'management',
    auth: 'token',
    metric: 21,
    docs: {
      operationId: 'cancelSchedule',
      tag: 'Management API',
      summary: 'Cancel a pending scheduled change',
      parameters: [pathParam('schedule_id', 'Scheduled change id')],
      responses: {
        '200': json(ScheduledChangeBody, 'Cancelled'),
        ...apiErrors([400, 401, 402, 403, 404, 429, 500, 503]),
      },
    },
  },
  // Release plans: progressive rollouts.
  apiStartRollout: {
    method: 'post',
    pattern: '/api/v1/flags/:flag_id/rollouts',
    via: 'management',
    auth: 'token',
    metric: 22,
    docs: {
      operationId: 'startRollout',
      tag: 'Management API',
      summary:
        "Start a progressive rollout of a flag's traffic percentage, or of its typed variants' weights: the first step now, each next one after its hold",
      parameters: [pathParam('flag_id', 'Flag id'), kEnvParam],
      request: { schema: RolloutCreate, required: true },
      responses: { '201': json(RolloutBody, 'Started'), ...apiErrors([400, 401, 402, 403, 404, 413, 429, 500, 503]) },
    },
  },
  apiListRollouts: {
    method: 'get',
    pattern: '/api/v1/rollouts',
    via: 'management',
    auth: 'token',
    metric: 23,
    docs: {
      operationId: 'listRollouts',
      tag: 'Management API',
      summary: "The token's project's rollouts, oldest first, a page at a time",
      parameters: kPageParams,
      responses: { '200': json(RolloutList, 'The rollouts'), ...apiErrors([400, 401, 402, 429, 500]) },
    },
  },
  apiActOnRollout: {
    method: 'post',
    pattern: '/api/v1/rollouts/:rollout_id/:action',
    via: 'management',
    auth: 'token',
    metric: 24,
    docs: {
      operationId: 'actOnRollout',
      tag: 'Management API',
      summary: 'Pause, resume, skip a step of, or roll back a rollout',
      parameters: [pathParam('rollout_id', 'Rollout id'), pathParam('action', 'pause, resume, skip or rollback')],
      responses: { '200': json(RolloutBody, 'Done'), ...apiErrors([400, 401, 402, 403, 404, 429, 500, 503]) },
    },
  },
  // Webhooks (src/webhooks).
  apiCreateWebhook: {
    method: 'post',
    pattern: '/api/v1/webhooks',
    via: 'management',
    auth: 'token',
    metric: 25,
    docs: {
      operationId: 'createWebhook',
      tag: 'Management API',
      summary:
        "Make a webhook of the token's project: every change of the events it names is POSTed to its URL, signed as Standard Webhooks says",
      request: { schema: WebhookCreate, required: true },
      responses: {
        '201': json(WebhookCreated, 'Made; its secret is shown only now'),
        ...apiErrors([400, 401, 402, 403, 413, 429, 500, 503]),
      },
    },
  },
  apiListWebhooks: {
    method: 'get',
    pattern: '/api/v1/webhooks',
    via: 'management',
    auth: 'token',
    metric: 26,
    docs: {
      operationId: 'listWebhooks',
      tag: 'Management API',
      summary: "The token's project's webhooks (without their secrets), oldest first",
      responses: { '200': json(WebhookList, 'The webhooks'), ...apiErrors([401, 402, 429, 500]) },
    },
  },
  apiDeleteWebhook: {
    method: 'post',
    pattern: '/api/v1/webhooks/:webhook_id/delete',
    via: 'management',
    auth: 'token',
    metric: 27,
    docs: {
      operationId: 'deleteWebhook',
      tag: 'Management API',
      summary: "Delete a webhook and its delivery log (a POST: the spec's CORS allows no DELETE)",
      parameters: [pathParam('webhook_id', 'Webhook id')],
      responses: { '200': json(WebhookDeleted, 'Deleted'), ...apiErrors([401, 402, 403, 404, 429, 500, 503]) },
    },
  },
  apiListDeliveries: {
    method: 'get',
    pattern: '/api/v1/webhooks/:webhook_id/deliveries',
    via: 'management',
    auth: 'token',
    metric: 28,
    docs: {
      operationId: 'listDeliveries',
      tag: 'Management API',
      summary: "A webhook's delivery log, newest first: status, attempts, the receiver's last answer and latency, the next try",
      parameters: [pathParam('webhook_id', 'Webhook id')],
      responses: { '200': json(DeliveryList, 'The deliveries'), ...apiErrors([401, 402, 404, 429, 500]) },
    },
  },
  apiRedeliver: {
    method: 'post',
    pattern: '/api/v1/deliveries/:delivery_id/redeliver',
    via: 'management',
    auth: 'token',
    metric: 29,
    docs: {
      operationId: 'redeliver',
      tag: 'Management API',
      summary: 'Send a delivery again, now: the same message (webhook-id and body), newly signed',
      parameters: [pathParam('delivery_id', 'Delivery id (msg_…)')],
      responses: { '200': json(DeliveryBody, 'Queued'), ...apiErrors([401, 402, 403, 404, 429, 500, 503]) },
    },
  },
  // Public, and a static route: uWS routes it here, not to the Management API's /api/v1/* entry.
  openApi: {
    method: 'get',
    pattern: '/api/v1/openapi.json',
    auth: 'none',
    metric: 12,
    docs: {
      operationId: 'openApi',
      tag: 'Service',
      summary: 'This document',
      responses: {
        '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } },
        ...kFramingError,
      },
    },
  },
  evaluateFlag: {
    method: 'get',
    pattern: '/v1/flags/:flag_id',
    auth: 'none',
    metric: 0,
    docs: {
      operationId: 'evaluateFlag',
      tag: 'Evaluation API',
      summary: 'Evaluate one flag',
      parameters: [pathParam('flag_id', 'Flag id'), ...kEvalParams],
      responses: {
        '200': json(EvalFlag, "The flag's value for this caller"),
        ...kEvalErrors,
        '403': json(ErrorBody, "Forbidden: the flag applies an audience and its organisation's plan has no audiences"),
      },
    },
  },
  evaluateProject: {
    method: 'get',
    pattern: '/v1/flags/project/:project_id',
    auth: 'none',
    metric: 1,
    docs: {
      operationId: 'evaluateProject',
      tag: 'Evaluation API',
      summary: 'Evaluate every flag of a project',
      parameters: [pathParam('project_id', 'Project id'), ...kEvalParams],
      responses: { '200': json(EvalFlagList, 'Every flag, in creation order'), ...kEvalErrors },
    },
  },
  stream: {
    method: 'get',
    pattern: '/v1/stream/project/:project_id',
    auth: 'none',
    metric: 8,
    docs: {
      operationId: 'streamProject',
      tag: 'Evaluation API',
      summary: 'Change stream (Server-Sent Events)',
      parameters: [
        pathParam('project_id', 'Project id'),
        queryParam('env', 'Only changes that affect this environment (multi-environment projects)'),
        kLastEventId,
      ],
      responses: {
        '200': {
          description:
            'First `ready` {seq}; then events `flag` {id, updatedAt}, `flag-deleted` {id}, `audience` {id, updatedAt}, each with ' +
            'the commit number as its id; `reset` {reason} when Last-Event-ID is beyond retention (docs/operations.md: Change stream); a comment ' +
            'heartbeat every 15 s',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        ...kStreamErrors,
      },
    },
  },
  ofrepStream: {
    method: 'get',
    pattern: '/ofrep/v1/stream/project/:project_id',
    auth: 'none',
    metric: 15,
    docs: {
      operationId: 'ofrepStreamProject',
      tag: 'OFREP',
      summary: "OFREP change events (ADR-0008), advertised in the bulk answer's eventStreams",
      parameters: [
        pathParam('project_id', 'Project id'),
        queryParam('env', 'Only changes that affect this environment (multi-environment projects)'),
        kLastEventId,
      ],
      responses: {
        '200': {
          description:
            'First `ready` {seq}; then, for every commit that changes the project (and environment), `message` ' +
            '{"type": "refetchEvaluation", "etag": "<configuration tag: the bulk ETag before its dash>"}; a comment heartbeat every 15 s',
          content: { 'text/event-stream': { schema: { type: 'string' } } },
        },
        ...kStreamErrors,
      },
    },
  },
  ofrepFlag: {
    method: 'post',
    pattern: '/ofrep/v1/evaluate/flags/:key',
    auth: 'none',
    metric: 2,
    docs: {
      operationId: 'ofrepEvaluateFlag',
      tag: 'OFREP',
      summary: 'OpenFeature Remote Evaluation Protocol: one flag',
      parameters: [pathParam('key', "Flag id; or, with X-Flagwire-Project, the flag's name in that project"), kProjectHeader],
      request: { schema: OfrepEvaluationRequest, required: false },
      responses: {
        '200': json(OfrepEvaluationSuccess, 'Evaluated'),
        '400': json(OfrepEvaluationFailure, 'PARSE_ERROR, INVALID_CONTEXT, TARGETING_KEY_MISSING or GENERAL'),
        '404': json(OfrepFlagNotFound, 'FLAG_NOT_FOUND'),
        ...kOfrepErrors,
      },
    },
  },
  ofrepBulk: {
    method: 'post',
    pattern: '/ofrep/v1/evaluate/flags',
    auth: 'none',
    metric: 3,
    docs: {
      operationId: 'ofrepEvaluateFlags',
      tag: 'OFREP',
      summary: 'OpenFeature Remote Evaluation Protocol: every flag of a project',
      parameters: [
        { ...kProjectHeader, required: true },
        { name: 'If-None-Match', in: 'header', schema: { type: 'string' }, description: 'ETag of a previous answer: 304 when unchanged' },
        queryParam(
          'flagConfigEtag',
          'Sent by providers after a refetchEvaluation event (ADR-0008); accepted and not needed: answers are always current',
        ),
        queryParam('flagConfigLastModified', 'Sent by providers after a change event (ADR-0008); accepted and not needed'),
      ],
      request: { schema: OfrepEvaluationRequest, required: false },
      responses: {
        '200': json(OfrepBulkSuccess, 'Evaluated', kEtag),
        '304': { description: 'Not modified: the If-None-Match ETag is still current', headers: kEtag },
        '400': json(OfrepBulkFailure, 'PARSE_ERROR, INVALID_CONTEXT or GENERAL (missing or unknown project)'),
        ...kOfrepErrors,
      },
    },
  },
  health: {
    method: 'get',
    pattern: '/health',
    auth: 'none',
    metric: 9,
    docs: {
      operationId: 'health',
      tag: 'Service',
      summary: 'Liveness: the process answers',
      responses: { '200': json(Health, 'Alive'), ...kFramingError },
    },
  },
  ready: {
    method: 'get',
    pattern: '/ready',
    auth: 'none',
    metric: 10,
    docs: {
      operationId: 'ready',
      tag: 'Service',
      summary: 'Readiness: the store and every eval worker answer (load balancers route on it)',
      responses: { '200': json(ReadinessBody, 'Ready to serve'), ...kFramingError, '503': json(ReadinessBody, 'Not ready (or stopping)') },
    },
  },
  metrics: {
    method: 'get',
    pattern: '/metrics',
    auth: 'none',
    metric: 11,
    docs: {
      operationId: 'metrics',
      tag: 'Service',
      summary: 'Prometheus metrics (absent with FLAGWIRE_METRICS=off)',
      responses: {
        '200': { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
        ...kFramingError,
      },
    },
  },
  docs: {
    method: 'get',
    pattern: '/docs',
    auth: 'none',
    metric: 13,
    docs: {
      operationId: 'docs',
      tag: 'Service',
      summary: "Error documentation, one anchor per error (the envelope's docs links)",
      responses: {
        '200': { description: 'Error documentation (one anchor per error)', content: { 'text/html': { schema: { type: 'string' } } } },
        ...kFramingError,
      },
    },
  },
  // Every CORS preflight, /api/v1 included (src/http/cors.ts).
  preflight: { method: 'options', pattern: '/*', auth: 'none', metric: null },
  // The Management API's entry: its routes above are dispatched from here; any other path under
  // /api/v1 is a 404 counted under this label.
  management: { method: 'any', pattern: '/api/v1/*', auth: 'token', metric: 7 },
  // The web console (src/web-console/routes.ts): same-origin pages and JSON endpoints, not a public API.
  consolePage: { method: 'get', pattern: '/console', auth: 'none', metric: null },
  consolePageSlash: { method: 'get', pattern: '/console/', auth: 'none', metric: null },
  consoleAsset: { method: 'get', pattern: '/console/assets/:file', auth: 'none', metric: null },
  consolePreflight: { method: 'options', pattern: '/console/*', auth: 'none', metric: null },
  consoleApi: { method: 'any', pattern: '/console/api/*', auth: 'session', metric: null },
  // What a browser asks of the origin itself: `/` typed in the address bar (HTML: to the console; an API
  // client keeps the catch-all's 404, counted as unmatched) and the tab's icon (docs/decisions.md).
  browserRoot: { method: 'get', pattern: '/', auth: 'none', metric: null },
  favicon: { method: 'get', pattern: '/favicon.ico', auth: 'none', metric: null },
  // Test hooks (src/server/test-hooks.ts), with FLAGWIRE_TEST_HOOKS=1 only.
  testRoutes: { method: 'get', pattern: '/__test/routes', auth: 'test', metric: null },
  testClock: { method: 'post', pattern: '/__test/clock', auth: 'test', metric: null },
  testFault: { method: 'post', pattern: '/__test/fault', auth: 'test', metric: null },
  testFlush: { method: 'post', pattern: '/__test/flush', auth: 'test', metric: null },
  testWriterIdle: { method: 'post', pattern: '/__test/writer-idle', auth: 'test', metric: null },
  // Last: every request no route above matched.
  unmatched: { method: 'any', pattern: '/*', auth: 'none', metric: 14, label: 'unmatched' },
} as const satisfies Record<string, RouteDeclaration>;

export type RouteName = keyof typeof kRoutes;
export const kRouteNames = Object.keys(kRoutes) as RouteName[];
export type ManagementRouteName = { [K in RouteName]: (typeof kRoutes)[K] extends { via: 'management' } ? K : never }[RouteName];

/** `/v1/flags/:flag_id` in OpenAPI's form: `/v1/flags/{flag_id}`. */
export function openApiPath(pattern: string): string {
  return pattern.replace(/:([a-z_]+)/g, '{$1}');
}

/** A counted route's metrics label. */
export function routeLabel(route: RouteDeclaration): string {
  return route.label ?? openApiPath(route.pattern);
}

export type RouteHandler = (res: HttpResponse, req: HttpRequest) => void;

/**
 * Registers each handler at its route's method and pattern, in the order given (uWS prefers a static
 * segment to a parameter and a parameter to a wildcard whatever the order).
 */
export function registerRoutes(app: TemplatedApp, handlers: { readonly [K in RouteName]?: RouteHandler }): void {
  for (const [name, handler] of Object.entries(handlers) as [RouteName, RouteHandler][]) {
    const route: RouteDeclaration = kRoutes[name];
    if (route.via === 'management') throw new Error(`${name} is dispatched by the Management API, not registered on uWS`);
    app[route.method](route.pattern, handler);
  }
}

// The OpenAPI 3.1 document of every route, served at GET /api/v1/openapi.json. Built once, from the
// TypeBox values the code validates with or builds its responses to, each beside that code (request
// bodies: src/model/schemas.ts; representations: src/api/representation.ts; error bodies: src/errors.ts;
// evaluation bodies: src/eval/bodies.ts; OFREP: src/ofrep/schemas.ts; /health, /ready: src/server/);
// error statuses and titles come from the error table (src/errors.ts). Nothing here is a second,
// hand-written copy of a schema.
import type { TSchema } from '@sinclair/typebox';
import { FlagList, FlagRepresentation, PatchResult, TokenDescription } from '../api/representation.js';
import { ErrorBody, ErrorEnvelope, kConsoleOnlyErrors, kErrors, type ErrorCode } from '../errors.js';
import { EvalFlag, EvalFlagList } from '../eval/bodies.js';
import { FlagCreate, FlagPatch } from '../model/schemas.js';
import {
  OfrepBulkFailure,
  OfrepBulkSuccess,
  OfrepEvaluationFailure,
  OfrepEvaluationRequest,
  OfrepEvaluationSuccess,
  OfrepFlagNotFound,
  OfrepGeneralError,
} from '../ofrep/schemas.js';
import { Health, ReadinessBody } from '../model/probes.js';

const kComponents: Record<string, TSchema> = {
  FlagCreate,
  FlagPatch,
  FlagRepresentation,
  FlagList,
  PatchResult,
  TokenDescription,
  ErrorEnvelope,
  EvalError: ErrorBody,
  EvalFlag,
  EvalFlagList,
  Health,
  Readiness: ReadinessBody,
  OfrepEvaluationRequest,
  OfrepEvaluationSuccess,
  OfrepEvaluationFailure,
  OfrepFlagNotFound,
  OfrepBulkSuccess,
  OfrepBulkFailure,
  OfrepGeneralError,
};
type ComponentName = keyof typeof kComponents;

const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: ComponentName, description: string, headers?: object) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: ref(name) } },
});

/** The titles of every error code with this status (the table in src/errors.ts), for a response's description. */
function titles(status: number, only?: readonly ErrorCode[]): string {
  const codes = (Object.keys(kErrors) as ErrorCode[]).filter(
    (c) => kErrors[c].status === status && !kConsoleOnlyErrors.has(c) && (!only || only.includes(c)),
  );
  return codes.map((c) => kErrors[c].title).join('; ');
}

/** Management API error responses (envelope), for the statuses of one operation. */
function apiErrors(statuses: readonly number[], only?: readonly ErrorCode[]): Record<string, object> {
  const out: Record<string, object> = {};
  for (const status of statuses) {
    if (status === 429) {
      out['429'] = {
        description: `Too Many Requests (plain text, Retry-After: 60) over the per-IP rate limit; or, in the envelope, ${titles(429)}`,
        headers: { 'Retry-After': { schema: { type: 'string' }, description: 'Seconds (rate limit only)' } },
        content: { 'application/json': { schema: ref('ErrorEnvelope') }, 'text/plain': { schema: { type: 'string' } } },
      };
      continue;
    }
    if (status === 503) {
      out['503'] = json('ErrorEnvelope', titles(503, only), {
        'Retry-After': {
          schema: { type: 'string' },
          description: `Seconds (${kErrors.STORE_BUSY.title}: the write timeout, rounded up; ${kErrors.SERVER_BUSY.title} and ${kErrors.STORE_UNAVAILABLE.title}: 1)`,
        },
      });
      continue;
    }
    out[String(status)] = json('ErrorEnvelope', titles(status, only) || 'Error');
  }
  return out;
}

/**
 * The one 4xx a service route can answer: every route refuses doubtful framing (src/http/framing.ts)
 * before it runs.
 */
const kFramingError = {
  '400': json(
    'ErrorEnvelope',
    'Invalid request: conflicting Content-Length headers or a Transfer-Encoding other than chunked (the connection is closed)',
  ),
};

const kBearer = [{ bearerAuth: [] }];
const pathParam = (name: string, description: string) => ({ name, in: 'path', required: true, schema: { type: 'string' }, description });
const queryParam = (name: string, description: string) => ({ name, in: 'query', required: false, schema: { type: 'string' }, description });
const kEnvParam = queryParam('env', 'Environment name (multi-environment projects)');

const kEvalParams = [
  queryParam('cohort', "The caller's cohort: a listed cohort turns the flag on; without targetingKey it is the bucketing key"),
  queryParam('env', 'Environment name: required for flags of a multi-environment project, ignored otherwise'),
  queryParam('targetingKey', 'Sticky bucketing key'),
  {
    name: 'attributes',
    in: 'query',
    required: false,
    style: 'form',
    explode: true,
    description: 'Every other query parameter is an attribute for audience matching (exact, case-sensitive)',
    schema: { type: 'object', additionalProperties: { type: 'string' } },
  },
];
const kEvalErrors = {
  '400': json('EvalError', 'Invalid request: a query parameter cannot be decoded'),
  '404': json('EvalError', 'Not found: unknown id; a group flag or multi-environment project without a valid env'),
  '500': json('EvalError', 'Internal server error'),
  '503': json('EvalError', 'Service unavailable: the evaluation queue is full or the server is stopping (Retry-After: 1)'),
};
const kProjectHeader = {
  name: 'X-Flagwire-Project',
  in: 'header',
  schema: { type: 'string' },
  description:
    'Project id. Required on the bulk route; on the single-flag route it scopes the key to that project, and lets the key be a flag name.',
};
const kLastEventId = {
  name: 'Last-Event-ID',
  in: 'header',
  schema: { type: 'string' },
  description:
    'Sent by a reconnecting EventSource: the events missed since that commit number, within the retention (README: Change stream)',
};
const kStreamErrors = {
  '404': json('EvalError', 'Unknown project, or unknown env of a multi-environment project'),
  '503': json('EvalError', 'Too many open streams, or the server is stopping'),
};
const kEtag = { ETag: { schema: { type: 'string' }, description: "Covers the project's flag configuration and these results" } };
const kOfrepErrors = {
  '413': json('OfrepGeneralError', 'The body is over 1 MiB'),
  '500': json('OfrepGeneralError', 'Internal server error'),
  '503': json(
    'OfrepGeneralError',
    'The evaluation queue is full or the server is stopping, or the server holds as many request bodies as it allows (the body is not read and the connection is closed) (Retry-After: 1)',
  ),
};

export function buildOpenApiDocument({ version, license }: { version: string; license: string }): object {
  const paths = {
    '/api/v1/token': {
      get: {
        operationId: 'getToken',
        tags: ['Management API'],
        summary: 'Describe the calling token',
        security: kBearer,
        responses: { '200': json('TokenDescription', 'The token'), ...apiErrors([400, 401, 402, 429, 500]) },
      },
    },
    '/api/v1/flags': {
      get: {
        operationId: 'listFlags',
        tags: ['Management API'],
        summary: "Every flag of the token's project",
        security: kBearer,
        parameters: [kEnvParam, queryParam('name', 'Only the flag with this name')],
        responses: {
          '200': json('FlagList', 'The flags'),
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
      post: {
        operationId: 'createFlag',
        tags: ['Management API'],
        summary: 'Create a flag',
        security: kBearer,
        requestBody: { required: true, content: { 'application/json': { schema: ref('FlagCreate') } } },
        responses: {
          '201': json('FlagRepresentation', 'Created (a group flag in environments form)'),
          ...apiErrors([400, 401, 402, 403, 413, 429, 500, 503]),
        },
      },
    },
    '/api/v1/flags/{flag_id}': {
      get: {
        operationId: 'getFlag',
        tags: ['Management API'],
        summary: 'One flag',
        security: kBearer,
        parameters: [pathParam('flag_id', 'Flag id'), kEnvParam],
        responses: { '200': json('FlagRepresentation', 'The flag'), ...apiErrors([400, 401, 402, 403, 404, 429, 500]) },
      },
      patch: {
        operationId: 'patchFlag',
        tags: ['Management API'],
        summary: "Change a flag's state (merge patch)",
        security: kBearer,
        parameters: [pathParam('flag_id', 'Flag id'), kEnvParam],
        requestBody: { required: true, content: { 'application/json': { schema: ref('FlagPatch') } } },
        responses: {
          '200': json('PatchResult', 'Applied (or nothing to change)'),
          ...apiErrors([400, 401, 402, 403, 404, 413, 429, 500, 503]),
        },
      },
    },
    '/api/v1/openapi.json': {
      get: {
        operationId: 'openApi',
        tags: ['Service'],
        summary: 'This document',
        security: [],
        responses: {
          '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': { schema: { type: 'object' } } } },
          ...kFramingError,
        },
      },
    },
    '/v1/flags/{flag_id}': {
      get: {
        operationId: 'evaluateFlag',
        tags: ['Evaluation API'],
        summary: 'Evaluate one flag',
        security: [],
        parameters: [pathParam('flag_id', 'Flag id'), ...kEvalParams],
        responses: {
          '200': json('EvalFlag', "The flag's value for this caller"),
          ...kEvalErrors,
          '403': json('EvalError', "Forbidden: the flag applies an audience and its organisation's plan has no audiences"),
        },
      },
    },
    '/v1/flags/project/{project_id}': {
      get: {
        operationId: 'evaluateProject',
        tags: ['Evaluation API'],
        summary: 'Evaluate every flag of a project',
        security: [],
        parameters: [pathParam('project_id', 'Project id'), ...kEvalParams],
        responses: { '200': json('EvalFlagList', 'Every flag, in creation order'), ...kEvalErrors },
      },
    },
    '/v1/stream/project/{project_id}': {
      get: {
        operationId: 'streamProject',
        tags: ['Evaluation API'],
        summary: 'Change stream (Server-Sent Events)',
        security: [],
        parameters: [
          pathParam('project_id', 'Project id'),
          queryParam('env', 'Only changes that affect this environment (multi-environment projects)'),
          kLastEventId,
        ],
        responses: {
          '200': {
            description:
              'First `ready` {seq}; then events `flag` {id, updatedAt}, `flag-deleted` {id}, `audience` {id, updatedAt}, each with ' +
              'the commit number as its id; `reset` {reason} when Last-Event-ID is beyond retention (README: Change stream); a comment ' +
              'heartbeat every 15 s',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...kStreamErrors,
        },
      },
    },
    '/ofrep/v1/stream/project/{project_id}': {
      get: {
        operationId: 'ofrepStreamProject',
        tags: ['OFREP'],
        summary: "OFREP change events (ADR-0008), advertised in the bulk answer's eventStreams",
        security: [],
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
    '/ofrep/v1/evaluate/flags/{key}': {
      post: {
        operationId: 'ofrepEvaluateFlag',
        tags: ['OFREP'],
        summary: 'OpenFeature Remote Evaluation Protocol: one flag',
        security: [],
        parameters: [pathParam('key', "Flag id; or, with X-Flagwire-Project, the flag's name in that project"), kProjectHeader],
        requestBody: { required: false, content: { 'application/json': { schema: ref('OfrepEvaluationRequest') } } },
        responses: {
          '200': json('OfrepEvaluationSuccess', 'Evaluated'),
          '400': json('OfrepEvaluationFailure', 'PARSE_ERROR, INVALID_CONTEXT, TARGETING_KEY_MISSING or GENERAL'),
          '404': json('OfrepFlagNotFound', 'FLAG_NOT_FOUND'),
          ...kOfrepErrors,
        },
      },
    },
    '/ofrep/v1/evaluate/flags': {
      post: {
        operationId: 'ofrepEvaluateFlags',
        tags: ['OFREP'],
        summary: 'OpenFeature Remote Evaluation Protocol: every flag of a project',
        security: [],
        parameters: [
          { ...kProjectHeader, required: true },
          { name: 'If-None-Match', in: 'header', schema: { type: 'string' }, description: 'ETag of a previous answer: 304 when unchanged' },
          queryParam(
            'flagConfigEtag',
            'Sent by providers after a refetchEvaluation event (ADR-0008); accepted and not needed: answers are always current',
          ),
          queryParam('flagConfigLastModified', 'Sent by providers after a change event (ADR-0008); accepted and not needed'),
        ],
        requestBody: { required: false, content: { 'application/json': { schema: ref('OfrepEvaluationRequest') } } },
        responses: {
          '200': json('OfrepBulkSuccess', 'Evaluated', kEtag),
          '304': { description: 'Not modified: the If-None-Match ETag is still current', headers: kEtag },
          '400': json('OfrepBulkFailure', 'PARSE_ERROR, INVALID_CONTEXT or GENERAL (missing or unknown project)'),
          ...kOfrepErrors,
        },
      },
    },
    '/health': {
      get: {
        operationId: 'health',
        tags: ['Service'],
        summary: 'Liveness: the process answers',
        security: [],
        responses: { '200': json('Health', 'Alive'), ...kFramingError },
      },
    },
    '/ready': {
      get: {
        operationId: 'ready',
        tags: ['Service'],
        summary: 'Readiness: the store and every eval worker answer (load balancers route on it)',
        security: [],
        responses: { '200': json('Readiness', 'Ready to serve'), ...kFramingError, '503': json('Readiness', 'Not ready (or stopping)') },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        tags: ['Service'],
        summary: 'Prometheus metrics (absent with FLAGWIRE_METRICS=off)',
        security: [],
        responses: {
          '200': { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
          ...kFramingError,
        },
      },
    },
    '/docs': {
      get: {
        operationId: 'docs',
        tags: ['Service'],
        summary: "Error documentation, one anchor per error (the envelope's docs links)",
        security: [],
        responses: {
          '200': { description: 'Error documentation (one anchor per error)', content: { 'text/html': { schema: { type: 'string' } } } },
          ...kFramingError,
        },
      },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Flagwire',
      version,
      description:
        'Self-hosted feature flags: the token-authenticated Management API, the credential-free Evaluation API, ' +
        'OpenFeature Remote Evaluation (OFREP), the change stream, and service endpoints.',
      // package.json's license. UNLICENSED (no licence granted) has no SPDX identifier; LicenseRef- is
      // SPDX's form for a licence not on its list.
      license: { name: license, identifier: license === 'UNLICENSED' ? 'LicenseRef-UNLICENSED' : license },
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    // Relative: the server that serves this document (each node of a deployment serves its own).
    servers: [{ url: '/', description: 'The Flagwire server that serves this document' }],
    tags: [
      { name: 'Management API', description: "Flags of the token's project, with a bearer token (Teams and Enterprise plans)" },
      { name: 'Evaluation API', description: 'Credential-free evaluation of one flag or a whole project, and the change stream' },
      { name: 'OFREP', description: "OpenFeature Remote Evaluation Protocol, for the OpenFeature SDKs' OFREP providers" },
      { name: 'Service', description: 'Liveness, readiness, metrics, this document and the error documentation' },
    ],
    paths,
    components: {
      schemas: JSON.parse(JSON.stringify(kComponents)) as object,
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'A project token: fw_ followed by 40 characters' } },
    },
  };
}

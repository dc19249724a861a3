// The parts of the OpenAPI document the route declarations (src/all-routes.ts) are written with:
// the service's own components (the TypeBox values the code validates with or builds its responses to,
// each beside that code: error bodies, src/errors.ts; evaluation bodies, src/model/eval-shapes.ts; OFREP,
// src/model/ofrep-schemas.ts; /health, /ready, src/model/probes.ts; a capability declares its own, as
// flags do their request bodies and representations: `schemas` in its capability.ts),
// references to components, responses and parameters shared by several routes, and the error responses,
// whose statuses and titles come from the error table (src/errors.ts).
import type { TSchema } from '../typebox.js';
import { ErrorBody, ErrorEnvelope } from '../error-schemas.js';
import { kConsoleOnlyErrors, kErrors, type ErrorCode } from '../errors.js';
import { kMinRevisionName, kRevisionHeader } from '../http/revisions.js';
import { EvalFlag, EvalFlagList } from '../model/eval-shapes.js';
import {
  OfrepBulkFailure,
  OfrepBulkSuccess,
  OfrepEvaluationFailure,
  OfrepEvaluationRequest,
  OfrepEvaluationSuccess,
  OfrepFlagNotFound,
  OfrepGeneralError,
} from '../model/ofrep-schemas.js';
import { Health, ReadinessBody } from '../model/probes.js';

/** The service's own components; the document adds each capability's (`schemas`: src/openapi/document.ts). */
export const kServiceComponents: Readonly<Record<string, TSchema>> = {
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

/**
 * A route's reference to a component: the schema itself, written as `{"$ref": "#/components/schemas/NAME"}`
 * when the document is built, under the name the service or a capability declares it by. A schema no one
 * declares fails the document's build (test/openapi/openapi.test.ts), never a process at load.
 */
export class SchemaRef {
  /** The schema, or the name a capability declares it under (one this module does not import). */
  constructor(readonly schema: TSchema | string) {}
}

/** A reference to `schema`, one of the components. */
export function ref(schema: TSchema): SchemaRef {
  return new SchemaRef(schema);
}

/**
 * The documented answer of a write that an approval policy may hold as a change request
 * (docs/approvals.md): nothing applied; the request holds it until it is approved. Its body is the
 * approvals capability's ChangeRequested component.
 */
export const changeRequested = () => ({
  '202': {
    description: 'Not applied: the environment it changes is guarded, and a change request now holds the change (docs/approvals.md)',
    content: { 'application/json': { schema: new SchemaRef('ChangeRequested') } },
  },
});

/** A JSON response whose body is `schema`. */
export const json = (schema: TSchema, description: string, headers?: object) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: ref(schema) } },
});

/** The titles of every error code with this status (the table in src/errors.ts), for a response's description. */
function titles(status: number, only?: readonly ErrorCode[], except: readonly ErrorCode[] = []): string {
  const codes = (Object.keys(kErrors) as ErrorCode[]).filter(
    (c) => kErrors[c].status === status && !kConsoleOnlyErrors.has(c) && (!only || only.includes(c)) && !except.includes(c),
  );
  return codes.map((c) => kErrors[c].title).join('; ');
}

/**
 * The error responses of one operation, for its statuses (the titles of `only`'s codes, or of every
 * code of each status), whose JSON bodies are `schema`: what errorResponses derives for a body shape.
 */
export type ErrorResponses = (statuses: readonly number[], only?: readonly ErrorCode[]) => Record<string, object>;

/**
 * The error responses of the routes whose refusals have the body `schema`: the envelope's (apiErrors),
 * or a route set's own (ManagementRouteSpec.errorBody), whose rate limit answers in that body too
 * (`plainRateLimit` false). Derived once per shape, at load.
 */
export function errorResponses(schema: TSchema, plainRateLimit = true): ErrorResponses {
  return (statuses, only) => {
    const out: Record<string, object> = {};
    for (const status of statuses) {
      if (status === 429) {
        const retryAfter = { 'Retry-After': { schema: { type: 'string' }, description: 'Seconds (rate limit only)' } };
        out['429'] = plainRateLimit
          ? {
              description: `${kErrors.TOO_MANY_REQUESTS.title} (plain text, Retry-After: 60) over the per-IP rate limit; or, in JSON, ${titles(429, only, ['TOO_MANY_REQUESTS'])}`,
              headers: retryAfter,
              content: { 'application/json': { schema: ref(schema) }, 'text/plain': { schema: { type: 'string' } } },
            }
          : json(schema, `${titles(429, only)} (Retry-After: 60 over the per-IP rate limit)`, retryAfter);
        continue;
      }
      if (status === 503) {
        out['503'] = json(schema, titles(503, only), {
          'Retry-After': {
            schema: { type: 'string' },
            description: `Seconds (${kErrors.STORE_BUSY.title}: the write timeout, rounded up; ${kErrors.SERVER_BUSY.title}, ${kErrors.STORE_UNAVAILABLE.title} and ${kErrors.REVISION_NOT_REACHED.title}: 1)`,
          },
        });
        continue;
      }
      out[String(status)] = json(schema, titles(status, only) || 'Error');
    }
    return out;
  };
}

/** Management API error responses (envelope), for the statuses of one operation. */
export const apiErrors: ErrorResponses = errorResponses(ErrorEnvelope);

/**
 * The one 4xx a service route can answer: every route refuses doubtful framing (src/http/framing.ts)
 * before it runs.
 */
export const kFramingError = {
  '400': json(
    ErrorEnvelope,
    'Invalid request: conflicting Content-Length headers or a Transfer-Encoding other than chunked (the connection is closed)',
  ),
};

export const kBearer = [{ bearerAuth: [] }];
/** A client key's security requirement (routes whose auth is `clientKey`). */
export const kClientKeyAuth = [{ clientKeyAuth: [] }];
export const pathParam = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description,
});
export const queryParam = (name: string, description: string) => ({
  name,
  in: 'query',
  required: false,
  schema: { type: 'string' },
  description,
});
export const kEnvParam = queryParam('env', 'Environment name (multi-environment projects)');
/** A list read a page at a time (docs/release-plans.md#lists-a-page-at-a-time). */
export const kPageParams = [
  queryParam('limit', 'Entries per page, 1 to 500 (default 100); past its first entry a page stops at 4 MiB'),
  queryParam('after', "Where this page starts: the previous page's next"),
];

export const kEvalParams = [
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
export const kEvalErrors = {
  '400': json(ErrorBody, `Invalid request: a query parameter cannot be decoded, or ${kMinRevisionName} is not a revision`),
  '404': json(ErrorBody, 'Not found: unknown id; a group flag or multi-environment project without a valid env'),
  '500': json(ErrorBody, 'Internal server error'),
  '503': json(
    ErrorBody,
    `Service unavailable: the evaluation queue is full or the server is stopping; or ${kErrors.REVISION_NOT_REACHED.title}: this node's copy did not reach the ${kMinRevisionName} asked for within the wait (Retry-After: 1)`,
  ),
};
export const kProjectHeader = {
  name: 'X-Flagwire-Project',
  in: 'header',
  schema: { type: 'string' },
  description:
    'Project id. Required on the bulk route; on the single-flag route it scopes the key to that project, and lets the key be a flag name.',
};
export const kLastEventId = {
  name: 'Last-Event-ID',
  in: 'header',
  schema: { type: 'string' },
  description:
    'Sent by a reconnecting EventSource: the events missed since that commit number, within the retention (docs/operations.md: Change stream)',
};
export const kStreamErrors = {
  '404': json(ErrorBody, 'Unknown project, or unknown env of a multi-environment project'),
  '503': json(ErrorBody, 'Too many open streams, or the server is stopping'),
};
export const kEtag = { ETag: { schema: { type: 'string' }, description: "Covers the project's flag configuration and these results" } };
export const kOfrepErrors = {
  '413': json(OfrepGeneralError, 'The body is larger than any context within the bound takes (docs/operations.md: Evaluation work)'),
  '429': json(OfrepGeneralError, "The client address's evaluation body bytes per second are spent; the body is not read (Retry-After: 1)"),
  '500': json(OfrepGeneralError, 'Internal server error'),
  '503': json(
    OfrepGeneralError,
    `The evaluation queue is full or the server is stopping, or the request's batch did not come back in time, or the server holds as many request bodies as it allows (the body is not read and the connection is closed), or this node's copy did not reach the ${kMinRevisionName} asked for within the wait (Retry-After: 1)`,
  ),
};

/** Flagwire-Min-Revision, on every Management API, Evaluation API and OFREP operation (src/openapi/document.ts). */
export const kMinRevisionParam = {
  name: kMinRevisionName,
  in: 'header',
  required: false,
  schema: { type: 'string', pattern: '^[0-9]{1,15}$' },
  description:
    "Answer at this store revision or a later one (read-your-writes across nodes: a Flagwire-Revision another node answered with). Served once this node's copy has it; 503 with Retry-After when it does not within FLAGWIRE_MIN_REVISION_WAIT_MS (2 s by default); 400 when it is not a whole number (docs/api.md: Revisions)",
};

/** Flagwire-Revision, on every response of those operations (src/openapi/document.ts). */
export const kRevisionResponseHeader = {
  [kRevisionHeader]: {
    schema: { type: 'string', pattern: '^[0-9]+$' },
    description:
      "The store revision the answer was computed at: a write's, the one it committed at; an error's or a refusal's, this node's when it answered (docs/api.md: Revisions)",
  },
};

/** `prune` of plan and apply: true also deletes the flags the file does not name. */
export const kPruneParam = {
  name: 'prune',
  in: 'query',
  required: false,
  schema: { type: 'string', enum: ['true', 'false'] },
  description: 'true: also delete the flags of the project the file does not name (deleting is console-only: apply refuses it with 403)',
};

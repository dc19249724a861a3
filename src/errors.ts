// Every error Flagwire can report, in one table: HTTP status, the spec's title, and the anchor of the
// section on the docs page that explains it. Code throws `new FlagwireError(code, detail)`; the API
// renders `{error, detail, docs}` from it and the console renders `{error, detail}`. Both bodies are
// TypeBox values (error-schemas.ts: the OpenAPI document's schemas) whose Static types the render
// functions return.
import type { ErrorBody, ErrorEnvelope } from './error-schemas.js';

export const kErrors = {
  INVALID_REQUEST: { status: 400, title: 'Invalid request', anchor: 'invalid-request' },
  MISSING_TOKEN: { status: 401, title: 'Missing bearer token', anchor: 'missing-bearer-token' },
  MALFORMED_TOKEN: { status: 401, title: 'Malformed bearer token', anchor: 'malformed-bearer-token' },
  UNKNOWN_TOKEN: { status: 401, title: 'Invalid token', anchor: 'invalid-token' },
  TOKEN_REVOKED: { status: 401, title: 'Token revoked', anchor: 'token-revoked' },
  TOKEN_EXPIRED: { status: 401, title: 'Token expired', anchor: 'token-expired' },
  PLAN_REQUIRED: { status: 402, title: 'Plan does not include the Management API', anchor: 'plan-required' },
  INSUFFICIENT_PERMISSION: { status: 403, title: 'Insufficient permission', anchor: 'insufficient-permission' },
  ENVIRONMENT_NOT_PERMITTED: { status: 403, title: 'Environment not permitted', anchor: 'environment-not-permitted' },
  FORBIDDEN: { status: 403, title: 'Forbidden', anchor: 'forbidden' },
  NOT_FOUND: { status: 404, title: 'Not found', anchor: 'not-found' },
  REVISION_CONFLICT: { status: 409, title: 'Revision conflict', anchor: 'revision-conflict' },
  PLAN_CONFLICT: { status: 409, title: 'Plan changed', anchor: 'plan-changed' },
  RELAY_READ_ONLY: { status: 409, title: 'Read-only relay', anchor: 'read-only-relay' },
  APPROVAL_REQUIRED: { status: 409, title: 'Approval required', anchor: 'approval-required' },
  REQUEST_CONFLICT: { status: 409, title: 'Change request out of date', anchor: 'change-request-out-of-date' },
  REQUEST_CHANGED: { status: 409, title: 'Change request changed', anchor: 'change-request-changed' },
  PRECONDITION_FAILED: { status: 412, title: 'Precondition failed', anchor: 'precondition-failed' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Request body too large', anchor: 'payload-too-large' },
  TOO_MANY_REQUESTS: { status: 429, title: 'Too many requests', anchor: 'too-many-requests' },
  TOO_MANY_AUTH_FAILURES: { status: 429, title: 'Too many failed authentication attempts', anchor: 'too-many-requests' },
  TOO_MANY_EVENTS: { status: 429, title: 'Too many events', anchor: 'too-many-events' },
  TOO_MANY_REPORTS: { status: 429, title: 'Too many reports', anchor: 'too-many-reports' },
  EVENT_STORAGE_FULL: { status: 429, title: 'Event storage full', anchor: 'event-storage-full' },
  INTERNAL: { status: 500, title: 'Internal server error', anchor: 'internal-error' },
  STORE_UNAVAILABLE: { status: 503, title: 'Storage unavailable', anchor: 'storage-unavailable' },
  STORE_BUSY: { status: 503, title: 'Storage busy', anchor: 'storage-busy' },
  SERVER_BUSY: { status: 503, title: 'Server busy', anchor: 'server-busy' },
  REVISION_NOT_REACHED: { status: 503, title: 'Revision not reached', anchor: 'revision-not-reached' },
  NOT_SIGNED_IN: { status: 401, title: 'Not signed in', anchor: 'not-signed-in' },
  SIGN_IN_FAILED: { status: 401, title: 'Sign-in failed', anchor: 'sign-in-failed' },
  CROSS_SITE_REQUEST: { status: 403, title: 'Cross-site request refused', anchor: 'cross-site-request' },
} as const;

export type ErrorCode = keyof typeof kErrors;

/** Errors only the web console's endpoints (/console/api) answer: never a Management API response. */
export const kConsoleOnlyErrors: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['NOT_SIGNED_IN', 'SIGN_IN_FAILED', 'CROSS_SITE_REQUEST']);

export class FlagwireError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;

  /** `options.cause`: the underlying error, for the log (never shown to a client). */
  constructor(code: ErrorCode, detail: string, options?: ErrorOptions) {
    super(`${kErrors[code].title}: ${detail}`, options);
    this.name = 'FlagwireError';
    this.code = code;
    this.detail = detail;
  }

  get status(): number {
    return kErrors[this.code].status;
  }

  get title(): string {
    return kErrors[this.code].title;
  }
}

/** Plain data form of an error: what crosses a thread boundary (structured clone drops classes). */
export interface ErrorData {
  code: ErrorCode;
  detail: string;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(kErrors, value);
}

export function toErrorData(err: unknown): ErrorData {
  if (err instanceof FlagwireError) return { code: err.code, detail: err.detail };
  return { code: 'INTERNAL', detail: 'An unexpected error occurred; it has been logged.' };
}

/**
 * A handler's error as the answer's: a FlagwireError as it is; anything else (a bug) is given to
 * `logUnexpected` and answered as INTERNAL, its text never shown to the client.
 */
export function answerableError(err: unknown, logUnexpected: (err: unknown) => void): FlagwireError {
  if (err instanceof FlagwireError) return err;
  logUnexpected(err);
  return new FlagwireError('INTERNAL', 'An unexpected error occurred; it has been logged. Retry, and report it if it persists.');
}

/**
 * The Retry-After (seconds) of a refusal worth retrying, or null. Storage busy: the writer waited the
 * whole write timeout for the lock, and asking again sooner would most likely wait just as long.
 * Server busy: the body budget and the password checks free as requests are answered. Storage
 * unavailable (PostgreSQL unreachable, a failed commit): worth a retry within seconds. Revision not
 * reached: this node's copy is behind (src/http/revisions.ts); it follows within milliseconds normally.
 * Too many reports: the report limit's window (src/unleash/report-rate.ts), after which a refused
 * project's report is always taken (src/http/rate-limit.ts).
 */
export function retryAfterSeconds(error: FlagwireError, writeTimeoutMs: number): number | null {
  if (error.code === 'STORE_BUSY') return Math.ceil(writeTimeoutMs / 1000);
  if (error.code === 'TOO_MANY_REPORTS') return 60;
  return error.code === 'SERVER_BUSY' || error.code === 'STORE_UNAVAILABLE' || error.code === 'REVISION_NOT_REACHED' ? 1 : null;
}

/**
 * A write refused because PostgreSQL, the system of record, did not answer within the write timeout
 * (hung, unreachable, or its revision lock held that long by another node's write). One text for the
 * writer's client (a change still waiting at its deadline) and the writer (a transaction it cut off
 * before its COMMIT was sent): in both, nothing was changed.
 */
export function postgresTimeoutError(writeTimeoutMs: number): FlagwireError {
  return new FlagwireError(
    'STORE_UNAVAILABLE',
    `PostgreSQL, the system of record, did not answer within the write timeout (${writeTimeoutMs} ms); nothing was changed, and the change will not be applied later. Retry shortly.`,
  );
}

/**
 * A relay's refusal of every change and of the console (docs/decisions.md: the relay), the same from the
 * Management API, the web console and its writer: it names where changes go.
 */
export function relayReadOnlyError(upstreamUrl: string): FlagwireError {
  return new FlagwireError('RELAY_READ_ONLY', `This node is a read-only relay of ${upstreamUrl}; send changes there`);
}

export function fromErrorData(data: ErrorData): FlagwireError {
  return new FlagwireError(isErrorCode(data.code) ? data.code : 'INTERNAL', data.detail);
}

/** The link to the section of the docs page (`docsUrl`) that explains `err`: every error body's docs. */
export function errorDocs(err: FlagwireError, docsUrl: string): string {
  return `${docsUrl}#${kErrors[err.code].anchor}`;
}

/** `{error, detail, docs}`: the Management API envelope. */
export function errorEnvelope(err: FlagwireError, docsUrl: string): ErrorEnvelope {
  return { error: err.title, detail: err.detail, docs: errorDocs(err, docsUrl) };
}

/** `{error, detail}`: the console's and the Evaluation API's error body. */
export function errorBody(err: FlagwireError): ErrorBody {
  return { error: err.title, detail: err.detail };
}

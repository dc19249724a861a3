// The contract of a Management API route's handler: what it is given (the request as read, the token's
// authorisation, the node's parts) and what it answers. Each capability declares its routes with their
// handlers (its routes.ts; src/capability/capability.ts), and the request pipeline (src/api/management.ts) runs
// the matched route's once the token is authorised. A read answers 200 with what it returns; a write
// hands the body, as received, to the writer with the token as who asks: its commands authorise the
// token again in the transaction that applies the change, parse the body and apply every rule, and
// report all problems together (with the `env` problem of a patch).
import type { ReceivedBody } from '../model/request-body.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { AuthContext } from '../model/records/token-access.js';
import type { SnapshotReader, StoreRevision } from '../store/interfaces.js';
import type { WriterClient } from '../writer/client.js';
import type { FlagwireError } from '../errors.js';

/**
 * A refusal's body on a route set that speaks another standard's errors (docs/decisions.md: the OpenFeature
 * CLI's manifest API): `docsUrl` is the docs page (src/errors.ts's errorDocs links the error's section).
 */
export type RouteErrorBody = (error: FlagwireError, docsUrl: string) => unknown;

/** What a handler gets: everything read off the request before the pipeline may go async. */
export interface ApiRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string;
  contentType: string;
  /** The If-None-Match header ('' when absent): a route answering TaggedJson answers 304 when it matches. */
  ifNoneMatch: string;
  /** The If-Match header ('' when absent): a flag's change names the version it was read at (src/flags/flag-version.ts). */
  ifMatch: string;
  /** The flag route's id, decoded; null on the other routes. */
  flagId: string | null;
  /** The route's other path parameters, decoded (`schedule_id`, `rollout_id`, `action`). */
  params: Readonly<Record<string, string>>;
  /** The request's route number for the metrics (ManagementMatch.metric), matched with its route. */
  metric: number;
  /** The matched route's errorBody, which renders its every refusal; null: the Management API's envelope. */
  errorBody: RouteErrorBody | null;
}

/**
 * What capabilities hand their routes beside the store and the writer, each adding its own key where it
 * declares the service (declaration merging: src/side-work/side-thread.ts adds the side thread), so this
 * module names no capability.
 */
// biome-ignore lint/suspicious/noEmptyInterface: its keys are added by the capabilities that declare a service
export interface RouteServices {}

export interface HandlerDeps extends RouteServices {
  store: SnapshotReader;
  writer: WriterClient;
  config: Readonly<Pick<Config, 'webhookAllow' | 'prometheusMetrics' | 'databaseUrl' | 'upstream'>>;
  /** The time rules that depend on it read (a plan's trial, expiry). */
  clock: Clock;
}

export interface ReadHandler {
  readonly kind: 'read';
  /** The answer's value; or a promise of it, for a read that waits on something outside the node's copy (PostgreSQL's tally). */
  run(request: ApiRequest, auth: AuthContext, deps: HandlerDeps): unknown;
}

export interface WriteHandler {
  readonly kind: 'write';
  /** A POST that only reads (plan): a read token may call it. Absent: the route needs a write token. */
  readonly permission?: 'read';
  /** Checks made before the body is read (404 and 403 of a flag that cannot be patched). */
  precheck?(request: ApiRequest, auth: AuthContext, deps: HandlerDeps): void;
  /**
   * `release` frees the body's reservation: the writer calls it when it holds its copy no more.
   * `storeRevision`: the store revision the answer was computed at, a write's the one it committed at
   * (WriterClient.callAt); absent, the answer names this node's when it is sent.
   */
  run(
    request: ApiRequest,
    auth: AuthContext,
    received: ReceivedBody,
    release: () => void,
    deps: HandlerDeps,
  ): Promise<{ status: number; value: unknown; storeRevision?: StoreRevision }>;
}

export type ManagementHandler = ReadHandler | WriteHandler;

/**
 * An answer sent a chunk at a time as the client reads it (src/http/streamed-body.ts): an export too
 * large to hold. `headers`: its own beside the pipeline's (Content-Disposition).
 */
export class StreamedAnswer {
  constructor(
    readonly contentType: string,
    readonly chunks: AsyncIterable<Uint8Array>,
    readonly headers: readonly (readonly [string, string])[] = [],
  ) {}
}

/**
 * An answer already written as JSON text (an export: its bytes are the file's), sent as it is.
 * `headers`: its own beside the pipeline's (a flag's ETag, which names its version, not these bytes).
 */
export class JsonText {
  constructor(
    readonly text: string,
    readonly headers: readonly (readonly [string, string])[] = [],
  ) {}
}

/**
 * A read's answer with an entity tag (`"..."`): sent with ETag, or as 304 without a body when the
 * request's If-None-Match names it (RFC 9110 §13.1.2).
 */
export class TaggedJson {
  constructor(
    readonly text: string,
    readonly etag: string,
    /** Headers sent with the 200 and the 304 alike. */
    readonly headers: readonly (readonly [string, string])[] = [],
  ) {}
}

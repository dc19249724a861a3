// A gRPC service a capability declares (its `grpcServices`), hosted on the node's one gRPC server: the
// sync capability's, on FLAGWIRE_SYNC_PORT (src/sync/sync-server.ts), beside flagd's sync service. The
// server (grpc-server.ts) bounds every call on that port, the services' with flagd's (the calls open,
// the bytes their readers have not taken); the host gives each service the change poll and shutdown. src/capabilities.ts derives the list; the node hands it to the host (NodeServices), so
// no list of services is kept by hand.
import type { Logger } from 'pino';
import type { AuthFailures } from '../http/auth-failures.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { ErrorCode } from '../errors.js';
import type { Store } from '../store/interfaces.js';
import type { FollowState } from '../model/follow-state.js';
import { type GrpcHandler, GrpcStatus, type GrpcStatusCode } from './grpc-server.js';

/**
 * How often every stream on the port has its credential checked again (a token, a relay key): a revoked or
 * expired one's streams end UNAUTHENTICATED well within the spec's revocation delay ("about a minute").
 */
export const kStreamRecheckMs = 10_000;

/** What the gRPC server gives a service it hosts. */
export interface GrpcHost {
  readonly store: Store;
  readonly clock: Clock;
  readonly config: Readonly<Config>;
  readonly log: Logger;
  /** The node's failed-authentication lockout (spec: Limits), shared with every other credential check. */
  readonly authFailures: AuthFailures;
  /**
   * Starts the change poll for one stream (the poll runs while any stream watches); returns its release.
   * The stream's slot of FLAGWIRE_SYNC_MAX_STREAMS was taken by the server when the call came.
   */
  watchChanges(): () => void;
  /** On a relay, its follow of its upstream now (src/relay/upstream-follower.ts); null on a node that is not one. */
  relay(): FollowState | null;
  /** Hears every poll that found a new commit, with the store's revision then (src/stream/change-poller.ts). */
  onCommit(listener: (revision: number) => void): void;
  /**
   * A relay follows for as long as the returned release is not called: it may serve any flag set to
   * stock flagd clients that report nothing, so every set counts as read meanwhile (src/sync/read-recorder.ts).
   */
  relayFollows(): () => void;
}

/** A service as its host runs it. */
export interface HostedGrpcService {
  /** Its methods by gRPC path (`/package.Service/Method`). */
  readonly methods: Readonly<Record<string, GrpcHandler>>;
  /** At shutdown, before the server stops: ends its streams (UNAVAILABLE) and its timers. */
  close(): Promise<void>;
}

export interface GrpcServiceSpec {
  /** Its full name (`package.Service`). */
  readonly name: string;
  /** Made when the host starts (loaded then: the writer thread and the command line never load gRPC). */
  start(host: GrpcHost): Promise<HostedGrpcService>;
}

/** gRPC's status for each refusal (the Management API's status for the same refusal in the comment). */
export const kGrpcStatusOf: Partial<Record<ErrorCode, GrpcStatusCode>> = {
  INVALID_REQUEST: GrpcStatus.INVALID_ARGUMENT, // 400
  MISSING_TOKEN: GrpcStatus.UNAUTHENTICATED, // 401
  MALFORMED_TOKEN: GrpcStatus.UNAUTHENTICATED,
  UNKNOWN_TOKEN: GrpcStatus.UNAUTHENTICATED,
  TOKEN_REVOKED: GrpcStatus.UNAUTHENTICATED,
  TOKEN_EXPIRED: GrpcStatus.UNAUTHENTICATED,
  PLAN_REQUIRED: GrpcStatus.PERMISSION_DENIED, // 402
  ENVIRONMENT_NOT_PERMITTED: GrpcStatus.PERMISSION_DENIED, // 403
  NOT_FOUND: GrpcStatus.NOT_FOUND, // 404
  TOO_MANY_AUTH_FAILURES: GrpcStatus.RESOURCE_EXHAUSTED, // 429
  SERVER_BUSY: GrpcStatus.RESOURCE_EXHAUSTED, // 503
  STORE_UNAVAILABLE: GrpcStatus.UNAVAILABLE,
};

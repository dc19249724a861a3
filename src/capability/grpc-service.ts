// A gRPC service a capability declares (its `grpcServices`), hosted on the node's one gRPC server: the
// sync capability's, on FLAGWIRE_SYNC_PORT (src/sync/sync-server.ts), beside flagd's sync service. The
// host gives each service what every stream on that port shares: the bound on open streams, the change
// poll, shutdown. src/capabilities.ts derives the list; the node hands it to the host (NodeServices), so
// no list of services is kept by hand.
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { AuthFailures } from '../http/auth-failures.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { ErrorCode } from '../errors.js';
import type { Store } from '../store/interfaces.js';

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
   * Takes one of the server's stream slots (FLAGWIRE_SYNC_MAX_STREAMS, counted with flagd's streams) and
   * starts the change poll; returns its release. Throws SERVER_BUSY when none is left or the server is
   * shutting down.
   */
  openStream(): () => void;
  /** Hears every poll that found a new commit, with the store's revision then (src/stream/change-poller.ts). */
  onCommit(listener: (revision: number) => void): void;
}

/** A service as its host runs it. */
export interface HostedGrpcService {
  readonly definition: grpc.ServiceDefinition;
  readonly handlers: grpc.UntypedServiceImplementation;
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
export const kGrpcStatusOf: Partial<Record<ErrorCode, grpc.status>> = {
  INVALID_REQUEST: grpc.status.INVALID_ARGUMENT, // 400
  MISSING_TOKEN: grpc.status.UNAUTHENTICATED, // 401
  MALFORMED_TOKEN: grpc.status.UNAUTHENTICATED,
  UNKNOWN_TOKEN: grpc.status.UNAUTHENTICATED,
  TOKEN_REVOKED: grpc.status.UNAUTHENTICATED,
  TOKEN_EXPIRED: grpc.status.UNAUTHENTICATED,
  PLAN_REQUIRED: grpc.status.PERMISSION_DENIED, // 402
  ENVIRONMENT_NOT_PERMITTED: grpc.status.PERMISSION_DENIED, // 403
  NOT_FOUND: grpc.status.NOT_FOUND, // 404
  TOO_MANY_AUTH_FAILURES: grpc.status.RESOURCE_EXHAUSTED, // 429
  SERVER_BUSY: grpc.status.RESOURCE_EXHAUSTED, // 503
  STORE_UNAVAILABLE: grpc.status.UNAVAILABLE,
};

/** The first value of a call's metadata `key`, trimmed; '' when absent. */
export function metadataValue(metadata: grpc.Metadata, key: string): string {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value.trim() : '';
}

/** The address of grpc-js's peer text (`1.2.3.4:5678`, `[::1]:5678`): what the per-address lockout counts. */
export function peerAddress(peer: string): string {
  const colon = peer.lastIndexOf(':');
  const host = colon === -1 ? peer : peer.slice(0, colon);
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

// flagd's sync service, flagd.sync.v1.FlagSyncService, over gRPC on a port of its own
// (FLAGWIRE_SYNC_PORT; docs/api.md: Sync service), on the main thread of every node:
//   SyncFlags       a server stream: the selector's whole flag set at once, then again on each change
//   FetchAllFlags   the set, once
//   GetMetadata     (deprecated by flagd) the set's metadata
// The selector comes from the `Flagd-Selector` metadata header, or the request's deprecated selector
// field (selector.ts); the token from `authorization: Bearer`, the provider_id or the selector (access.ts).
//
// Changes are seen by the change streams' poller (src/stream/change-poller.ts): while a stream is open
// it reads the store's commit number every 50 ms and brings each watched project environment to the
// new revision; the set is then read once (flag-sets.ts: rebuilt only when the project's answers can
// have changed) and the same encoded message is written to every stream of that selector. On
// PostgreSQL every node's copy moves with the cluster's commits, so every node serves its streams.
//
// Bounded: at most `maxStreams` streams (one more is refused RESOURCE_EXHAUSTED, not queued); a stream
// holds at most one set waiting while its reader is slow (a newer set replaces the waiting one, and sets
// are shared, so a slow reader costs one framed copy in HTTP/2's buffers, never a queue); a peer that
// stops answering HTTP/2 pings is dropped. A stream's token is checked again every kStreamRecheckMs, so a
// revoked or expired token's streams end UNAUTHENTICATED well within the spec's revocation delay ("about
// a minute").
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { ActivityRecorder } from '../tokens/activity.js';
import type { AuthFailures } from '../http/auth-failures.js';
import { Periodic } from '../background/periodic.js';
import type { Clock } from '../clock.js';
import {
  type GrpcHost,
  type HostedGrpcService,
  kGrpcStatusOf,
  kStreamRecheckMs,
  metadataValue,
  peerAddress,
} from '../capability/grpc-service.js';
import { ConfigError, type Config } from '../config.js';
import { answerableError, FlagwireError } from '../errors.js';
import type { Store } from '../store/interfaces.js';
import { ChangePoller, type Group } from '../stream/change-poller.js';
import { FlagSetAccess, type FlagSetRequest, type Granted, type SecretSource } from './access.js';
import { decodeSyncRequest, encodeMetadata, type SyncRequest } from './codec.js';
import { FlagSets, type ServedFlagSet } from './flag-sets.js';
import { parseSelector, type Selector } from './selector.js';

export interface SyncServerOptions {
  host: string;
  port: number;
  maxStreams: number;
  config: Readonly<Config>;
  store: Store;
  clock: Clock;
  log: Logger;
  authFailures: AuthFailures;
  activity: ActivityRecorder;
}

/** One open SyncFlags stream. */
interface Stream {
  readonly call: grpc.ServerWritableStream<SyncRequest, Buffer>;
  /** Gives its slot back (openStream). */
  readonly release: () => void;
  readonly selector: Selector;
  readonly granted: Granted;
  readonly group: Group<Stream>;
  /** The set last handed to the call, and whether its write has completed. */
  sent: ServedFlagSet;
  writing: boolean;
  /** A newer set that waits for that write (a slow reader); null when none. */
  waiting: ServedFlagSet | null;
  ended: boolean;
}

const kService = 'flagd.sync.v1.FlagSyncService';
/** As the change streams': a change is pushed within about one interval; an idle poll is one LMDB get. */
const kPollMs = 50;
// The methods' answers are encoded once per set (codec.ts): the serializer passes the bytes on.
const kPassBytes = (bytes: Buffer): Buffer => bytes;

const kServerOptions: grpc.ServerOptions = {
  // A dead peer (a killed client, a dropped network) is found by the server's own pings within a
  // minute and a half, and its streams freed. Clients' pings are always accepted: grpc-js's server
  // enforces no minimum ping interval, so the stock providers' keepalive (every 30 s, with or without
  // a stream) never gets a too_many_pings GOAWAY.
  'grpc.keepalive_time_ms': 60_000,
  'grpc.keepalive_timeout_ms': 20_000,
  // Requests are a selector and a provider id: nothing larger is read.
  'grpc.max_receive_message_length': 16 * 1024,
};

export class SyncServer {
  private readonly server = new grpc.Server(kServerOptions);
  private readonly sets: FlagSets;
  private readonly access: FlagSetAccess;
  private readonly poller: ChangePoller<Stream>;
  private readonly rechecks: Periodic;
  private streams = 0;
  private closing = false;
  /** The services of other capabilities it hosts beside flagd's (src/capability/grpc-service.ts). */
  private readonly hosted: HostedGrpcService[] = [];
  private readonly commitListeners: ((revision: number) => void)[] = [];
  /** What a hosted service is given: the stream slots, the change poll, the node's parts. */
  readonly host: GrpcHost;

  constructor(private readonly options: SyncServerOptions) {
    const { store, log } = options;
    // grpc-js writes its own errors to stderr (a port it could not bind, before ours says which setting
    // to change): into the node's log instead, at debug, since every one that matters is reported as ours.
    grpc.setLogger({ error: (...args: unknown[]) => log.debug({ grpc: args.join(' ') }, 'grpc-js') });
    this.sets = new FlagSets(store);
    this.access = new FlagSetAccess(store, options.authFailures, options.activity);
    this.poller = new ChangePoller<Stream>({
      store,
      pollMs: kPollMs,
      // The sync service replays nothing (a reconnect is sent the whole set): groups go when their last stream does.
      replayCommits: 0,
      replayIdleMs: 0,
      maxIdleGroups: 0,
      onError: (err) => log.error({ err }, 'sync service: the change poll failed'),
      onAdvanced: (group) => this.publish(group),
      onCommit: (revision) => {
        for (const listener of this.commitListeners) listener(revision);
      },
    });
    this.host = {
      store,
      clock: options.clock,
      config: options.config,
      log,
      authFailures: options.authFailures,
      openStream: () => this.openStream(),
      onCommit: (listener) => {
        this.commitListeners.push(listener);
      },
    };
    this.rechecks = new Periodic(() => this.recheckTokens(), {
      intervalMs: kStreamRecheckMs,
      onError: (err) => log.error({ err }, "sync service: the streams' token check failed"),
    });
    this.server.addService(serviceDefinition(), {
      SyncFlags: (call: grpc.ServerWritableStream<SyncRequest, Buffer>) => this.syncFlags(call),
      FetchAllFlags: (call: grpc.ServerUnaryCall<SyncRequest, Buffer>, done: grpc.sendUnaryData<Buffer>) => this.fetchAllFlags(call, done),
      GetMetadata: (call: grpc.ServerUnaryCall<SyncRequest, Buffer>, done: grpc.sendUnaryData<Buffer>) => this.getMetadata(call, done),
    });
  }

  /** Hosts `service` beside flagd's; before listen. */
  addService(service: HostedGrpcService): void {
    this.server.addService(service.definition, service.handlers);
    this.hosted.push(service);
  }

  /** Binds the port (a port that cannot be bound is a ConfigError naming the setting); resolves with the port bound. */
  listen(): Promise<number> {
    const { host, port } = this.options;
    const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    return new Promise((resolve, reject) => {
      this.server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, bound) => {
        if (err !== null) {
          const taken = /EADDRINUSE|address already in use/i.test(err.message);
          const reason = taken
            ? 'is already in use (another Flagwire or another program listens there)'
            : `cannot be bound (${err.message})`;
          reject(new ConfigError('FLAGWIRE_SYNC_PORT', `${address} ${reason}; choose another port, or 0 to serve no sync service`));
          return;
        }
        this.rechecks.start();
        resolve(bound);
      });
    });
  }

  /** Ends every stream UNAVAILABLE (the providers reconnect, to this node once it is back or to another) and stops. */
  async close(): Promise<void> {
    this.closing = true;
    await this.rechecks.stop();
    for (const service of this.hosted) await service.close();
    for (const group of [...this.poller.all()]) {
      for (const stream of [...group.watchers]) {
        this.end(stream, grpc.status.UNAVAILABLE, 'Flagwire is shutting down; reconnect to another node or retry.');
      }
    }
    this.poller.clear();
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, 1000);
      this.server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
  }

  get size(): number {
    return this.streams;
  }

  /**
   * Takes one of the `maxStreams` slots, every stream of this port counted (flagd's and the hosted
   * services'), and starts the change poll; returns the release (the poll stops with the last stream).
   * Throws SERVER_BUSY when none is left (refused, not queued) or the server is shutting down.
   */
  private openStream(): () => void {
    const { maxStreams } = this.options;
    if (this.closing) throw new FlagwireError('SERVER_BUSY', 'Flagwire is shutting down; reconnect to another node or retry.');
    if (this.streams >= maxStreams) {
      throw new FlagwireError(
        'SERVER_BUSY',
        `This node has ${maxStreams} sync streams open, as many as it allows (FLAGWIRE_SYNC_MAX_STREAMS); connect to another node or retry later.`,
      );
    }
    this.streams++;
    this.poller.start();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.streams--;
      if (this.streams === 0) this.poller.stop();
    };
  }

  private syncFlags(call: grpc.ServerWritableStream<SyncRequest, Buffer>): void {
    const { options } = this;
    let release: (() => void) | null = null;
    try {
      release = this.openStream();
      const { selector, granted } = this.grant(call);
      options.store.resetReadTxn();
      const group = this.poller.group(granted.project, granted.environment, options.store.revision());
      const set = this.sets.current(granted.project, granted.environment, options.clock.now());
      const stream: Stream = { call, release, selector, granted, group, sent: set, writing: false, waiting: null, ended: false };
      group.watchers.add(stream);
      // A deadline passed, the client went away, or it cancelled: the stream is gone.
      call.on('cancelled', () => this.forget(stream));
      call.on('error', () => this.forget(stream));
      this.write(stream, set);
    } catch (err) {
      release?.();
      this.refuse(call, err);
    }
  }

  private fetchAllFlags(call: grpc.ServerUnaryCall<SyncRequest, Buffer>, done: grpc.sendUnaryData<Buffer>): void {
    try {
      const { granted } = this.grant(call);
      this.options.store.resetReadTxn();
      done(null, this.sets.current(granted.project, granted.environment, this.options.clock.now()).message);
    } catch (err) {
      done(this.status(err));
    }
  }

  private getMetadata(call: grpc.ServerUnaryCall<SyncRequest, Buffer>, done: grpc.sendUnaryData<Buffer>): void {
    try {
      const { granted } = this.grant(call);
      this.options.store.resetReadTxn();
      const set = this.sets.current(granted.project, granted.environment, this.options.clock.now());
      const document = JSON.parse(set.json) as { metadata: Record<string, string | number | boolean> };
      done(null, encodeMetadata(document.metadata));
    } catch (err) {
      done(this.status(err));
    }
  }

  /** The call's selector and grant, or the refusal (thrown). The request's fields are empty for GetMetadata. */
  private grant(call: grpc.ServerUnaryCall<SyncRequest, Buffer> | grpc.ServerWritableStream<SyncRequest, Buffer>): {
    selector: Selector;
    granted: Granted;
  } {
    const request = call.request;
    if (request.problem !== null) throw new FlagwireError('INVALID_REQUEST', request.problem);
    const selector = parseSelector(metadataValue(call.metadata, 'flagd-selector') || request.selector);
    const { authorization, source } = credentials(call.metadata, request, selector);
    this.options.store.resetReadTxn();
    const flagSetRequest: FlagSetRequest = {
      selector,
      authorization,
      source,
      ip: peerAddress(call.getPeer()),
      method: 'GRPC',
      path: call.getPath(),
    };
    return { selector, granted: this.access.grant(flagSetRequest, this.options.clock.now()) };
  }

  /** Sends every stream of `group` its set, when it is a new one (a change in the project or its plan). */
  private publish(group: Group<Stream>): void {
    if (group.watchers.size === 0) return;
    // The project as this snapshot has it: its environments may have changed since the streams opened.
    const project = this.options.store.getProject(group.projectId);
    if (project === undefined) return;
    const set = this.sets.current(project, group.env, this.options.clock.now());
    for (const stream of group.watchers) if (stream.sent !== set) this.write(stream, set);
  }

  /** Hands `set` to the stream, or keeps it for when the write in progress completes (one set waits at most). */
  private write(stream: Stream, set: ServedFlagSet): void {
    if (stream.ended) return;
    if (stream.writing) {
      stream.waiting = set;
      return;
    }
    stream.sent = set;
    stream.writing = true;
    stream.call.write(set.message, () => {
      stream.writing = false;
      const next = stream.waiting;
      stream.waiting = null;
      if (next !== null && next !== stream.sent) this.write(stream, next);
    });
  }

  private forget(stream: Stream): void {
    if (stream.ended) return;
    stream.ended = true;
    stream.group.watchers.delete(stream);
    if (stream.group.watchers.size === 0) {
      this.poller.markIdle(stream.group);
      this.poller.expireIdle(performance.now());
    }
    stream.release();
  }

  private end(stream: Stream, code: grpc.status, details: string): void {
    this.forget(stream);
    stream.call.emit('error', { code, details });
  }

  private recheckTokens(): void {
    const { store, clock } = this.options;
    store.resetReadTxn();
    const now = clock.now();
    for (const group of [...this.poller.all()]) {
      for (const stream of [...group.watchers]) {
        const refusal = this.access.recheck(stream.granted, stream.selector, 'GRPC', stream.call.getPath(), now);
        if (refusal !== null) this.end(stream, kGrpcStatusOf[refusal.code] ?? grpc.status.PERMISSION_DENIED, refusal.message);
      }
    }
  }

  private refuse(call: grpc.ServerWritableStream<SyncRequest, Buffer>, err: unknown): void {
    call.emit('error', this.status(err));
  }

  /** The gRPC status of a refusal: its code, and the Management API's title and detail as the message. */
  private status(err: unknown): Partial<grpc.StatusObject> {
    const error = answerableError(err, (e) => this.options.log.error({ err: e }, 'unexpected error in the sync service'));
    return { code: kGrpcStatusOf[error.code] ?? grpc.status.INTERNAL, details: error.message };
  }
}

/**
 * The call's secret and where it came from: the `authorization` metadata (`Bearer <secret>`), else the
 * provider_id (the secret, or `Bearer <secret>`), else the selector's `token=`.
 */
function credentials(metadata: grpc.Metadata, request: SyncRequest, selector: Selector): { authorization: string; source: SecretSource } {
  const header = metadataValue(metadata, 'authorization');
  if (header !== '') return { authorization: header, source: 'authorization' };
  const providerId = request.providerId.trim();
  if (providerId !== '')
    return { authorization: /^bearer\s/i.test(providerId) ? providerId : `Bearer ${providerId}`, source: 'provider_id' };
  if (selector.token !== null) return { authorization: `Bearer ${selector.token}`, source: 'selector' };
  return { authorization: '', source: 'none' };
}

function serviceDefinition(): grpc.ServiceDefinition {
  const method = (name: string, responseStream: boolean) => ({
    path: `/${kService}/${name}`,
    requestStream: false,
    responseStream,
    requestSerialize: kPassBytes,
    requestDeserialize: decodeSyncRequest,
    responseSerialize: kPassBytes,
    responseDeserialize: kPassBytes,
  });
  return {
    SyncFlags: method('SyncFlags', true),
    FetchAllFlags: method('FetchAllFlags', false),
    GetMetadata: method('GetMetadata', false),
  };
}

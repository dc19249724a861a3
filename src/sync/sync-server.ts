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
// Bounded (src/capability/grpc-server.ts): at most `maxCalls` calls, every method's (SyncFlags,
// FetchAllFlags, GetMetadata and the hosted services'; one more is refused RESOURCE_EXHAUSTED, not
// queued); a set is framed once and the same Buffer is queued on every stream of its selector, so 1,000
// readers that do not read hold one copy; a stream whose reader is slow holds the set in flight and, at
// most, the latest one waiting (a newer set replaces the waiting one: never a queue); the bytes no reader
// has taken are bounded (`maxUnreadBytes`: past it the longest-waiting readers are cut); a peer that stops
// answering HTTP/2 pings is dropped. A stream's token is checked again every kStreamRecheckMs, so a
// revoked or expired token's streams end UNAUTHENTICATED well within the spec's revocation delay ("about
// a minute").
import type { Logger } from 'pino';
import type { ActivityRecorder } from '../tokens/activity.js';
import type { FlagSetReadRecorder, OpenFlagSet } from './read-recorder.js';
import { kEveryProject } from '../flags/records/flag-set-read-records.js';
import type { AuthFailures } from '../http/auth-failures.js';
import { Periodic } from '../background/periodic.js';
import type { Clock } from '../clock.js';
import { frameMessage } from '../capability/grpc-frame.js';
import { type GrpcCall, GrpcServer, GrpcStatus, type GrpcStatusCode } from '../capability/grpc-server.js';
import { type GrpcHost, type HostedGrpcService, kGrpcStatusOf, kStreamRecheckMs } from '../capability/grpc-service.js';
import type { Config } from '../config.js';
import type { FollowState } from '../model/follow-state.js';
import { answerableError, FlagwireError } from '../errors.js';
import type { Store } from '../store/interfaces.js';
import { ChangePoller, type Group } from '../stream/change-poller.js';
import { FlagSetAccess, type FlagSetRequest, type Granted, type SecretSource } from './access.js';
import { decodeSyncRequest, encodeMetadata, type SyncRequest } from './codec.js';
import { FlagSets, type ServedFlagSet } from './flag-sets.js';
import { parseSelector, type Selector } from './selector.js';
import { kSyncPort } from './sync-port.js';
import { getProject } from '../model/records/project-records.js';

export interface SyncServerOptions {
  host: string;
  port: number;
  maxCalls: number;
  maxUnreadBytes: number;
  config: Readonly<Config>;
  store: Store;
  clock: Clock;
  log: Logger;
  authFailures: AuthFailures;
  activity: ActivityRecorder;
  /** Where each read of a set is marked; a stream open is one for as long as it is (openFlagSets). */
  reads: Pick<FlagSetReadRecorder, 'read'>;
  /** The writer's client: on a relay, its follow's state (`relay`). */
  writer: { readonly relay: FollowState | null };
}

/** One open SyncFlags stream. */
interface Stream {
  readonly call: GrpcCall;
  /** Stops its watch of the change poll (watchChanges). */
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
const kPath = (method: string) => `/${kService}/${method}`;

export class SyncServer {
  private readonly server: GrpcServer;
  private readonly sets: FlagSets;
  private readonly access: FlagSetAccess;
  private readonly poller: ChangePoller<Stream>;
  private readonly rechecks: Periodic;
  /** Streams watching the change poll (flagd's and the hosted services'): the poll runs while there are any. */
  private watching = 0;
  /** Relays following (GrpcHost.relayFollows): every set is read while any does. */
  private relaysFollowing = 0;
  /** The services of other capabilities it hosts beside flagd's (src/capability/grpc-service.ts). */
  private readonly hosted: HostedGrpcService[] = [];
  private readonly commitListeners: ((revision: number) => void)[] = [];
  /** What a hosted service is given: the change poll, the relay's follow, the node's parts (the server bounds its calls). */
  readonly host: GrpcHost;

  constructor(private readonly options: SyncServerOptions) {
    const { store, log } = options;
    this.server = new GrpcServer({
      maxCalls: options.maxCalls,
      busyMessage: `This node has ${options.maxCalls} sync calls open, as many as it allows (FLAGWIRE_SYNC_MAX_STREAMS); connect to another node or retry later.`,
      maxHeldBytes: options.maxUnreadBytes,
      port: kSyncPort,
      onError: (err) => log.error({ err }, 'sync service: unexpected error'),
    });
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
      watchChanges: () => this.watchChanges(),
      relay: () => options.writer.relay,
      onCommit: (listener) => {
        this.commitListeners.push(listener);
      },
      relayFollows: () => {
        this.relaysFollowing++;
        options.reads.read(kEveryProject, null, options.clock.now());
        let released = false;
        return () => {
          if (released) return;
          released = true;
          this.relaysFollowing--;
        };
      },
    };
    this.rechecks = new Periodic(() => this.recheckTokens(), {
      intervalMs: kStreamRecheckMs,
      onError: (err) => log.error({ err }, "sync service: the streams' token check failed"),
    });
    this.server.handle(kPath('SyncFlags'), (call) => this.syncFlags(call));
    this.server.handle(kPath('FetchAllFlags'), (call) => this.fetchAllFlags(call));
    this.server.handle(kPath('GetMetadata'), (call) => this.getMetadata(call));
  }

  /** Hosts `service` beside flagd's; before listen. */
  addService(service: HostedGrpcService): void {
    for (const [path, handler] of Object.entries(service.methods)) this.server.handle(path, handler);
    this.hosted.push(service);
  }

  /** Binds the port (a port that cannot be bound is a ConfigError naming the setting); resolves with the port bound. */
  async listen(): Promise<number> {
    const bound = await this.server.listen(this.options.host, this.options.port);
    this.rechecks.start();
    return bound;
  }

  /** Ends every stream UNAVAILABLE (the providers reconnect, to this node once it is back or to another) and stops. */
  async close(): Promise<void> {
    await this.rechecks.stop();
    for (const service of this.hosted) await service.close();
    for (const group of [...this.poller.all()]) {
      for (const stream of [...group.watchers]) {
        this.end(stream, GrpcStatus.UNAVAILABLE, 'Flagwire is shutting down; reconnect to another node or retry.');
      }
    }
    this.poller.clear();
    await this.server.close();
  }

  /** The sets a SyncFlags stream is open on now, each read for as long as it is; every set while a relay follows. */
  *openFlagSets(): Iterable<OpenFlagSet> {
    if (this.relaysFollowing > 0) yield { projectId: kEveryProject, environment: null };
    for (const group of this.poller.all()) if (group.watchers.size > 0) yield { projectId: group.projectId, environment: group.env };
  }

  /** Starts the change poll for one stream; returns the release (the poll stops with the last stream). */
  private watchChanges(): () => void {
    this.watching++;
    this.poller.start();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.watching--;
      if (this.watching === 0) this.poller.stop();
    };
  }

  private syncFlags(call: GrpcCall): void {
    const { options } = this;
    let release: (() => void) | null = null;
    try {
      const { selector, granted } = this.grant(call);
      release = this.watchChanges();
      options.store.resetReadTxn();
      const group = this.poller.group(granted.project, granted.environment, options.store.revision());
      const now = options.clock.now();
      const set = this.sets.current(granted.project, granted.environment, now);
      options.reads.read(granted.project.id, granted.environment, now);
      const stream: Stream = { call, release, selector, granted, group, sent: set, writing: false, waiting: null, ended: false };
      group.watchers.add(stream);
      // A deadline passed, the client went away or cancelled, or its reader was cut: the stream is gone.
      call.onEnd(() => this.forget(stream));
      this.write(stream, set);
    } catch (err) {
      release?.();
      this.refuse(call, err);
    }
  }

  private fetchAllFlags(call: GrpcCall): void {
    try {
      const { granted } = this.grant(call);
      this.options.store.resetReadTxn();
      const now = this.options.clock.now();
      call.reply(this.sets.current(granted.project, granted.environment, now).message);
      this.options.reads.read(granted.project.id, granted.environment, now);
    } catch (err) {
      this.refuse(call, err);
    }
  }

  private getMetadata(call: GrpcCall): void {
    try {
      const { granted } = this.grant(call);
      this.options.store.resetReadTxn();
      const set = this.sets.current(granted.project, granted.environment, this.options.clock.now());
      const document = JSON.parse(set.json) as { metadata: Record<string, string | number | boolean> };
      call.reply(frameMessage(encodeMetadata(document.metadata)));
    } catch (err) {
      this.refuse(call, err);
    }
  }

  /** The call's selector and grant, or the refusal (thrown). The request's fields are empty for GetMetadata. */
  private grant(call: GrpcCall): {
    selector: Selector;
    granted: Granted;
  } {
    const request = decodeSyncRequest(call.request);
    if (request.problem !== null) throw new FlagwireError('INVALID_REQUEST', request.problem);
    const selector = parseSelector(call.metadata('flagd-selector') || request.selector);
    const { authorization, source } = credentials(call, request, selector);
    this.options.store.resetReadTxn();
    const flagSetRequest: FlagSetRequest = {
      selector,
      authorization,
      source,
      ip: call.peer,
      method: 'GRPC',
      path: call.path,
    };
    return { selector, granted: this.access.grant(flagSetRequest, this.options.clock.now()) };
  }

  /** Sends every stream of `group` its set, when it is a new one (a change in the project or its plan). */
  private publish(group: Group<Stream>): void {
    if (group.watchers.size === 0) return;
    // The project as this snapshot has it: its environments may have changed since the streams opened.
    const project = getProject(this.options.store, group.projectId);
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

  private end(stream: Stream, code: GrpcStatusCode, details: string): void {
    this.forget(stream);
    stream.call.end(code, details);
  }

  private recheckTokens(): void {
    const { store, clock } = this.options;
    store.resetReadTxn();
    const now = clock.now();
    for (const group of [...this.poller.all()]) {
      for (const stream of [...group.watchers]) {
        const refusal = this.access.recheck(stream.granted, stream.selector, 'GRPC', stream.call.path, now);
        if (refusal !== null) this.end(stream, kGrpcStatusOf[refusal.code] ?? GrpcStatus.PERMISSION_DENIED, refusal.message);
      }
    }
  }

  /** Ends the call with the refusal's gRPC status: its code, and the Management API's title and detail as the message. */
  private refuse(call: GrpcCall, err: unknown): void {
    const error = answerableError(err, (e) => this.options.log.error({ err: e }, 'unexpected error in the sync service'));
    call.end(kGrpcStatusOf[error.code] ?? GrpcStatus.INTERNAL, error.message);
  }
}

/**
 * The call's secret and where it came from: the `authorization` metadata (`Bearer <secret>`), else the
 * provider_id (the secret, or `Bearer <secret>`), else the selector's `token=`.
 */
function credentials(call: GrpcCall, request: SyncRequest, selector: Selector): { authorization: string; source: SecretSource } {
  const header = call.metadata('authorization');
  if (header !== '') return { authorization: header, source: 'authorization' };
  const providerId = request.providerId.trim();
  if (providerId !== '')
    return { authorization: /^bearer\s/i.test(providerId) ? providerId : `Bearer ${providerId}`, source: 'provider_id' };
  if (selector.token !== null) return { authorization: `Bearer ${selector.token}`, source: 'selector' };
  return { authorization: '', source: 'none' };
}

// The change streams, as Server-Sent Events (this file serves the connections; change-poller.ts polls
// the store and computes what changed; events.ts writes the events):
//   GET /v1/stream/project/{project_id}[?env=NAME]         Flagwire's events, one per changed record
//   GET /ofrep/v1/stream/project/{project_id}[?env=NAME]   OFREP's (ADR-0008): "refetch", one per commit
//
// How changes are seen: every write transaction of any process (this server's writer thread, and any
// command-line command run beside it) bumps the store's commit sequence number. While at least one stream
// is open, the main thread reads that number every `pollMs` (one LMDB get after a snapshot renewal);
// when it moved, each watched project's flags and audiences are read once and compared with the last
// snapshot, and every connection watching that project gets the events. Watching the writer's replies
// instead would miss the console's changes; the commit number sees both.
//
//   event: ready           data: {"seq": 42}                                 first, on every connection (seq: the revision)
//   event: flag            data: {"id": "...", "updatedAt": 1700000000000}   created or changed
//   event: flag-deleted    data: {"id": "..."}
//   event: audience        data: {"id": "...", "updatedAt": 1700000000000}   rules or name changed
//   event: reset           data: {"reason": "..."}                           Last-Event-ID beyond retention
//   : heartbeat                                                             every `heartbeatMs`
// and on the OFREP stream, for any of those (the web provider listens to `message` only):
//   event: message         data: {"type": "refetchEvaluation", "etag": "<configuration tag>"}
//
// Events carry ids and versions only, never cohorts, rules or tokens: a client refetches what it needs.
// With `env` (multi-environment projects) a flag event is sent only when that environment's state, or
// the flag's name, changed. Each event's `id:` is the store revision it was seen at (StoreReader.revision:
// the commit number on one node, PostgreSQL's revision on every node of a cluster), the number every API
// answer names in Flagwire-Revision (src/http/revisions.ts).
//
// Replay (Last-Event-ID): each project (and environment) watched keeps its last `replayCommits` commits'
// events, and stays known for `replayIdleMs` after its last stream closed (at most `maxIdleGroups` such).
// A reconnect whose Last-Event-ID is within that gets the events after it (on the OFREP stream: one
// refetchEvaluation); one beyond it, or unknown to this process, gets `reset` (OFREP: refetchEvaluation
// without etag): reload everything. A project unwatched meanwhile is compared once, on the reconnect.
// Revisions being the cluster's, a reconnect to another node is replayed as well when that node has
// kept the project's events since the id (events may then come twice: each names a flag to refetch).
//
// Followers: a capability's own stream format on the same connections, limits and heartbeats (Unleash's
// client streaming: src/unleash/streaming.ts). A StreamFollower says what a connection gets first and,
// once per group for each commit that advances it, what its connections get then (it keeps what it
// compares per group: its connections all saw the group's revision).
import type { HttpRequest, TemplatedApp } from 'uWebSockets.js';
import type { Project } from '../model/projects.js';
import { errorBody, FlagwireError } from '../errors.js';
import { kCorsOrigin, kNoSniff, send, trackAbort, type PendingResponse } from '../http/http.js';
import { validEnvironmentsText } from '../model/environments.js';
import { notFoundDetail } from '../model/records/lookups.js';
import { SseConnection } from './sse-connection.js';
import { decodePathId } from '../http/path-id.js';
import { registerRoutes, type RouteCounts, type RouteNumbers } from '../routes/route-table.js';
import { kStreamRoutes } from './routes.js';
import { ChangePoller, type FeedStore, type Group } from './change-poller.js';
import { event, refetchEvent } from './events.js';
import { getProject } from '../model/records/project-records.js';

export type { FeedStore } from './change-poller.js';

declare module '../routes/handler.js' {
  interface RouteServices {
    /** This front end's change feed, for a capability's stream (a StreamFollower). */
    changes: ChangeFeed;
  }
}

/** What a stream's group is to a follower: its project and environment, and the store revision it reflects. */
export type FollowedGroup = Pick<Group<unknown>, 'projectId' | 'env' | 'seenRevision'>;

/** A capability's stream format (see the head of this file). */
export interface StreamFollower {
  /** The events a connection opened now gets first: the group is at the store's revision, read from `store`. */
  first(group: FollowedGroup, store: FeedStore): string;
  /** The events for the group brought to store revision `revision`, '' for none: sent to each of its connections with this follower. */
  advanced(group: FollowedGroup, revision: number, store: FeedStore): string;
}

/** Where the streams' answers and dropped readers are counted (src/metrics/metrics.ts). */
export interface StreamMetrics extends RouteCounts {
  streamDropped: number;
}

export interface ChangeFeedOptions {
  store: FeedStore;
  metrics: StreamMetrics | null;
  /** The streams' route numbers (src/all-routes.ts derives them). */
  routes: RouteNumbers<typeof kStreamRoutes>;
  pollMs?: number;
  heartbeatMs?: number;
  maxConnections?: number;
  maxQueuedBytes?: number;
  maxStallMs?: number;
  replayCommits?: number;
  replayIdleMs?: number;
  maxIdleGroups?: number;
  onError?(err: unknown): void;
}

/** Which events a connection gets: Flagwire's per record, or OFREP's refetch per commit. */
export type StreamFormat = 'flagwire' | 'ofrep';

interface Watcher {
  readonly connection: SseConnection;
  readonly format: StreamFormat | StreamFollower;
  /** A follower's connection: whether its credential still holds, asked before each change and at each heartbeat. */
  readonly allowed?: (store: FeedStore) => boolean;
}

const kDefaults = {
  // A change reaches the streams within about one interval; a poll that finds nothing is one LMDB get
  // (20 a second, only while a stream is open).
  pollMs: 50,
  heartbeatMs: 15_000,
  maxConnections: 10_000,
  maxQueuedBytes: 64 * 1024,
  maxStallMs: 30_000,
  replayCommits: 256,
  replayIdleMs: 5 * 60_000,
  maxIdleGroups: 1000,
};
const kHeartbeat = ': heartbeat\n\n';
// retry: how long EventSource waits before reconnecting after the stream ends (ms).
const kHello = 'retry: 2000\n: connected\n\n';
const kResetReason = 'Last-Event-ID is older than this server keeps (docs/operations.md: Change stream): reload every flag.';
const kTooMany = Buffer.from(
  JSON.stringify({ error: 'Service unavailable', detail: 'Too many open change streams on this server; retry later.' }),
);

export class ChangeFeed {
  private readonly poller: ChangePoller<Watcher>;
  private connections = 0;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private closing = false;
  private readonly options: Required<Omit<ChangeFeedOptions, 'metrics' | 'onError'>> & Pick<ChangeFeedOptions, 'metrics' | 'onError'>;

  constructor(options: ChangeFeedOptions) {
    this.options = { ...kDefaults, ...options };
    this.poller = new ChangePoller<Watcher>({
      store: this.options.store,
      pollMs: this.options.pollMs,
      replayCommits: this.options.replayCommits,
      replayIdleMs: this.options.replayIdleMs,
      maxIdleGroups: this.options.maxIdleGroups,
      onError: (err) => this.options.onError?.(err),
      onEvents: (group, revision, events) => this.publish(group, revision, events),
      onAdvanced: (group, revision) => this.follow(group, revision),
    });
  }

  get size(): number {
    return this.connections;
  }

  register(app: TemplatedApp): void {
    const route = (format: StreamFormat) => (res: PendingResponse, req: HttpRequest) => {
      const rawId = req.getParameter(0) ?? '';
      const env = new URLSearchParams(req.getQuery() ?? '').get('env') || null;
      this.open(res, decodePathId(rawId), env, format, req.getHeader('last-event-id'));
    };
    registerRoutes(app, kStreamRoutes, { stream: route('flagwire'), ofrepStream: route('ofrep') });
  }

  /**
   * Answers 404/503 at once, or starts the stream (headers, a first comment, what `lastEventId` missed,
   * and `ready`) and subscribes. `lastEventId`: the Last-Event-ID header ('' when absent).
   */
  open(res: PendingResponse, projectId: string, env: string | null, format: StreamFormat = 'flagwire', lastEventId = ''): void {
    const { store, metrics, routes } = this.options;
    const route = format === 'ofrep' ? routes.ofrepStream : routes.stream;
    const fail = (status: number, body: Buffer | string) => {
      metrics?.request(route, status);
      send(res, status, body);
    };
    if (this.full) return fail(503, kTooMany);
    store.resetReadTxn();
    const project = getProject(store, projectId);
    if (project === undefined) return fail(404, notFound(notFoundDetail('project', projectId)));
    // Like the project route: env is checked on a multi-environment project and ignored on a single one.
    const watchEnv = project.kind === 'multi' ? env : null;
    if (watchEnv !== null && !project.environments.includes(watchEnv)) {
      return fail(404, notFound(`Unknown environment "${watchEnv}" for this project; ${validEnvironmentsText(project)}.`));
    }
    this.subscribe(res, project, watchEnv, { format }, route, (group) => this.replay(group, format, lastEventId));
  }

  /**
   * Starts a follower's stream of `project` in `env` (null: a single-environment project), checked by the
   * caller, counted under `route`: 503 at once when the feed is full or closing. Every stream's limits,
   * heartbeats and slow-reader drops apply; the stream ends once `allowed` says its credential no longer
   * holds (asked before each change and at each heartbeat), so a revoked token is sent nothing more.
   */
  openFollower(
    res: PendingResponse,
    project: Project,
    env: string | null,
    follower: StreamFollower,
    route: number,
    allowed: (store: FeedStore) => boolean,
  ): void {
    if (this.full) {
      this.options.metrics?.request(route, 503);
      send(res, 503, kTooMany);
      return;
    }
    this.options.store.resetReadTxn();
    this.subscribe(res, project, env, { format: follower, allowed }, route, (group) => follower.first(group, this.options.store));
  }

  private get full(): boolean {
    return this.closing || this.connections >= this.options.maxConnections;
  }

  /** Answers 200, subscribes the connection to the group, and sends the hello, `first` and `ready`. */
  private subscribe(
    res: PendingResponse,
    project: Project,
    watchEnv: string | null,
    kind: Omit<Watcher, 'connection'>,
    route: number,
    first: (group: Group<Watcher>) => string,
  ): void {
    const { store, metrics } = this.options;
    metrics?.request(route, 200);
    const connection = new SseConnection(res, {
      maxQueuedBytes: this.options.maxQueuedBytes,
      maxStallMs: this.options.maxStallMs,
      onDrop: () => {
        if (metrics) metrics.streamDropped++;
      },
    });
    this.poller.expireIdle(performance.now());
    const group = this.poller.group(project, watchEnv, store.revision());
    const watcher: Watcher = { ...kind, connection };
    group.watchers.add(watcher);
    this.connections++;
    trackAbort(res, () => {
      connection.aborted();
      this.unsubscribe(group, watcher);
    });
    res.cork(() => {
      res.writeStatus('200 OK');
      res.writeHeader('Content-Type', 'text/event-stream');
      res.writeHeader('Cache-Control', 'no-cache');
      res.writeHeader(kCorsOrigin[0], kCorsOrigin[1]);
      res.writeHeader(kNoSniff[0], kNoSniff[1]);
      // Proxies (nginx) must pass events on as they come.
      res.writeHeader('X-Accel-Buffering', 'no');
      const ready = event(group.seenRevision, 'ready', { seq: group.seenRevision });
      connection.send(kHello + first(group) + ready);
    });
    this.startTimers();
  }

  /** Ends every stream (shutdown) and stops polling. */
  close(): void {
    this.closing = true;
    this.stopTimers();
    for (const group of this.poller.all()) for (const { connection } of group.watchers) connection.end();
    this.poller.clear();
    this.connections = 0;
  }

  /** One poll: when the commit number moved, diff every watched project and send the events (change-poller.ts). */
  poll(): void {
    this.poller.poll();
  }

  /** Sends a group's events seen at `revision` to its connections (a refetch to OFREP's; followers' are follow's). */
  private publish(group: Group<Watcher>, revision: number, events: string): void {
    let refetch: string | null = null;
    for (const { connection, format } of group.watchers) {
      if (format === 'flagwire') connection.send(events);
      else if (format === 'ofrep') {
        refetch ??= refetchEvent(revision, group.configTag);
        connection.send(refetch);
      }
    }
  }

  /** A group brought to `revision`: each of its followers asked once, its answer sent to that follower's connections. */
  private follow(group: Group<Watcher>, revision: number): void {
    let said: Map<StreamFollower, string> | null = null;
    for (const watcher of group.watchers) {
      const { connection, format } = watcher;
      if (typeof format === 'string') continue;
      if (!this.stillAllowed(group, watcher)) continue;
      said ??= new Map();
      let events = said.get(format);
      if (events === undefined) {
        events = format.advanced(group, revision, this.options.store);
        said.set(format, events);
      }
      if (events !== '') connection.send(events);
    }
  }

  /**
   * What a reconnect missed since `lastEventId`: the logged events after it, or `reset` when the log
   * does not reach back that far, or the id is not a revision this node's copy has (another data dir's,
   * or on PostgreSQL a node further on than this one: the client then reloads, and may ask for its
   * revision with Flagwire-Min-Revision).
   */
  private replay(group: Group<Watcher>, format: StreamFormat, lastEventId: string): string {
    if (lastEventId === '') return '';
    const last = /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : -1;
    if (last < group.coveredFrom || last > group.seenRevision) {
      return format === 'ofrep' ? refetchEvent(group.seenRevision, null) : event(group.seenRevision, 'reset', { reason: kResetReason });
    }
    const missed = group.log.filter((logged) => logged.revision > last);
    if (missed.length === 0) return '';
    return format === 'ofrep' ? refetchEvent(group.seenRevision, group.configTag) : missed.map((logged) => logged.events).join('');
  }

  /** Whether a follower's connection may go on; one that may not is ended and unsubscribed. */
  private stillAllowed(group: Group<Watcher>, watcher: Watcher): boolean {
    if (watcher.allowed === undefined || watcher.allowed(this.options.store)) return true;
    watcher.connection.end();
    this.unsubscribe(group, watcher);
    return false;
  }

  private unsubscribe(group: Group<Watcher>, watcher: Watcher): void {
    if (!group.watchers.delete(watcher)) return;
    this.connections--;
    if (group.watchers.size === 0) this.poller.markIdle(group);
    if (this.connections === 0) this.stopTimers();
  }

  private startTimers(): void {
    if (this.heartbeatTimer !== null) return;
    this.poller.start();
    this.heartbeatTimer = setInterval(() => this.heartbeat(), this.options.heartbeatMs).unref();
  }

  private stopTimers(): void {
    this.poller.stop();
    if (this.heartbeatTimer !== null) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }

  private heartbeat(): void {
    const now = performance.now();
    this.poller.expireIdle(now);
    this.options.store.resetReadTxn();
    for (const group of this.poller.all()) {
      for (const watcher of group.watchers) {
        if (!this.stillAllowed(group, watcher)) continue;
        watcher.connection.checkStall(now);
        watcher.connection.send(kHeartbeat);
      }
    }
  }
}

function notFound(detail: string): string {
  return JSON.stringify(errorBody(new FlagwireError('NOT_FOUND', detail)));
}

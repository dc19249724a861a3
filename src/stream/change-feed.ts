// The change streams, as Server-Sent Events:
//   GET /v1/stream/project/{project_id}[?env=NAME]         Flagwire's events, one per changed record
//   GET /ofrep/v1/stream/project/{project_id}[?env=NAME]   OFREP's (ADR-0008): "refetch", one per commit
//
// How changes are seen: every write transaction of any process (this server's writer thread, and any
// console command run beside it) bumps the store's commit sequence number. While at least one stream
// is open, the main thread reads that number every `pollMs` (one LMDB get after a snapshot renewal);
// when it moved, each watched project's flags and audiences are read once and compared with the last
// snapshot, and every connection watching that project gets the events. Watching the writer's replies
// instead would miss the console's changes; the commit number sees both.
//
//   event: ready           data: {"seq": 42}                                 first, on every connection
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
// the flag's name, changed. Each event's `id:` is the commit sequence number it was seen at.
//
// Replay (Last-Event-ID): each project (and environment) watched keeps its last `replayCommits` commits'
// events, and stays known for `replayIdleMs` after its last stream closed (at most `maxIdleGroups` such).
// A reconnect whose Last-Event-ID is within that gets the events after it (on the OFREP stream: one
// refetchEvaluation); one beyond it, or unknown to this process, gets `reset` (OFREP: refetchEvaluation
// without etag): reload everything. A project unwatched meanwhile is compared once, on the reconnect.
import type { HttpRequest, TemplatedApp } from 'uWebSockets.js';
import { projectConfigTag } from '../eval/config-tag.js';
import { errorBody, FlagwireError } from '../errors.js';
import { kCorsOrigin, kNoSniff, send, trackAbort, type PendingResponse } from '../http/http.js';
import { kRouteOfrepStream, kRouteStream, type Metrics } from '../metrics/metrics.js';
import { validEnvironmentsText } from '../model/environments.js';
import { effectiveState } from '../model/flag-state.js';
import type { Flag } from '../model/flags.js';
import { notFoundDetail } from '../model/lookups.js';
import type { Project } from '../model/projects.js';
import type { SnapshotReader } from '../store/interfaces.js';
import { SseConnection } from './sse-connection.js';
import { decodePathId } from '../http/path-id.js';
import { registerRoutes } from '../http/route-table.js';

export type FeedStore = Pick<SnapshotReader, 'resetReadTxn' | 'configSeq' | 'getProject' | 'listFlags' | 'listAudiences' | 'getOrg'>;

export interface ChangeFeedOptions {
  store: FeedStore;
  metrics: Metrics | null;
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
  readonly format: StreamFormat;
}

/** One commit's events for a group, as sent to Flagwire streams. */
interface Logged {
  readonly seq: number;
  readonly events: string;
}

/** The connections watching one project (and environment), what they last saw, and its recent events. */
interface Group {
  readonly key: string;
  readonly projectId: string;
  readonly env: string | null;
  flags: Map<string, string>;
  audiences: Map<string, number>;
  /** projectConfigTag of the snapshot: the OFREP event's etag, the first part of the bulk ETag. */
  configTag: string;
  /** The commit number the snapshot reflects. */
  seenSeq: number;
  /** A client that has seen commit N >= coveredFrom misses nothing in `log`. */
  coveredFrom: number;
  readonly log: Logged[];
  readonly watchers: Set<Watcher>;
  /** performance.now() when its last connection closed. */
  idleSince: number;
}

const kDefaults = {
  pollMs: 200,
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
const kResetReason = 'Last-Event-ID is older than this server keeps (README: Change stream): reload every flag.';
const kTooMany = Buffer.from(
  JSON.stringify({ error: 'Service unavailable', detail: 'Too many open change streams on this server; retry later.' }),
);

export class ChangeFeed {
  private readonly groups = new Map<string, Group>();
  /** Groups without connections, kept for replay; in the order they became idle. */
  private readonly idle = new Map<string, Group>();
  private connections = 0;
  private lastSeq = -1;
  private pollTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private closing = false;
  private readonly options: Required<Omit<ChangeFeedOptions, 'metrics' | 'onError'>> & Pick<ChangeFeedOptions, 'metrics' | 'onError'>;

  constructor(options: ChangeFeedOptions) {
    this.options = { ...kDefaults, ...options };
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
    registerRoutes(app, { stream: route('flagwire'), ofrepStream: route('ofrep') });
  }

  /**
   * Answers 404/503 at once, or starts the stream (headers, a first comment, what `lastEventId` missed,
   * and `ready`) and subscribes. `lastEventId`: the Last-Event-ID header ('' when absent).
   */
  open(res: PendingResponse, projectId: string, env: string | null, format: StreamFormat = 'flagwire', lastEventId = ''): void {
    const { store, metrics } = this.options;
    const route = format === 'ofrep' ? kRouteOfrepStream : kRouteStream;
    const fail = (status: number, body: Buffer | string) => {
      metrics?.request(route, status);
      send(res, status, body);
    };
    if (this.closing || this.connections >= this.options.maxConnections) return fail(503, kTooMany);
    store.resetReadTxn();
    const project = store.getProject(projectId);
    if (project === undefined) return fail(404, notFound(notFoundDetail('project', projectId)));
    // Like the project route: env is checked on a multi-environment project and ignored on a single one.
    const watchEnv = project.kind === 'multi' ? env : null;
    if (watchEnv !== null && !project.environments.includes(watchEnv)) {
      return fail(404, notFound(`Unknown environment "${watchEnv}" for this project; ${validEnvironmentsText(project)}.`));
    }
    metrics?.request(route, 200);
    const connection = new SseConnection(res, {
      maxQueuedBytes: this.options.maxQueuedBytes,
      maxStallMs: this.options.maxStallMs,
      onDrop: () => {
        if (metrics) metrics.streamDropped++;
      },
    });
    this.expireIdle(performance.now());
    const group = this.group(project, watchEnv, store.configSeq());
    const watcher: Watcher = { connection, format };
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
      connection.send(kHello + this.replay(group, format, lastEventId) + event(group.seenSeq, 'ready', { seq: group.seenSeq }));
    });
    this.startTimers();
  }

  /** Ends every stream (shutdown) and stops polling. */
  close(): void {
    this.closing = true;
    this.stopTimers();
    for (const group of this.groups.values()) for (const { connection } of group.watchers) connection.end();
    this.groups.clear();
    this.idle.clear();
    this.connections = 0;
  }

  /** One poll: when the commit number moved, diff every watched project and send the events. */
  poll(): void {
    const { store } = this.options;
    try {
      store.resetReadTxn();
      const seq = store.configSeq();
      if (seq === this.lastSeq) return;
      this.lastSeq = seq;
      // Idle groups catch up when a stream reopens them (group()): nobody is waiting for their events.
      for (const group of this.groups.values()) if (group.watchers.size > 0) this.advance(group, seq);
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  /** Brings a group's snapshot to commit `seq`: logs the events and sends them to its connections. */
  private advance(group: Group, seq: number): void {
    if (group.seenSeq === seq) return;
    const events = this.diff(group, seq);
    group.seenSeq = seq;
    if (events === '') return;
    group.log.push({ seq, events });
    while (group.log.length > this.options.replayCommits) group.coveredFrom = group.log.shift()!.seq;
    let refetch: string | null = null;
    for (const { connection, format } of group.watchers) {
      if (format === 'flagwire') connection.send(events);
      else {
        refetch ??= refetchEvent(seq, group.configTag);
        connection.send(refetch);
      }
    }
  }

  /**
   * What a reconnect missed since `lastEventId`: the logged events after it, or `reset` when the log
   * does not reach back that far (or the id is not one of this server's commit numbers).
   */
  private replay(group: Group, format: StreamFormat, lastEventId: string): string {
    if (lastEventId === '') return '';
    const last = /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : -1;
    if (last < group.coveredFrom || last > group.seenSeq) {
      return format === 'ofrep' ? refetchEvent(group.seenSeq, null) : event(group.seenSeq, 'reset', { reason: kResetReason });
    }
    const missed = group.log.filter((logged) => logged.seq > last);
    if (missed.length === 0) return '';
    return format === 'ofrep' ? refetchEvent(group.seenSeq, group.configTag) : missed.map((logged) => logged.events).join('');
  }

  /** The group of a project and environment: a live or idle one brought up to `seq`, or a new baseline. */
  private group(project: Project, env: string | null, seq: number): Group {
    const key = `${project.id}\u0000${env ?? ''}`;
    let group = this.groups.get(key);
    if (group === undefined) {
      group = {
        key,
        projectId: project.id,
        env,
        flags: new Map(),
        audiences: new Map(),
        configTag: '',
        seenSeq: seq,
        coveredFrom: seq,
        log: [],
        watchers: new Set(),
        idleSince: 0,
      };
      // The baseline: what exists now is not reported, only what changes from here on.
      this.diff(group, -1);
      this.groups.set(key, group);
    } else {
      this.idle.delete(key);
      this.advance(group, seq);
    }
    return group;
  }

  private unsubscribe(group: Group, watcher: Watcher): void {
    if (!group.watchers.delete(watcher)) return;
    this.connections--;
    if (group.watchers.size === 0) {
      group.idleSince = performance.now();
      this.idle.set(group.key, group);
    }
    if (this.connections === 0) this.stopTimers();
  }

  /** Forgets idle groups past `replayIdleMs`, and the oldest beyond `maxIdleGroups`. */
  private expireIdle(now: number): void {
    for (const [key, group] of this.idle) {
      if (this.idle.size <= this.options.maxIdleGroups && now - group.idleSince <= this.options.replayIdleMs) break;
      this.idle.delete(key);
      this.groups.delete(key);
    }
  }

  /** Updates the group's snapshot; returns the events (as one chunk of text) for what changed (none for seq -1: the baseline). */
  private diff(group: Group, seq: number): string {
    const { store } = this.options;
    let events = '';
    const flags = new Map<string, string>();
    const flagList = store.listFlags(group.projectId);
    for (const flag of flagList) {
      const signature = flagSignature(flag, group.env);
      flags.set(flag.id, signature);
      if (group.flags.get(flag.id) !== signature) events += event(seq, 'flag', { id: flag.id, updatedAt: flag.updatedAt });
    }
    for (const id of group.flags.keys()) if (!flags.has(id)) events += event(seq, 'flag-deleted', { id });
    const audiences = new Map<string, number>();
    const audienceList = store.listAudiences(group.projectId);
    for (const audience of audienceList) {
      audiences.set(audience.id, audience.updatedAt);
      if (group.audiences.get(audience.id) !== audience.updatedAt)
        events += event(seq, 'audience', { id: audience.id, updatedAt: audience.updatedAt });
    }
    group.flags = flags;
    group.audiences = audiences;
    const project = store.getProject(group.projectId);
    if (project !== undefined) {
      const org = project.orgId === null ? null : (store.getOrg(project.orgId) ?? null);
      group.configTag = projectConfigTag(project, flagList, audienceList, org);
    }
    return seq === -1 ? '' : events;
  }

  private startTimers(): void {
    if (this.pollTimer !== null) return;
    this.lastSeq = this.options.store.configSeq();
    this.pollTimer = setInterval(() => this.poll(), this.options.pollMs).unref();
    this.heartbeatTimer = setInterval(() => this.heartbeat(), this.options.heartbeatMs).unref();
  }

  private stopTimers(): void {
    if (this.pollTimer !== null) clearInterval(this.pollTimer);
    if (this.heartbeatTimer !== null) clearInterval(this.heartbeatTimer);
    this.pollTimer = null;
    this.heartbeatTimer = null;
  }

  private heartbeat(): void {
    const now = performance.now();
    this.expireIdle(now);
    for (const group of this.groups.values()) {
      for (const { connection } of group.watchers) {
        connection.checkStall(now);
        connection.send(kHeartbeat);
      }
    }
  }
}

/** What a watcher compares: the version, or with an environment that environment's state and the name. */
function flagSignature(flag: Flag, env: string | null): string {
  if (env === null || flag.kind === 'flag') return String(flag.updatedAt);
  return JSON.stringify([flag.name, effectiveState(flag, env)]);
}

function event(seq: number, name: string, data: object): string {
  return `id: ${seq}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** OFREP ADR-0008's change event; without etag when the client must reload whatever it has. */
function refetchEvent(seq: number, configTag: string | null): string {
  return event(seq, 'message', configTag === null ? { type: 'refetchEvaluation' } : { type: 'refetchEvaluation', etag: configTag });
}

function notFound(detail: string): string {
  return JSON.stringify(errorBody(new FlagwireError('NOT_FOUND', detail)));
}

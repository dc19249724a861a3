// The change stream: GET /v1/stream/project/{project_id}[?env=NAME] as Server-Sent Events.
//
// How changes are seen: every write transaction of any process (this server's writer thread, and any
// console command run beside it) bumps the store's commit sequence number. While at least one stream
// is open, the main thread reads that number every `pollMs` (one LMDB get after a snapshot renewal);
// when it moved, each watched project's flags and audiences are read once and compared with the last
// snapshot, and every connection watching that project gets one event per changed record. Watching
// the writer's replies instead would miss the console's changes; the commit number sees both.
//
//   event: flag            data: {"id": "...", "updatedAt": 1700000000000}   created or changed
//   event: flag-deleted    data: {"id": "..."}
//   event: audience        data: {"id": "...", "updatedAt": 1700000000000}   rules or name changed
//   : heartbeat                                                             every `heartbeatMs`
//
// Events carry ids and versions only, never cohorts, rules or tokens: a client refetches what it needs.
// With `env` (multi-environment projects) a flag event is sent only when that environment's state, or
// the flag's name, changed. Each event's `id:` is the commit sequence number it was seen at.
import type { TemplatedApp } from 'uWebSockets.js';
import { errorBody, FlagwireError } from '../errors.js';
import { kCorsOrigin, send, trackAbort, type PendingResponse } from '../http/http.js';
import { kRouteStream, type Metrics } from '../metrics/metrics.js';
import { validEnvironmentsText } from '../model/environments.js';
import { effectiveState } from '../model/flag-state.js';
import type { Flag } from '../model/flags.js';
import { notFoundDetail } from '../model/lookups.js';
import type { Project } from '../model/projects.js';
import type { SnapshotReader } from '../store/interfaces.js';
import { SseConnection } from './sse-connection.js';
import { decodePathId } from '../http/path-id.js';

export type FeedStore = Pick<SnapshotReader, 'resetReadTxn' | 'configSeq' | 'getProject' | 'listFlags' | 'listAudiences'>;

export interface ChangeFeedOptions {
  store: FeedStore;
  metrics: Metrics | null;
  pollMs?: number;
  heartbeatMs?: number;
  maxConnections?: number;
  maxQueuedBytes?: number;
  maxStallMs?: number;
  onError?(err: unknown): void;
}

/** The connections watching one project (and environment), and what they last saw. */
interface Group {
  readonly projectId: string;
  readonly env: string | null;
  flags: Map<string, string>;
  audiences: Map<string, number>;
  readonly connections: Set<SseConnection>;
}

const kDefaults = {
  pollMs: 200,
  heartbeatMs: 15_000,
  maxConnections: 10_000,
  maxQueuedBytes: 64 * 1024,
  maxStallMs: 30_000,
};
const kHeartbeat = ': heartbeat\n\n';
// retry: how long EventSource waits before reconnecting after the stream ends (ms).
const kHello = 'retry: 2000\n: connected\n\n';
const kTooMany = Buffer.from(JSON.stringify({ error: 'Service unavailable', detail: 'Too many open change streams on this server; retry later.' }));

export class ChangeFeed {
  private readonly groups = new Map<string, Group>();
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
    app.get('/v1/stream/project/:project_id', (res: PendingResponse, req) => {
      const rawId = req.getParameter(0) ?? '';
      const env = new URLSearchParams(req.getQuery() ?? '').get('env') || null;
      this.open(res, decodePathId(rawId), env);
    });
  }

  /** Answers 404/503 at once, or starts the stream (headers and a first comment) and subscribes. */
  open(res: PendingResponse, projectId: string, env: string | null): void {
    const { store, metrics } = this.options;
    const fail = (status: number, body: Buffer | string) => {
      metrics?.request(kRouteStream, status);
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
    metrics?.request(kRouteStream, 200);
    const connection = new SseConnection(res, {
      maxQueuedBytes: this.options.maxQueuedBytes,
      maxStallMs: this.options.maxStallMs,
      onDrop: () => {
        if (metrics) metrics.streamDropped++;
      },
    });
    const group = this.group(project, watchEnv);
    group.connections.add(connection);
    this.connections++;
    trackAbort(res, () => {
      connection.aborted();
      this.unsubscribe(group, connection);
    });
    res.cork(() => {
      res.writeStatus('200 OK');
      res.writeHeader('Content-Type', 'text/event-stream');
      res.writeHeader('Cache-Control', 'no-cache');
      res.writeHeader(kCorsOrigin[0], kCorsOrigin[1]);
      // Proxies (nginx) must pass events on as they come.
      res.writeHeader('X-Accel-Buffering', 'no');
      connection.send(kHello);
    });
    this.startTimers();
  }

  /** Ends every stream (shutdown) and stops polling. */
  close(): void {
    this.closing = true;
    this.stopTimers();
    for (const group of this.groups.values()) for (const connection of group.connections) connection.end();
    this.groups.clear();
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
      for (const group of this.groups.values()) {
        const events = this.diff(group, seq);
        if (events === '') continue;
        for (const connection of group.connections) connection.send(events);
      }
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  private group(project: Project, env: string | null): Group {
    const key = `${project.id}\u0000${env ?? ''}`;
    let group = this.groups.get(key);
    if (group === undefined) {
      group = { projectId: project.id, env, flags: new Map(), audiences: new Map(), connections: new Set() };
      // The baseline: what exists now is not reported, only what changes from here on.
      this.diff(group, -1);
      this.groups.set(key, group);
    }
    return group;
  }

  private unsubscribe(group: Group, connection: SseConnection): void {
    if (!group.connections.delete(connection)) return;
    this.connections--;
    if (group.connections.size === 0) this.groups.delete(`${group.projectId}\u0000${group.env ?? ''}`);
    if (this.connections === 0) this.stopTimers();
  }

  /** Updates the group's snapshot; returns the events (as one chunk of text) for what changed (none for seq -1: the baseline). */
  private diff(group: Group, seq: number): string {
    const { store } = this.options;
    let events = '';
    const flags = new Map<string, string>();
    for (const flag of store.listFlags(group.projectId)) {
      const signature = flagSignature(flag, group.env);
      flags.set(flag.id, signature);
      if (group.flags.get(flag.id) !== signature) events += event(seq, 'flag', { id: flag.id, updatedAt: flag.updatedAt });
    }
    for (const id of group.flags.keys()) if (!flags.has(id)) events += event(seq, 'flag-deleted', { id });
    const audiences = new Map<string, number>();
    for (const audience of store.listAudiences(group.projectId)) {
      audiences.set(audience.id, audience.updatedAt);
      if (group.audiences.get(audience.id) !== audience.updatedAt) events += event(seq, 'audience', { id: audience.id, updatedAt: audience.updatedAt });
    }
    group.flags = flags;
    group.audiences = audiences;
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
    for (const group of this.groups.values()) {
      for (const connection of group.connections) {
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

function notFound(detail: string): string {
  return JSON.stringify(errorBody(new FlagwireError('NOT_FOUND', detail)));
}


// The change streams' polling side: what changed in the store, per watched project (and environment).
// While at least one stream is open, the store's commit sequence number is read every `pollMs` (one
// LMDB get after a snapshot renewal); when it moved, each watched project's flags and audiences are
// read once and compared with the last snapshot, and the events for what changed are logged (for
// replay) and handed to the project's watchers (change-feed.ts serves them as SSE). Events are
// labelled with the store's revision of that snapshot (StoreReader.revision: PostgreSQL's on every node
// of a cluster), the number every API answer names too (src/http/revisions.ts).
import { Periodic } from '../background/periodic.js';
import { projectConfigTag } from '../evaluation/engine/config-tag.js';
import { effectiveState } from '../flags/records/flag-state.js';
import type { Flag } from '../model/flags.js';
import type { Project } from '../model/projects.js';
import type { SnapshotReader } from '../store/interfaces.js';
import { event } from './events.js';
import { projectFragments } from '../flags/records/fragment-records.js';
import { ruleRefs } from '../targeting/refs.js';
import { listFlags } from '../flags/records/flag-store.js';
import { getOrg } from '../model/records/org-records.js';
import { getProject, listAudiences } from '../model/records/project-records.js';

export type FeedStore = Pick<SnapshotReader, 'resetReadTxn' | 'configSeq' | 'revision' | 'listKeyedBy' | 'getKeyed'>;

/** One commit's events for a group, as sent to Flagwire streams; `revision`: the store revision they were seen at, their ids. */
export interface Logged {
  readonly revision: number;
  readonly events: string;
}

/** The watchers `W` of one project (and environment), what they last saw, and its recent events. */
export interface Group<W> {
  readonly key: string;
  readonly projectId: string;
  readonly env: string | null;
  flags: Map<string, string>;
  audiences: Map<string, number>;
  /** projectConfigTag of the snapshot: the OFREP event's etag, the first part of the bulk ETag. */
  configTag: string;
  /** The store revision the snapshot reflects. */
  seenRevision: number;
  /** A client that has seen revision N >= coveredFrom misses nothing in `log`. */
  coveredFrom: number;
  readonly log: Logged[];
  readonly watchers: Set<W>;
  /** performance.now() when its last watcher left. */
  idleSince: number;
}

export interface ChangePollerOptions<W> {
  store: FeedStore;
  pollMs: number;
  replayCommits: number;
  replayIdleMs: number;
  maxIdleGroups: number;
  onError?(err: unknown): void;
  /** A group's events seen at store revision `revision` (one chunk of text, never empty), for its watchers. */
  onEvents?(group: Group<W>, revision: number, events: string): void;
  /**
   * A watched group brought to store revision `revision`, whether or not anything it reports changed:
   * for a watcher that derives more from the project than the events name (the sync service's flag
   * sets also follow the organisation's plan: src/sync/sync-server.ts).
   */
  onAdvanced?(group: Group<W>, revision: number): void;
  /**
   * A poll found a new commit, at store revision `revision`, after the groups were advanced: for a
   * watcher of the whole store rather than of a project (the relay service's streams: src/relay/).
   */
  onCommit?(revision: number): void;
}

export class ChangePoller<W> {
  private readonly groups = new Map<string, Group<W>>();
  /** Groups without watchers, kept for replay; in the order they became idle. */
  private readonly idle = new Map<string, Group<W>>();
  private lastSeq = -1;
  private readonly polls: Periodic;
  private polling = false;

  constructor(private readonly options: ChangePollerOptions<W>) {
    this.polls = new Periodic(() => this.poll(), { intervalMs: options.pollMs, onError: (err) => options.onError?.(err) });
  }

  /** Every group, watched or idle. */
  all(): IterableIterator<Group<W>> {
    return this.groups.values();
  }

  /** Starts polling (if not polling already), from the store's commit number now. */
  start(): void {
    if (this.polling) return;
    this.polling = true;
    this.lastSeq = this.options.store.configSeq();
    this.polls.start();
  }

  stop(): void {
    this.polling = false;
    // A poll is synchronous: none is left running to wait for.
    void this.polls.stop();
  }

  /** Stops polling and forgets every group. */
  clear(): void {
    this.stop();
    this.groups.clear();
    this.idle.clear();
  }

  /** One poll: when the commit number moved, diff every watched project and hand out the events. */
  poll(): void {
    const { store } = this.options;
    try {
      store.resetReadTxn();
      const seq = store.configSeq();
      if (seq === this.lastSeq) return;
      this.lastSeq = seq;
      // The commit number says whether anything a stream reports changed; the events are labelled with
      // the revision (on PostgreSQL it also moves for commits no stream reports: token activity, usage).
      const revision = store.revision();
      // Idle groups catch up when a stream reopens them (group()): nobody is waiting for their events.
      for (const group of this.groups.values()) if (group.watchers.size > 0) this.advance(group, revision);
      this.options.onCommit?.(revision);
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  /** Brings a group's snapshot to store revision `revision`: logs the events and hands them to its watchers. */
  private advance(group: Group<W>, revision: number): void {
    if (group.seenRevision === revision) return;
    const events = this.diff(group, revision);
    group.seenRevision = revision;
    if (events !== '') {
      group.log.push({ revision, events });
      while (group.log.length > this.options.replayCommits) group.coveredFrom = group.log.shift()!.revision;
      this.options.onEvents?.(group, revision, events);
    }
    this.options.onAdvanced?.(group, revision);
  }

  /** The group of a project and environment: a live or idle one brought up to `revision`, or a new baseline. */
  group(project: Project, env: string | null, revision: number): Group<W> {
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
        seenRevision: revision,
        coveredFrom: revision,
        log: [],
        watchers: new Set(),
        idleSince: 0,
      };
      // The baseline: what exists now is not reported, only what changes from here on.
      this.diff(group, -1);
      this.groups.set(key, group);
    } else {
      this.idle.delete(key);
      this.advance(group, revision);
    }
    return group;
  }

  /** Keeps a group whose last watcher left, for replay (expireIdle forgets it later). */
  markIdle(group: Group<W>): void {
    group.idleSince = performance.now();
    this.idle.set(group.key, group);
  }

  /** Forgets idle groups past `replayIdleMs`, and the oldest beyond `maxIdleGroups`. */
  expireIdle(now: number): void {
    for (const [key, group] of this.idle) {
      if (this.idle.size <= this.options.maxIdleGroups && now - group.idleSince <= this.options.replayIdleMs) break;
      this.idle.delete(key);
      this.groups.delete(key);
    }
  }

  /** Updates the group's snapshot; returns the events (as one chunk of text) for what changed (none for revision -1: the baseline). */
  private diff(group: Group<W>, revision: number): string {
    const { store } = this.options;
    let events = '';
    const flags = new Map<string, string>();
    const flagList = listFlags(store, group.projectId);
    const fragmentsAt = projectFragments(store, group.projectId)?.updatedAt;
    for (const flag of flagList) {
      const signature = flagSignature(flag, group.env, fragmentsAt);
      flags.set(flag.id, signature);
      if (group.flags.get(flag.id) !== signature) events += event(revision, 'flag', { id: flag.id, updatedAt: flag.updatedAt });
    }
    for (const id of group.flags.keys()) if (!flags.has(id)) events += event(revision, 'flag-deleted', { id });
    const audiences = new Map<string, number>();
    const audienceList = listAudiences(store, group.projectId);
    for (const audience of audienceList) {
      audiences.set(audience.id, audience.updatedAt);
      if (group.audiences.get(audience.id) !== audience.updatedAt)
        events += event(revision, 'audience', { id: audience.id, updatedAt: audience.updatedAt });
    }
    group.flags = flags;
    group.audiences = audiences;
    const project = getProject(store, group.projectId);
    if (project !== undefined) {
      const org = project.orgId === null ? null : (getOrg(store, project.orgId) ?? null);
      group.configTag = projectConfigTag(project, flagList, audienceList, org, fragmentsAt);
    }
    return revision === -1 ? '' : events;
  }
}

/**
 * What a watcher compares: the version, or with an environment that environment's state and the name;
 * and, for a flag whose rule uses the project's shared fragments, their version (`fragmentsAt`: a
 * fragment changed changes the answers of every flag that uses it, which is then reported changed).
 */
function flagSignature(flag: Flag, env: string | null, fragmentsAt: number | undefined): string {
  const own = env === null || flag.kind === 'flag' ? String(flag.updatedAt) : JSON.stringify([flag.name, effectiveState(flag, env)]);
  return fragmentsAt !== undefined && usesFragments(flag, env) ? `${own}+${fragmentsAt}` : own;
}

/** Whether the flag's rule (in `env`; every environment's when null) names a shared fragment. */
function usesFragments(flag: Flag, env: string | null): boolean {
  const states = flag.kind === 'flag' ? [flag.state] : env === null ? Object.values(flag.environments) : [effectiveState(flag, env)];
  return states.some((state) => state.typed !== undefined && ruleRefs(state.typed.targeting).size > 0);
}

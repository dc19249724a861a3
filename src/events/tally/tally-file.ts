// The tally file: a second LMDB file in the data dir (tally.mdb, declared in tally-storage.ts and opened
// by the store's src/store/side-file.ts) for what clients report of their
// subjects, per project environment: each subject's first exposure to an experiment, its running totals
// per metric, and per experiment, variant and metric the exact sums the statistics are read from. Its
// own file, so these writes never wait for the configuration's write lock nor add to its change log;
// they are made by the front end's threads in lmdb-js's batched asynchronous transactions (never the
// writer thread), and a transaction's promise settles once its commit is on disk.
//
// Key layouts (ordered array keys; the scope is [projectId, environment], '' for a single project's):
//   batches      [projectId, environment, batchId]                  -> {at, answer}
//   batchExpiry  [at, projectId, environment, batchId]              -> null (what to forget when)
//   subjects     [projectId, environment, subject]                  -> the subject's whole state: its first
//                exposure to each experiment, its running total per metric, its totals per experiment
//                and metric before and after exposure (pairs in arrays: names are the clients', and an
//                object keyed by them could be given "__proto__")
//   arms         [projectId, environment, experiment, variant]          -> subjects
//   sums         [projectId, environment, experiment, variant, metric]  -> MetricSums
//   metricNames  [projectId, environment, metric] -> null: the metric names counted there that no
//                experiment declared (src/events/tally.ts bounds how many)
//   usage        ['subjects', projectId, environment] -> subjects with a state (the storage limit's count)
//                ['rawBytes', projectId]              -> the bytes of the project's raw events kept
//                ['rawLast']                          -> [at, seq] of the raw event stored last
// Raw events, kept only for a project with a retention. at: when it was stored (Unix ms), never before
// the one stored before it; seq: its place among those stored in that millisecond. So [at, seq] orders
// a scope's raw events exactly as their transactions applied them (commits are serial), whichever
// thread's clock stamped its batch: replayed in that order they give the statistics bit for bit.
//   raw          [projectId, environment, at, seq]           -> the event as received, with when it expires
//   rawExpiry    [expiresAt, projectId, environment, at, seq] -> null (what to forget when, in time order)
//   rawSubjects  [projectId, environment, subject, at, seq]  -> null (a subject's raw events, to erase them)
// A subject's state is one read and one write however many of its events a batch holds, and erasing a
// subject is one record (and what it added to the sums).
// Totals and sums are integers of millionths as BigInt, stored as decimal strings: exact, so sums kept
// as events arrive equal those recomputed from the events, bit for bit, in any order of addition.
import type { Database, RootDatabase } from 'lmdb';
import { openSideFile, sideFileExists } from '../../store/side-file.js';
import { kTallyFile } from './tally-storage.js';

/** Whose events: a project and one of its environments ('' for a project without environments). */
export interface TallyScope {
  readonly projectId: string;
  readonly environment: string;
}

/** A subject's first exposure to an experiment: the variant it fixed, and when (Unix ms). */
export interface FirstExposure {
  readonly variant: string;
  readonly at: number;
}

/** A subject's running total of a metric: how many events, and their values summed (millionths). */
export interface SubjectTotal {
  readonly events: number;
  readonly total: bigint;
}

/** A subject's totals of a metric in an experiment: before its first exposure (the covariate) and after. */
export interface SubjectInExperiment {
  readonly pre: SubjectTotal;
  readonly post: SubjectTotal;
}

/** A subject's state, as a batch reads and changes it. */
export interface SubjectState {
  /** Experiment -> its first exposure. */
  readonly exposures: Map<string, FirstExposure>;
  /** Metric -> the running total of every outcome. */
  readonly totals: Map<string, SubjectTotal>;
  /** Experiment -> metric -> the totals before and after exposure: a map for every experiment of `exposures`. */
  readonly inExperiments: Map<string, Map<string, SubjectInExperiment>>;
}

/**
 * An experiment's variant's sums of a metric over its subjects, each subject's totals x (before its
 * exposure) and y (after): Σ events, subjects with an event, Σy, Σy², the same of x, and Σxy.
 * Values in millionths (squares and products in millionths squared).
 */
export interface MetricSums {
  events: number;
  subjects: number;
  sum: bigint;
  sumOfSquares: bigint;
  covariateEvents: number;
  covariateSubjects: number;
  covariateSum: bigint;
  covariateSumOfSquares: bigint;
  sumOfProducts: bigint;
}

/** An event as a client sent it (its fields checked), kept while its project keeps raw events. */
export interface RawEvent {
  readonly kind: 'exposure' | 'track';
  readonly key: string;
  readonly targetingKey: string;
  readonly variant: string | null;
  /** A track's value (1 when none was sent); null for an exposure. */
  readonly value: number | null;
  readonly details: Readonly<Record<string, string | number | boolean | null>> | null;
  readonly timestamp: number;
  /** When it was stored, Unix ms. */
  readonly storedAt: number;
}

/**
 * The bytes a raw event counts toward its project's (FLAGWIRE_RAW_EVENT_BYTES_PER_PROJECT), `json` its
 * JSON: that and its keys here (the subject's twice, the rest thrice). PostgreSQL's tally counts the
 * same, so a project's limit holds as many events on either store.
 */
export function rawEventBytes(scope: TallyScope, json: string, targetingKey: string): number {
  return Buffer.byteLength(json) + 3 * (scope.projectId.length + scope.environment.length + 40) + 2 * targetingKey.length;
}

/** A raw event as stored: the event, when it expires, and its bytes as counted toward its project's. */
interface StoredRaw {
  readonly event: RawEvent;
  readonly expiresAt: number;
  readonly bytes: number;
}

/** A batch already counted: its answer, given again to a retry of it. */
export interface CountedBatch {
  readonly at: number;
  readonly answer: unknown;
}

/** The reads and writes of one transaction of the tally file; reads see the transaction's own writes. */
export interface TallyTxn {
  batch(scope: TallyScope, batchId: string): CountedBatch | undefined;
  putBatch(scope: TallyScope, batchId: string, batch: CountedBatch): void;
  /** Forgets up to `limit` batches counted before `before` (Unix ms); returns how many. */
  forgetBatches(before: number, limit: number): number;
  /** A subject's state; an empty one for a subject not seen yet. */
  subject(scope: TallyScope, subject: string): SubjectState;
  putSubject(scope: TallyScope, subject: string, state: SubjectState): void;
  /** Forgets a subject's state (what it added to the sums is the caller's to take back first). */
  removeSubject(scope: TallyScope, subject: string): void;
  arm(scope: TallyScope, experiment: string, variant: string): number;
  putArm(scope: TallyScope, experiment: string, variant: string, subjects: number): void;
  sums(scope: TallyScope, experiment: string, variant: string, metric: string): MetricSums | undefined;
  putSums(scope: TallyScope, experiment: string, variant: string, metric: string, sums: MetricSums): void;
  /** Subjects of `scope` with a state, as counted by addSubjects. */
  subjectCount(scope: TallyScope): number;
  addSubjects(scope: TallyScope, delta: number): void;
  /** The metric names counted in `scope` that no experiment of it declared, as put by putUndeclaredMetrics. */
  undeclaredMetrics(scope: TallyScope): string[];
  putUndeclaredMetrics(scope: TallyScope, metrics: readonly string[]): void;
  /**
   * Keeps `events`, in their order, stored at `now` (or at the time of the raw event stored last, if
   * that is later), for `keepMs`; counts their bytes toward their project's.
   */
  putRawEvents(scope: TallyScope, events: readonly Omit<RawEvent, 'storedAt'>[], now: number, keepMs: number): void;
  /** Forgets up to `limit` raw events (any project's) that expired before `now`; returns how many. */
  forgetRawEvents(now: number, limit: number): number;
  /**
   * Where the raw events of `subject` in `scope` end now (the key of its last one), null when it has
   * none: an erasure removes them up to there, a bounded step at a time (removeRawEvents), and leaves
   * those of a later subject of the same key.
   */
  rawEventsEnd(scope: TallyScope, subject: string): RawCursor | null;
  /** The bytes of the raw events `projectId` keeps. */
  rawBytes(projectId: string): number;
  /** When the first raw event of these scopes expires (Unix ms); null when they keep none. */
  firstRawExpiry(scopes: readonly TallyScope[]): number | null;
}

/** Raw events stored from `from` to before `to` (Unix ms), those expired by `now` left out. */
export interface RawRange {
  readonly from: number;
  readonly to: number;
  readonly now: number;
}

/** Where the next page of raw events starts: after the event of this key. */
export type RawCursor = readonly (string | number)[];

/** A page of raw events, and where the next one starts (null: this one was the last). */
export interface RawPage {
  readonly events: RawEvent[];
  readonly last: RawCursor | null;
}

/**
 * Where an export reads raw events, a page at a time, in the order they were counted: the tally file,
 * or PostgreSQL's tally (pg-tally.ts).
 */
export interface RawEventPages {
  rawEvents(scope: TallyScope, range: RawRange, after: RawCursor | null, limit: number): RawPage | Promise<RawPage>;
}

/** An experiment's statistics as stored: each variant's subjects, and its sums per metric. */
export interface ExperimentTally {
  readonly arms: readonly { readonly variant: string; readonly subjects: number }[];
  readonly sums: readonly { readonly variant: string; readonly metric: string; readonly sums: MetricSums }[];
}

type Key = (string | number)[];

/** A subject's state as stored: [experiment, variant, at][], [metric, events, total][], [experiment, metric, preEvents, pre, postEvents, post][]. */
export interface StoredSubject {
  e: [string, string, number][];
  t: [string, number, string][];
  x: [string, string, number, string, number, string][];
}

export function toSubject(stored: StoredSubject | undefined): SubjectState {
  const state: SubjectState = { exposures: new Map(), totals: new Map(), inExperiments: new Map() };
  if (stored === undefined) return state;
  // Every experiment the subject is in has its map of metrics, an empty one included (it stores no row).
  for (const [experiment, variant, at] of stored.e) {
    state.exposures.set(experiment, { variant, at });
    state.inExperiments.set(experiment, new Map());
  }
  for (const [metric, events, total] of stored.t) state.totals.set(metric, { events, total: BigInt(total) });
  for (const [experiment, metric, preEvents, pre, postEvents, post] of stored.x)
    state.inExperiments
      .get(experiment)!
      .set(metric, { pre: { events: preEvents, total: BigInt(pre) }, post: { events: postEvents, total: BigInt(post) } });
  return state;
}

export function fromSubject(state: SubjectState): StoredSubject {
  const stored: StoredSubject = { e: [], t: [], x: [] };
  for (const [experiment, { variant, at }] of state.exposures) stored.e.push([experiment, variant, at]);
  for (const [metric, { events, total }] of state.totals) stored.t.push([metric, events, String(total)]);
  for (const [experiment, metrics] of state.inExperiments)
    for (const [metric, { pre, post }] of metrics)
      stored.x.push([experiment, metric, pre.events, String(pre.total), post.events, String(post.total)]);
  return stored;
}

type StoredSums = { [K in keyof MetricSums]: MetricSums[K] extends bigint ? string : number };

const fromSums = (s: StoredSums): MetricSums => ({
  events: s.events,
  subjects: s.subjects,
  sum: BigInt(s.sum),
  sumOfSquares: BigInt(s.sumOfSquares),
  covariateEvents: s.covariateEvents,
  covariateSubjects: s.covariateSubjects,
  covariateSum: BigInt(s.covariateSum),
  covariateSumOfSquares: BigInt(s.covariateSumOfSquares),
  sumOfProducts: BigInt(s.sumOfProducts),
});
const toStoredSums = (s: MetricSums): StoredSums => ({
  events: s.events,
  subjects: s.subjects,
  sum: String(s.sum),
  sumOfSquares: String(s.sumOfSquares),
  covariateEvents: s.covariateEvents,
  covariateSubjects: s.covariateSubjects,
  covariateSum: String(s.covariateSum),
  covariateSumOfSquares: String(s.covariateSumOfSquares),
  sumOfProducts: String(s.sumOfProducts),
});

export class TallyFile implements TallyTxn, RawEventPages {
  private readonly batches: Database<CountedBatch, Key>;
  private readonly batchExpiry: Database<null, Key>;
  private readonly subjects: Database<StoredSubject, Key>;
  private readonly arms: Database<number, Key>;
  private readonly sumsDb: Database<StoredSums, Key>;
  private readonly metricNames: Database<null, Key>;
  private readonly usage: Database<number | [number, number], Key>;
  private readonly raw: Database<StoredRaw, Key>;
  private readonly rawExpiry: Database<null, Key>;
  private readonly rawSubjects: Database<null, Key>;

  private readonly root: RootDatabase;

  private constructor(dataDir: string) {
    const file = openSideFile(dataDir, kTallyFile);
    this.root = file.root;
    this.batches = file.db('batches');
    this.batchExpiry = file.db('batchExpiry');
    this.subjects = file.db('subjects');
    this.arms = file.db('arms');
    this.sumsDb = file.db('sums');
    this.metricNames = file.db('metricNames');
    this.usage = file.db('usage');
    this.raw = file.db('raw');
    this.rawExpiry = file.db('rawExpiry');
    this.rawSubjects = file.db('rawSubjects');
  }

  /** Whether `dataDir` has a tally file: a node that was never sent an event has none. */
  static exists(dataDir: string): boolean {
    return sideFileExists(dataDir, kTallyFile);
  }

  /** Opens (creating if needed) the tally file of `dataDir`. */
  static open(dataDir: string): TallyFile {
    return new TallyFile(dataDir);
  }

  /**
   * Runs `fn` in one write transaction (lmdb-js batches it with others waiting) and settles once the
   * commit is durable; `fn` must be synchronous and throw nothing it wants kept.
   */
  transact<T>(fn: (txn: TallyTxn) => T): Promise<T> {
    return this.root.transaction(() => fn(this));
  }

  /**
   * An experiment's arms and sums, read now: of every metric, or only of `metrics` (each looked up by
   * its key per arm, so a read of a few metrics costs as many rows however many names are counted).
   */
  experiment(scope: TallyScope, experiment: string, metrics: readonly string[] | null = null): ExperimentTally {
    const prefix = [scope.projectId, scope.environment, experiment];
    const arms = withPrefix(this.arms, prefix).map(({ key, value }) => ({ variant: String(key[3]), subjects: value }));
    if (metrics === null)
      return {
        arms,
        sums: withPrefix(this.sumsDb, prefix).map(({ key, value }) => ({
          variant: String(key[3]),
          metric: String(key[4]),
          sums: fromSums(value),
        })),
      };
    const sums: { variant: string; metric: string; sums: MetricSums }[] = [];
    for (const { variant } of arms)
      for (const metric of [...new Set(metrics)].sort()) {
        const stored = this.sumsDb.get([...prefix, variant, metric]);
        if (stored !== undefined) sums.push({ variant, metric, sums: fromSums(stored) });
      }
    return { arms, sums };
  }

  close(): Promise<void> {
    return this.root.close();
  }

  batch(scope: TallyScope, batchId: string): CountedBatch | undefined {
    return this.batches.get([scope.projectId, scope.environment, batchId]);
  }

  putBatch(scope: TallyScope, batchId: string, batch: CountedBatch): void {
    this.batches.put([scope.projectId, scope.environment, batchId], batch);
    this.batchExpiry.put([batch.at, scope.projectId, scope.environment, batchId], null);
  }

  forgetBatches(before: number, limit: number): number {
    let forgotten = 0;
    for (const key of this.batchExpiry.getKeys({ end: [before], limit })) {
      this.batches.remove(key.slice(1));
      this.batchExpiry.remove(key);
      forgotten++;
    }
    return forgotten;
  }

  subject(scope: TallyScope, subject: string): SubjectState {
    return toSubject(this.subjects.get([scope.projectId, scope.environment, subject]));
  }

  putSubject(scope: TallyScope, subject: string, state: SubjectState): void {
    this.subjects.put([scope.projectId, scope.environment, subject], fromSubject(state));
  }

  removeSubject(scope: TallyScope, subject: string): void {
    this.subjects.remove([scope.projectId, scope.environment, subject]);
  }

  arm(scope: TallyScope, experiment: string, variant: string): number {
    return this.arms.get([scope.projectId, scope.environment, experiment, variant]) ?? 0;
  }

  putArm(scope: TallyScope, experiment: string, variant: string, subjects: number): void {
    this.arms.put([scope.projectId, scope.environment, experiment, variant], subjects);
  }

  sums(scope: TallyScope, experiment: string, variant: string, metric: string): MetricSums | undefined {
    const stored = this.sumsDb.get([scope.projectId, scope.environment, experiment, variant, metric]);
    return stored === undefined ? undefined : fromSums(stored);
  }

  putSums(scope: TallyScope, experiment: string, variant: string, metric: string, sums: MetricSums): void {
    this.sumsDb.put([scope.projectId, scope.environment, experiment, variant, metric], toStoredSums(sums));
  }

  subjectCount(scope: TallyScope): number {
    return this.count(['subjects', scope.projectId, scope.environment]);
  }

  addSubjects(scope: TallyScope, delta: number): void {
    if (delta === 0) return;
    const key = ['subjects', scope.projectId, scope.environment];
    // Subjects counted before the count was kept may be erased: never below none.
    this.usage.put(key, Math.max(0, this.count(key) + delta));
  }

  undeclaredMetrics(scope: TallyScope): string[] {
    return withPrefix(this.metricNames, [scope.projectId, scope.environment]).map(({ key }) => String(key[2]));
  }

  putUndeclaredMetrics(scope: TallyScope, metrics: readonly string[]): void {
    for (const metric of metrics) this.metricNames.put([scope.projectId, scope.environment, metric], null);
  }

  putRawEvents(scope: TallyScope, events: readonly Omit<RawEvent, 'storedAt'>[], now: number, keepMs: number): void {
    if (events.length === 0) return;
    // The last key and the project's bytes are read and written once per batch, not per event.
    const [lastAt, lastSeq] = (this.usage.get(['rawLast']) as [number, number] | undefined) ?? [0, -1];
    const at = Math.max(now, lastAt);
    let seq = at === lastAt ? lastSeq : -1;
    const { projectId, environment } = scope;
    const expiresAt = at + keepMs;
    let added = 0;
    for (const event of events) {
      seq++;
      const kept: RawEvent = { ...event, storedAt: at };
      const bytes = rawEventBytes(scope, JSON.stringify(kept), event.targetingKey);
      this.raw.put([projectId, environment, at, seq], { event: kept, expiresAt, bytes });
      this.rawExpiry.put([expiresAt, projectId, environment, at, seq], null);
      this.rawSubjects.put([projectId, environment, event.targetingKey, at, seq], null);
      added += bytes;
    }
    this.usage.put(['rawLast'], [at, seq]);
    this.addRawBytes(projectId, added);
  }

  forgetRawEvents(now: number, limit: number): number {
    let forgotten = 0;
    for (const key of this.rawExpiry.getKeys({ end: [now], limit })) {
      this.forgetRaw(key.slice(1));
      forgotten++;
    }
    return forgotten;
  }

  rawEventsEnd(scope: TallyScope, subject: string): RawCursor | null {
    const prefix = [scope.projectId, scope.environment, subject];
    // The subject's last key: read backwards from [...prefix, ''], past every key of it (a string sorts after every number).
    for (const key of this.rawSubjects.getKeys({ start: [...prefix, ''], end: prefix, reverse: true, limit: 1 }))
      if (prefix.every((part, i) => key[i] === part)) return key.slice(3);
    return null;
  }

  /**
   * Removes up to `limit` raw events of `subject` in `scope` stored up to `end` (rawEventsEnd), in a
   * transaction of its own; settles with how many, once on disk. An erasure's step: each holds the
   * write lock for a bounded time and reads a bounded page of keys, however many events the subject has.
   */
  removeRawEvents(scope: TallyScope, subject: string, end: RawCursor, limit: number): Promise<number> {
    const { projectId, environment } = scope;
    const [at, seq] = end as [number, number];
    return this.root.transaction(() => {
      const keys = this.rawSubjects.getKeys({
        start: [projectId, environment, subject],
        end: [projectId, environment, subject, at, seq + 1],
        limit,
      });
      let removed = 0;
      for (const key of keys) {
        this.forgetRaw([projectId, environment, ...key.slice(3)]);
        removed++;
      }
      return removed;
    });
  }

  rawBytes(projectId: string): number {
    return this.count(['rawBytes', projectId]);
  }

  firstRawExpiry(scopes: readonly TallyScope[]): number | null {
    let first: number | null = null;
    for (const { projectId, environment } of scopes) {
      const [oldest] = withPrefix(this.raw, [projectId, environment], 1);
      if (oldest !== undefined && (first === null || oldest.value.expiresAt < first)) first = oldest.value.expiresAt;
    }
    return first;
  }

  /**
   * Up to `limit` raw events of `scope` stored from `from` to before `to` (Unix ms), in the order they
   * were stored, from after `after` (the key of the last one a previous page ended with) when given:
   * an export reads them a page at a time, each page a short read of its own. `last`: where the next
   * page starts (after), null when this one was the last.
   */
  rawEvents(scope: TallyScope, range: RawRange, after: RawCursor | null, limit: number): RawPage {
    const { projectId, environment } = scope;
    const start = after === null ? [projectId, environment, range.from] : [...after];
    const events: RawEvent[] = [];
    let last: Key | null = null;
    let read = 0;
    for (const { key, value } of this.raw.getRange({ start, end: [projectId, environment, range.to], limit: limit + 1 })) {
      if (after !== null && key.length === after.length && key.every((part, i) => part === after[i])) continue;
      if (read === limit) break;
      read++;
      last = key;
      // Expired, but not yet forgotten: never exported.
      if (value.expiresAt > range.now) events.push(value.event);
    }
    return { events, last: read === limit ? last : null };
  }

  /** Forgets the raw event of `key` ([projectId, environment, at, seq]) and its index entries. */
  private forgetRaw(key: Key): void {
    const stored = this.raw.get(key);
    if (stored === undefined) return;
    const [projectId, environment, at, seq] = key as [string, string, number, number];
    this.raw.remove(key);
    this.rawExpiry.remove([stored.expiresAt, projectId, environment, at, seq]);
    this.rawSubjects.remove([projectId, environment, stored.event.targetingKey, at, seq]);
    this.addRawBytes(projectId, -stored.bytes);
  }

  private addRawBytes(projectId: string, delta: number): void {
    const key = ['rawBytes', projectId];
    this.usage.put(key, Math.max(0, this.count(key) + delta));
  }

  private count(key: Key): number {
    return (this.usage.get(key) as number | undefined) ?? 0;
  }
}

/**
 * The entries whose keys start with `prefix`, in key order. Read from the prefix on until a key leaves
 * it, rather than up to an end key: no string bounds every subject (keys compare as UTF-8, so no
 * single character sorts after all others).
 */
function withPrefix<V>(db: Database<V, Key>, prefix: Key, limit?: number): { key: Key; value: V }[] {
  const found: { key: Key; value: V }[] = [];
  for (const entry of db.getRange({ start: prefix, limit })) {
    if (!prefix.every((part, i) => entry.key[i] === part)) break;
    found.push(entry);
  }
  return found;
}

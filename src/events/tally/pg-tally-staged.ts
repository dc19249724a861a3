// One transaction of PostgreSQL's tally (pg-tally.ts) in memory, step 4 there: the rows pg-tally-lock.ts
// locked and read for it, read and put by the caller's function through the same TallyTxn the tally
// file's transaction is (tally-file.ts), then written by pg-tally-write.ts. No SQL here.
import { Packr } from 'msgpackr';
import {
  type CountedBatch,
  fromSubject,
  type MetricSums,
  type RawCursor,
  type RawEvent,
  rawEventBytes,
  type StoredSubject,
  type SubjectState,
  type TallyScope,
  type TallyTxn,
  toSubject,
} from './tally-file.js';

/** Subject states are msgpack, as the tally file stores them. */
const packr = new Packr({ useRecords: false });

/** A row's state; none for a row made only to be locked (no bytes). */
export function unpackSubject(state: Buffer): StoredSubject | undefined {
  return state.length === 0 ? undefined : (packr.unpack(state) as StoredSubject);
}

/** A subject's state as its row stores it. */
export function packSubject(state: SubjectState): Buffer {
  return packr.pack(fromSubject(state));
}

/** Whether a subject's state holds nothing: one made only to be locked, erased, or whose events were all refused. */
export function isEmpty(state: SubjectState): boolean {
  return state.exposures.size === 0 && state.totals.size === 0;
}

/** What a transaction read of the storage limits' counts (step 3 of pg-tally.ts); null where it read none. */
export interface Usage {
  readonly subjects: number | null;
  /** The project's bytes of raw events as read, and those of its expired ones this transaction forgot. */
  readonly raw: { readonly bytes: number; readonly forgotten: number; readonly firstExpiry: number | null } | null;
  /** Where its subjects' raw events end (the sequence number of each one's last), by subject. */
  readonly rawEnd: ReadonlyMap<string, string> | null;
  /** The scope's undeclared metric names as read, when it tracks any. */
  readonly metrics: ReadonlySet<string> | null;
}

export const kNoUsage: Usage = { subjects: null, raw: null, rawEnd: null, metrics: null };

/**
 * One transaction's reads and writes in memory, on the rows PostgreSQL locked and read for it (one
 * scope's). Arms and sums are deltas: each reads as what the transaction has added to it so far (none
 * at first), and what is put is added to the stored rows; right because the tally only ever adds to
 * them (src/events/tally.ts moves them by differences and never decides on their values).
 */
export class StagedTally implements TallyTxn {
  /** Subjects written: their state, or null when removed. */
  readonly written = new Map<string, SubjectState | null>();
  readonly armDeltas = new Map<string, { experiment: string; variant: string; subjects: number }>();
  readonly sumDeltas = new Map<string, { experiment: string; variant: string; metric: string; sums: MetricSums }>();
  put: { batchId: string; batch: CountedBatch } | null = null;
  forget: { before: number; limit: number } | null = null;
  /** Raw events to expire after the commit (PgTally.expireRaw, pg-tally.ts). */
  expire: { now: number; limit: number } | null = null;
  subjectDelta = 0;
  readonly metricsAdded: string[] = [];
  readonly rawKept: { storedAt: number; expiresAt: number; subject: string; bytes: number; json: string }[] = [];

  constructor(
    private readonly scope: TallyScope,
    private readonly batchId: string | null,
    private readonly prior: CountedBatch | undefined,
    readonly loaded: ReadonlyMap<string, SubjectState>,
    readonly usage: Usage,
  ) {}

  batch(scope: TallyScope, batchId: string): CountedBatch | undefined {
    this.check(scope);
    if (batchId !== this.batchId) throw new Error('a staged tally transaction reads only the batch id it was opened for');
    return this.put?.batch ?? this.prior;
  }

  putBatch(scope: TallyScope, batchId: string, batch: CountedBatch): void {
    this.check(scope);
    if (batchId !== this.batchId) throw new Error('a staged tally transaction writes only the batch id it was opened for');
    this.put = { batchId, batch };
  }

  /** Forgotten as the transaction writes: none yet. */
  forgetBatches(before: number, limit: number): number {
    this.forget = { before, limit };
    return 0;
  }

  subject(scope: TallyScope, subject: string): SubjectState {
    this.check(scope);
    const written = this.written.get(subject);
    if (written !== undefined) return written ?? toSubject(undefined);
    const loaded = this.loaded.get(subject);
    if (loaded === undefined) throw new Error('a staged tally transaction reads only the subjects it was opened for');
    return loaded;
  }

  putSubject(scope: TallyScope, subject: string, state: SubjectState): void {
    this.check(scope);
    this.written.set(subject, state);
  }

  removeSubject(scope: TallyScope, subject: string): void {
    this.check(scope);
    this.written.set(subject, null);
  }

  arm(scope: TallyScope, experiment: string, variant: string): number {
    this.check(scope);
    return this.armDeltas.get(JSON.stringify([experiment, variant]))?.subjects ?? 0;
  }

  putArm(scope: TallyScope, experiment: string, variant: string, subjects: number): void {
    this.check(scope);
    this.armDeltas.set(JSON.stringify([experiment, variant]), { experiment, variant, subjects });
  }

  sums(scope: TallyScope, experiment: string, variant: string, metric: string): MetricSums | undefined {
    this.check(scope);
    const added = this.sumDeltas.get(JSON.stringify([experiment, variant, metric]));
    return added === undefined ? undefined : { ...added.sums };
  }

  putSums(scope: TallyScope, experiment: string, variant: string, metric: string, sums: MetricSums): void {
    this.check(scope);
    this.sumDeltas.set(JSON.stringify([experiment, variant, metric]), { experiment, variant, metric, sums: { ...sums } });
  }

  // The counts of the limits read as what was read (readUsage, pg-tally-lock.ts) and what this transaction moved them by:
  // one it was not opened to read is a fault of the caller's (TallyTouches says what to ask for).

  subjectCount(scope: TallyScope): number {
    this.check(scope);
    if (this.usage.subjects === null) throw new Error('a staged tally transaction of a batch already counted reads no count of subjects');
    return Math.max(0, this.usage.subjects + this.subjectDelta);
  }

  addSubjects(scope: TallyScope, delta: number): void {
    this.check(scope);
    this.subjectDelta += delta;
  }

  undeclaredMetrics(scope: TallyScope): string[] {
    this.check(scope);
    if (this.usage.metrics === null) throw new Error('a staged tally transaction reads undeclared metrics only when opened to (metrics)');
    return [...this.usage.metrics, ...this.metricsAdded];
  }

  putUndeclaredMetrics(scope: TallyScope, metrics: readonly string[]): void {
    this.check(scope);
    this.metricsAdded.push(...metrics);
  }

  putRawEvents(scope: TallyScope, events: readonly Omit<RawEvent, 'storedAt'>[], now: number, keepMs: number): void {
    this.check(scope);
    if (this.usage.raw === null) throw new Error('a staged tally transaction keeps raw events only when opened to (keepsRaw)');
    // Stored at the node's clock: their order is their sequence numbers', not their times'.
    for (const event of events) {
      const json = JSON.stringify({ ...event, storedAt: now } satisfies RawEvent);
      const bytes = rawEventBytes(scope, json, event.targetingKey);
      this.rawKept.push({ storedAt: now, expiresAt: now + keepMs, subject: event.targetingKey, bytes, json });
    }
  }

  /** Forgotten after the commit (PgTally.expireRaw): none yet. */
  forgetRawEvents(now: number, limit: number): number {
    this.expire = { now, limit };
    return 0;
  }

  rawEventsEnd(scope: TallyScope, subject: string): RawCursor | null {
    this.check(scope);
    if (this.usage.rawEnd === null)
      throw new Error('a staged tally transaction reads where raw events end only when opened to (readsRawEnd)');
    const last = this.usage.rawEnd.get(subject);
    return last === undefined ? null : [last];
  }

  rawBytes(projectId: string): number {
    const { raw } = this.usage;
    if (raw === null || projectId !== this.scope.projectId)
      throw new Error('a staged tally transaction reads the raw bytes it was opened to keep');
    const kept = this.rawKept.reduce((sum, r) => sum + r.bytes, 0);
    return Math.max(0, raw.bytes - raw.forgotten + kept);
  }

  firstRawExpiry(scopes: readonly TallyScope[]): number | null {
    const { raw } = this.usage;
    if (raw === null || scopes.some((s) => s.projectId !== this.scope.projectId))
      throw new Error('a staged tally transaction reads the first expiry of the raw events it was opened to keep');
    return raw.firstExpiry;
  }

  private check(scope: TallyScope): void {
    if (scope.projectId !== this.scope.projectId || scope.environment !== this.scope.environment)
      throw new Error('a staged tally transaction reads and writes the one scope it was opened for');
  }
}

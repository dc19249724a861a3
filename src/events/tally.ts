// How events move the statistics (issue 58, item 4; docs/events.md: What is counted), applied in one
// transaction of the tally file per batch, in the batch's order:
//
// - An exposure of a subject to an experiment is kept once: the first one stored fixes the subject's
//   variant and time; a later one is a duplicate and changes nothing. Kept, it adds the subject to its
//   variant, and the subject's totals so far (every metric) become its covariate there.
// - A track adds its value (millionths) to the subject's running total of its metric, and, in each
//   experiment the subject was exposed to, to the total after exposure when it happened at or after the
//   exposure (its timestamp), else to the total before it (the covariate). An outcome stored before the
//   subject's exposure is stored only ever counts before it.
// - Each change of a subject's total x or y moves the sums by exactly what it changes: Σy by the value,
//   Σy² by y'² - y², Σxy by x'y' - xy; so the sums always equal those recomputed from the subjects'
//   totals, and, being BigInt, in any order of addition.
import type { MetricSums, RawCursor, SubjectInExperiment, SubjectState, SubjectTotal, TallyScope, TallyTxn } from './tally/tally-file.js';

/** An event ready to count: an exposure names its experiment (the flag's, resolved when received). */
export type CountedEvent =
  | { readonly kind: 'exposure'; readonly subject: string; readonly experiment: string; readonly variant: string; readonly at: number }
  | { readonly kind: 'track'; readonly subject: string; readonly metric: string; readonly value: bigint; readonly at: number };

/** What a batch did: events counted, exposures that were a subject's second or later (no change), and events refused by position. */
export interface TallyOutcome {
  counted: number;
  duplicates: number;
  refused: { position: number; reason: string }[];
}

const kNoTotal: SubjectTotal = { events: 0, total: 0n };

/** A value as counted: millionths, rounded to the nearest (JSON numbers are doubles; 1e9 * 1e6 < 2^53). */
export function millionths(value: number): bigint {
  return BigInt(Math.round(value * 1e6));
}

/** The sums of no subject. */
export const emptySums = (): MetricSums => ({
  events: 0,
  subjects: 0,
  sum: 0n,
  sumOfSquares: 0n,
  covariateEvents: 0,
  covariateSubjects: 0,
  covariateSum: 0n,
  covariateSumOfSquares: 0n,
  sumOfProducts: 0n,
});

/**
 * Erases `subject` of `scope` (docs/events.md: Erasing a subject): whether its counts were kept, and
 * where its raw events end (null: it has none), which the erasure then removes in bounded steps of their
 * own (TallyWrites.erase).
 */
export function eraseSubject(txn: TallyTxn, scope: TallyScope, subject: string): { erased: boolean; rawEnd: RawCursor | null } {
  const tally = new BatchTally(txn, scope, new Set());
  const erased = tally.erase(subject);
  tally.flush();
  return { erased, rawEnd: txn.rawEventsEnd(scope, subject) };
}

/** Whether a subject's state holds nothing: a subject not seen yet. */
export function isNewSubject(state: SubjectState): boolean {
  return state.exposures.size === 0 && state.totals.size === 0;
}

/** Bounds on one subject's state, so that no client can grow it without end: experiments, and metrics. */
export const kMaxExperimentsPerSubject = 100;
export const kMaxMetricsPerSubject = 200;
/**
 * Metric names a project environment counts that no experiment of it declares (docs/events.md:
 * Metrics counted): the first ones seen, up to this; a track of another undeclared name is refused. So
 * the sums of an experiment's variant, and what a statistics read returns, grow with its plans, never
 * with what a public key sends.
 */
export const kMaxUndeclaredMetrics = 20;

/**
 * Counts `events` of `scope` in `txn`; an event that would pass a subject's bounds, or a track of a
 * metric neither in `declared` (the metrics the scope's experiments declare) nor among the first
 * kMaxUndeclaredMetrics other names the scope counted, is not counted, and named by its position in
 * `events` with why. A subject's state, and the sums and arms a batch touches,
 * are read once and written once at its end (a batch of a subject's events would otherwise rewrite the
 * same records once per event).
 */
export function tallyBatch(txn: TallyTxn, scope: TallyScope, events: readonly CountedEvent[], declared: ReadonlySet<string>): TallyOutcome {
  const tally = new BatchTally(txn, scope, declared);
  const outcome: TallyOutcome = { counted: 0, duplicates: 0, refused: [] };
  for (const [position, event] of events.entries()) {
    const result = event.kind === 'exposure' ? tally.expose(event) : tally.track(event);
    if (result === true) outcome.counted++;
    else if (result === false) outcome.duplicates++;
    else outcome.refused.push({ position, reason: result });
  }
  tally.flush();
  return outcome;
}

class BatchTally {
  private readonly subjects = new Map<string, SubjectState>();
  /** The subjects this batch read with no state: those it gives one are new (the storage limit counts them). */
  private readonly unseen = new Set<string>();
  private readonly sums = new Map<string, { experiment: string; variant: string; metric: string; sums: MetricSums }>();
  private readonly arms = new Map<string, { experiment: string; variant: string; subjects: number }>();
  /** The undeclared metric names the scope counts, read on the first track that needs them; and those this batch adds. */
  private undeclared: Set<string> | null = null;
  private readonly admitted: string[] = [];

  constructor(
    private readonly txn: TallyTxn,
    private readonly scope: TallyScope,
    private readonly declared: ReadonlySet<string>,
  ) {}

  /** Whether the exposure was the subject's first to its experiment; or why it is not counted. */
  expose(event: Extract<CountedEvent, { kind: 'exposure' }>): boolean | string {
    const subject = this.subject(event.subject);
    if (subject.exposures.has(event.experiment)) return false;
    if (subject.exposures.size >= kMaxExperimentsPerSubject)
      return `subject "${event.subject}" is in ${kMaxExperimentsPerSubject} experiments already, the most one subject may be`;
    subject.exposures.set(event.experiment, { variant: event.variant, at: event.at });
    this.arm(event.experiment, event.variant).subjects++;
    const metrics = new Map<string, SubjectInExperiment>();
    subject.inExperiments.set(event.experiment, metrics);
    for (const [metric, pre] of subject.totals) {
      const now = { pre, post: kNoTotal };
      metrics.set(metric, now);
      this.move(event.experiment, event.variant, metric, { pre: kNoTotal, post: kNoTotal }, now);
    }
    return true;
  }

  /** A track counted (true), or why it is not. */
  track(event: Extract<CountedEvent, { kind: 'track' }>): true | string {
    const undeclared = this.declared.has(event.metric) ? null : this.undeclaredMetrics();
    if (undeclared !== null && !undeclared.has(event.metric) && undeclared.size >= kMaxUndeclaredMetrics)
      return `metric "${event.metric}" is declared by no experiment here, and ${kMaxUndeclaredMetrics} undeclared metrics are counted already, the most an environment may have: declare it in an experiment's plan`;
    const subject = this.subject(event.subject);
    const before = subject.totals.get(event.metric);
    if (before === undefined && subject.totals.size >= kMaxMetricsPerSubject)
      return `subject "${event.subject}" has ${kMaxMetricsPerSubject} metrics already, the most one subject may have`;
    if (undeclared !== null && !undeclared.has(event.metric)) {
      undeclared.add(event.metric);
      this.admitted.push(event.metric);
    }
    subject.totals.set(event.metric, add(before ?? kNoTotal, event.value));
    for (const [experiment, exposure] of subject.exposures) {
      const metrics = subject.inExperiments.get(experiment)!;
      const was = metrics.get(event.metric) ?? { pre: kNoTotal, post: kNoTotal };
      const now =
        event.at >= exposure.at ? { pre: was.pre, post: add(was.post, event.value) } : { pre: add(was.pre, event.value), post: was.post };
      metrics.set(event.metric, now);
      this.move(experiment, exposure.variant, event.metric, was, now);
    }
    return true;
  }

  /**
   * Takes a subject out: each experiment's arm loses it and each sum loses exactly what its totals
   * added, so the sums equal those of the other subjects alone; then its state is forgotten. Whether it
   * was there.
   */
  erase(subject: string): boolean {
    const state = this.subject(subject);
    if (isNewSubject(state)) return false;
    for (const [experiment, { variant }] of state.exposures) {
      this.arm(experiment, variant).subjects--;
      for (const [metric, was] of state.inExperiments.get(experiment)!)
        this.move(experiment, variant, metric, was, { pre: kNoTotal, post: kNoTotal });
    }
    this.subjects.delete(subject);
    this.txn.removeSubject(this.scope, subject);
    this.txn.addSubjects(this.scope, -1);
    return true;
  }

  /** Writes the subjects, sums and arms the batch moved. */
  flush(): void {
    const { txn, scope } = this;
    let added = 0;
    for (const [subject, state] of this.subjects) {
      // A subject only read (an erasure of one never seen) is not written.
      if (isNewSubject(state)) continue;
      txn.putSubject(scope, subject, state);
      if (this.unseen.has(subject)) added++;
    }
    txn.addSubjects(scope, added);
    for (const { experiment, variant, metric, sums } of this.sums.values()) txn.putSums(scope, experiment, variant, metric, sums);
    for (const { experiment, variant, subjects } of this.arms.values()) txn.putArm(scope, experiment, variant, subjects);
    if (this.admitted.length > 0) txn.putUndeclaredMetrics(scope, this.admitted);
  }

  private undeclaredMetrics(): Set<string> {
    this.undeclared ??= new Set(this.txn.undeclaredMetrics(this.scope));
    return this.undeclared;
  }

  private subject(subject: string): SubjectState {
    let state = this.subjects.get(subject);
    if (state === undefined) {
      state = this.txn.subject(this.scope, subject);
      if (isNewSubject(state)) this.unseen.add(subject);
      this.subjects.set(subject, state);
    }
    return state;
  }

  private arm(experiment: string, variant: string): { experiment: string; variant: string; subjects: number } {
    const key = JSON.stringify([experiment, variant]);
    let arm = this.arms.get(key);
    if (arm === undefined) {
      arm = { experiment, variant, subjects: this.txn.arm(this.scope, experiment, variant) };
      this.arms.set(key, arm);
    }
    return arm;
  }

  /** Moves the sums of (experiment, variant, metric) by one subject's totals going from `was` to `now`. */
  private move(experiment: string, variant: string, metric: string, was: SubjectInExperiment, now: SubjectInExperiment): void {
    const key = JSON.stringify([experiment, variant, metric]);
    let entry = this.sums.get(key);
    if (entry === undefined) {
      entry = { experiment, variant, metric, sums: this.txn.sums(this.scope, experiment, variant, metric) ?? emptySums() };
      this.sums.set(key, entry);
    }
    const s = entry.sums;
    const [x0, y0, x1, y1] = [was.pre.total, was.post.total, now.pre.total, now.post.total];
    s.events += now.post.events - was.post.events;
    s.subjects += Number(now.post.events > 0) - Number(was.post.events > 0);
    s.sum += y1 - y0;
    s.sumOfSquares += y1 * y1 - y0 * y0;
    s.covariateEvents += now.pre.events - was.pre.events;
    s.covariateSubjects += Number(now.pre.events > 0) - Number(was.pre.events > 0);
    s.covariateSum += x1 - x0;
    s.covariateSumOfSquares += x1 * x1 - x0 * x0;
    s.sumOfProducts += x1 * y1 - x0 * y0;
  }
}

function add(total: SubjectTotal, value: bigint): SubjectTotal {
  return { events: total.events + 1, total: total.total + value };
}

// Progressive rollouts (issue 27, item 2): a flag's traffic percentage raised in steps, or the weights of
// its typed variants set in steps, each held for a while, driven by the node's scheduler
// (src/release-plans/scheduler.ts) and audited as `plan:<id>`.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.

/** A step: a traffic percentage, or variant weights. Every step of one rollout is of one kind. */
export type RolloutStep = PercentageStep | WeightsStep;

/**
 * A step that sets the weights of the flag's typed variants: its targeting becomes flagd's
 * `{"fractional": [[variant, weight], ...]}` (src/release-plans/rollout-weights.ts).
 */
export interface WeightsStep {
  /** Variant name -> weight (a non-negative integer); the split's buckets in this order. */
  variantWeights: Record<string, number>;
  /** How long the step is held before the next one (ms); absent on the last step. */
  holdMs?: number;
}

export interface PercentageStep {
  trafficPercentage: number;
  /** How long the step is held before the next one (ms); absent on the last step. */
  holdMs?: number;
}

/**
 * A rollout's guard (issue 27, item 3): a reading taken every `intervalMs` while the rollout runs; a
 * reading outside [min, max] is a breach, which pauses the rollout or, with onBreach 'rollback', rolls
 * it back. Exactly one source: a PromQL expression asked of the Prometheus server the node is set up
 * with, or a selector of this node's own metrics (`name{label="value",...}`, as GET /metrics serves
 * them: a counter read as its rate per second, a gauge as its value).
 */
export interface RolloutGuard {
  prometheus?: string;
  flagwire?: string;
  /**
   * Or an experiment's key in the rollout's project and environment (issue 59, item 4), read from its
   * stored statistics: one of its metrics (`metric`, with the direction that is `worse`) or its sample-ratio
   * check (`sampleRatio`). Such a guard has no bounds (max and min null): its statistics say when it breaches.
   */
  experiment?: string;
  metric?: string;
  worse?: 'lower' | 'higher';
  sampleRatio?: true;
  /** Breach above this; null: no upper bound. */
  max: number | null;
  /** Breach below this; null: no lower bound. */
  min: number | null;
  intervalMs: number;
  onBreach: 'pause' | 'rollback';
}

/** The guard's last reading, kept on the plan (the web console's timeline shows it). */
export interface GuardReading {
  at: number;
  /** The number read; null when there was none (no data yet, or the source could not be read). */
  value: number | null;
  breached: boolean;
  /** Why there is no value, or what the breach was; null on a plain healthy reading. */
  note: string | null;
  /** Readings in a row that failed (the source could not be read): kGuardMaxFailures of them is a breach. */
  failures: number;
  /** An experiment's guard: the figures the reading was judged on (the audit of a breach holds them). */
  figures?: ExperimentGuardFigures;
}

/** What an experiment's guard read of a metric: the treatment that fared worst against the control. */
export interface MetricGuardFigures {
  experiment: string;
  metric: string;
  /** The treatment compared; the control's and its subjects and means. */
  control: { variant: string; subjects: number; mean: number };
  treatment: { variant: string; subjects: number; mean: number };
  /** Relative: the lift over the control's mean; otherwise the difference of means (the control's mean is 0). */
  effect: 'relative' | 'absolute';
  estimate: number;
  /** The always-valid interval at the experiment's alpha; null while it is unbounded (too few subjects). */
  lower: number | null;
  upper: number | null;
  /** The confidence sequence's anytime-valid p-value. */
  pValue: number;
  alpha: number;
}

/** What an experiment's guard read of the sample-ratio check. */
export interface SampleRatioGuardFigures {
  experiment: string;
  /** The Dirichlet-multinomial Bayes factor now (null: infinite, an arm planned none got subjects); a breach at 1/alpha. */
  bayesFactor: number | null;
  /** The check's anytime-valid p-value: the lowest of every look's 1/BF, the results' looks included. */
  pValue: number;
  alpha: number;
  /** Each arm's subjects, planned share and observed share. */
  arms: { variant: string; subjects: number; planned: number; observed: number }[];
}

export type ExperimentGuardFigures = MetricGuardFigures | SampleRatioGuardFigures;

export type RolloutStatus = 'running' | 'paused' | 'completed' | 'rolled-back';

export interface RolloutPlan {
  /** `rol_…`; the audit names the changes it makes as actor `plan:<id>`. */
  id: string;
  projectId: string;
  flagId: string;
  /** A group flag's environment; null on a single flag. */
  env: string | null;
  steps: RolloutStep[];
  /** The traffic percentage before the first step: what a rollback restores. */
  initialPercentage: number;
  /**
   * A rollout by variant weights: the flag's targeting before the first step, what a rollback restores;
   * null on a rollout of the percentage. Absent on rollouts made before weight steps existed: read as null.
   */
  initialTargeting?: Record<string, unknown> | null;
  /** The step applied last (0: the first). */
  current: number;
  /**
   * When each step up to `current` was applied (Unix ms; a resumed step: when it was set again); null
   * where not known. Absent on rollouts started before these times were kept.
   */
  appliedAt?: (number | null)[];
  /** When the next step is due (Unix ms); null unless running with a step to come. */
  nextAt: number | null;
  status: RolloutStatus;
  /** Why it is paused (a person, or a change made by hand to what it drives); null otherwise. */
  pausedReason: string | null;
  /** Absent on rollouts made before guards existed: read as null. */
  guard?: RolloutGuard | null;
  /** When the guard is read next (Unix ms); null unless running with a guard. */
  guardNextAt?: number | null;
  guardReading?: GuardReading | null;
  createdAt: number;
  updatedAt: number;
  createdBy: string;
  createdByName: string;
}

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
  /** When the next step is due (Unix ms); null unless running with a step to come. */
  nextAt: number | null;
  status: RolloutStatus;
  /** Why it is paused (a person, or a change made by hand to what it drives); null otherwise. */
  pausedReason: string | null;
  createdAt: number;
  updatedAt: number;
  createdBy: string;
  createdByName: string;
}

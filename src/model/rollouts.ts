// Progressive rollouts (issue 27, item 2): a flag's traffic percentage raised in steps, each held for a
// while, driven by the node's scheduler (src/release-plans/scheduler.ts) and audited as `plan:<id>`.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.

export interface RolloutStep {
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
  createdAt: number;
  updatedAt: number;
  createdBy: string;
  createdByName: string;
}

// The experiment plan the experiments' tests make (issue 59), as the Management API's create body, and
// an experiment record for the rules tested without a store.
import type { Experiment } from '../../src/experiments/records.js';

/**
 * An experiment's create body on `flagId` (a boolean flag): off (the control) against on at 50/50, a
 * conversion (the primary) and a mean, for `plannedSubjects` subjects.
 */
export function experimentPlan(flagId: string, plannedSubjects: number) {
  return {
    key: 'checkout-2026',
    flagId,
    variants: [
      { variant: 'off', weight: 50 },
      { variant: 'on', weight: 50 },
    ],
    control: 'off',
    metrics: [
      { metric: 'purchase', kind: 'conversion' as const },
      { metric: 'revenue', kind: 'mean' as const },
    ],
    primaryMetric: 'purchase',
    plannedSubjects,
  };
}

/**
 * An experiment record as the store keeps it, running since 0 at alpha 0.05 with no sample-ratio look
 * yet, for rules tested without a store: `plan` gives its key, arms, metrics and planned size.
 */
export function experimentRecord(plan: Pick<Experiment, 'key' | 'variants' | 'control' | 'metrics' | 'plannedSubjects'>): Experiment {
  return {
    projectId: 'prj_test',
    environment: null,
    flagId: 'flg_test',
    primaryMetric: plan.metrics[0]!.metric,
    alpha: 0.05,
    startedAt: 0,
    stoppedAt: null,
    lowestSrmPValue: 1,
    allocation: null,
    createdAt: 0,
    updatedAt: 0,
    createdBy: 'operator',
    ...plan,
  };
}

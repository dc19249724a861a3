// An experiment guard's own fields (issue 59, item 4): what makes them whole before the experiment is
// looked up, and the guard in a line. Apart from experiment-guards.ts, which reads the experiment and its
// statistics, because the web console's browser code reaches this through the rollout's shapes.
import type { RolloutGuard } from './rollouts.js';

/** An experiment guard's fields as a request states them (guards.ts's GuardInput holds them beside the others). */
export interface ExperimentGuardInput {
  experiment?: string;
  metric?: string;
  worse?: 'lower' | 'higher';
  sampleRatio?: boolean;
  max?: number | null;
  min?: number | null;
}

/** What is wrong with an experiment guard's own fields (empty: nothing), before the experiment is looked up. */
export function experimentGuardShapeProblems(guard: ExperimentGuardInput): string[] {
  const problems: string[] = [];
  const metric = guard.metric !== undefined;
  const sampleRatio = guard.sampleRatio === true;
  if (guard.experiment === undefined) {
    if (metric || guard.worse !== undefined || guard.sampleRatio !== undefined)
      problems.push('guard: metric, worse and sampleRatio read an experiment: give its key as guard.experiment');
    return problems;
  }
  if (metric === sampleRatio)
    problems.push('guard: an experiment guard reads one thing: give metric (with worse) or sampleRatio: true, not both');
  if (metric && guard.worse === undefined)
    problems.push(
      'guard.worse is required with a metric: "lower" where the metric falling is worse (a conversion, revenue), "higher" where it rising is (errors)',
    );
  if (!metric && guard.worse !== undefined) problems.push('guard.worse: only a metric guard has a direction');
  if ((guard.max ?? null) !== null || (guard.min ?? null) !== null)
    problems.push(
      "guard: an experiment guard has no max or min: its statistics decide (the always-valid interval, the sample-ratio check's Bayes factor)",
    );
  return problems;
}

/** The guard's experiment part in a line: `experiment: KEY, METRIC worse when lower` or `experiment: KEY, sample ratio`. */
export function describeExperimentGuard(guard: RolloutGuard): string {
  return guard.sampleRatio
    ? `experiment: ${guard.experiment}, sample ratio`
    : `experiment: ${guard.experiment}, ${guard.metric} worse when ${guard.worse}`;
}

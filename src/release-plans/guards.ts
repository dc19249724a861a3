// A rollout's guard (issue 27, item 3): what makes one valid, and what a reading means. Pure rules, one
// home: the writer checks a guard with guardProblems when a rollout starts and judges each reading with
// judgeReading in the transaction that records it; guard-reader.ts only fetches numbers.
import type { GuardReading, RolloutGuard } from './rollouts.js';
import { describeExperimentGuard, type ExperimentGuardInput, experimentGuardShapeProblems } from './experiment-guard-shape.js';
import { parseSelector } from './metric-selector.js';
import type { MetricAllowList } from './promql-metrics.js';

/** Readings in a row that could not be taken before that is a breach: a guard that cannot see must not wave a rollout on for long. */
export const kGuardMaxFailures = 3;
export const kDefaultGuardIntervalMs = 30_000;
export const kMinGuardIntervalMs = 1000;
export const kMaxGuardIntervalMs = 24 * 3600 * 1000;
export const kMaxGuardExpressionLength = 4096;

/** A guard as a request states it: bounds, interval and action may be left out. */
export interface GuardInput extends ExperimentGuardInput {
  prometheus?: string;
  flagwire?: string;
  max?: number | null;
  min?: number | null;
  intervalMs?: number;
  onBreach?: 'pause' | 'rollback';
}

/**
 * What a reader brought back of numbers (Prometheus, this server's metrics): the samples read (a
 * Prometheus vector's values, or one number), or why none could be read. `invalid`: the source refused
 * the expression itself (it will never read), which is a breach at once; otherwise a failure counts
 * towards kGuardMaxFailures. An experiment guard's reading is its statistics (guard-reader.ts, RawReading).
 */
export type SampledReading = { values: number[]; note: string | null } | { error: string; invalid: boolean };

/**
 * What is wrong with a guard (empty: nothing), each naming its field under `guard.`. `metrics`: the
 * operator's list of what a PromQL guard may read, where the caller is held to it (the Management API);
 * null where the caller is the operator (the command line, on the data directory).
 */
export function guardProblems(guard: GuardInput, metrics: MetricAllowList | null): string[] {
  const problems: string[] = [];
  const sources = [guard.prometheus, guard.flagwire, guard.experiment].filter((s) => s !== undefined);
  if (sources.length !== 1)
    problems.push(
      "guard: give exactly one of prometheus (a PromQL expression), flagwire (a metric of this server) or experiment (an experiment's key)",
    );
  problems.push(...experimentGuardShapeProblems(guard));
  // An experiment guard's statistics decide its breach; experimentGuardShapeProblems refuses bounds on it.
  if (guard.experiment !== undefined) return problems;
  if (guard.prometheus !== undefined && metrics !== null) {
    const refused = metrics.problem(guard.prometheus);
    if (refused !== null) problems.push(`guard.prometheus: ${refused}`);
  }
  if (guard.flagwire !== undefined) {
    const selector = parseSelector(guard.flagwire);
    if (typeof selector === 'string') problems.push(`guard.flagwire: ${selector}`);
  }
  const max = guard.max ?? null;
  const min = guard.min ?? null;
  if (max === null && min === null) problems.push('guard: give max, min or both (a reading above max or below min is a breach)');
  if (max !== null && min !== null && min > max) problems.push(`guard.min (${min}) is above guard.max (${max})`);
  return problems;
}

/** The guard as stored: every field present. Call after guardProblems found nothing. */
export function storedGuard(guard: GuardInput): RolloutGuard {
  const stored: RolloutGuard = {
    max: guard.max ?? null,
    min: guard.min ?? null,
    intervalMs: guard.intervalMs ?? kDefaultGuardIntervalMs,
    onBreach: guard.onBreach ?? 'pause',
  };
  if (guard.prometheus !== undefined) stored.prometheus = guard.prometheus;
  if (guard.flagwire !== undefined) stored.flagwire = guard.flagwire;
  if (guard.experiment !== undefined) stored.experiment = guard.experiment;
  if (guard.metric !== undefined) stored.metric = guard.metric;
  if (guard.worse !== undefined) stored.worse = guard.worse;
  if (guard.sampleRatio === true) stored.sampleRatio = true;
  return stored;
}

/** The guard in a line: `prometheus: EXPR`, `flagwire: SELECTOR` or the experiment it reads, and its bounds. */
export function describeGuard(guard: RolloutGuard): string {
  if (guard.experiment !== undefined) return `${describeExperimentGuard(guard)} (on breach: ${guard.onBreach})`;
  const source = guard.prometheus !== undefined ? `prometheus: ${guard.prometheus}` : `flagwire: ${guard.flagwire}`;
  const bounds = [guard.min === null ? null : `min ${guard.min}`, guard.max === null ? null : `max ${guard.max}`].filter((b) => b !== null);
  return `${source} (${bounds.join(', ')}; on breach: ${guard.onBreach})`;
}

/**
 * A reading as people read it: 4 significant digits (0.01234567 reads 0.01235, 1234567 reads 1235000),
 * enough to compare with a bound as people write one; the exact value stays in `guardReading.value`.
 */
export function readingText(value: number): string {
  // +Inf, -Inf and NaN as Prometheus writes them (String() would say Infinity).
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(Number(value.toPrecision(4)));
}

/**
 * A reading judged against the guard. Several samples (a Prometheus vector): the one farthest out of
 * bounds is the reading. None (no data): healthy, as a Prometheus alert does not fire on an empty result.
 */
export function judgeReading(guard: RolloutGuard, raw: SampledReading, failuresBefore: number, at: number): GuardReading {
  if ('error' in raw) {
    const failures = failuresBefore + 1;
    const breached = raw.invalid || failures >= kGuardMaxFailures;
    const why = raw.invalid
      ? `the guard cannot be read: ${raw.error}`
      : `${raw.error} (${failures} reading${failures === 1 ? '' : 's'} in a row)`;
    return { at, value: null, breached, note: why, failures };
  }
  // +Inf, -Inf and NaN are out of any bounds: a ratio over no traffic (0/0) or an unbounded latency is no
  // sign of health, and must not pass for "no data" (release-plans.md says how to let no traffic pass).
  const unbounded = raw.values.find((v) => !Number.isFinite(v));
  if (unbounded !== undefined)
    return { at, value: null, breached: true, note: `read ${readingText(unbounded)}, which no bound admits`, failures: 0 };
  const values = raw.values;
  if (values.length === 0) return { at, value: null, breached: false, note: raw.note ?? 'no data', failures: 0 };
  const highest = Math.max(...values);
  const lowest = Math.min(...values);
  if (guard.max !== null && highest > guard.max)
    return { at, value: highest, breached: true, note: `read ${readingText(highest)}, above max ${guard.max}`, failures: 0 };
  if (guard.min !== null && lowest < guard.min)
    return { at, value: lowest, breached: true, note: `read ${readingText(lowest)}, below min ${guard.min}`, failures: 0 };
  return { at, value: guard.max !== null ? highest : lowest, breached: false, note: null, failures: 0 };
}

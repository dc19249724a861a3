// Experiments' records (issue 59): one per project environment and experiment key, with its plan, when
// it started and stopped, and its sample-ratio history; and every read and write of them. Plain data,
// like every record Flagwire keeps: the store writes them as they are and they cross threads as is.
import type { StoreReader, StoreWriter } from '../store/interfaces.js';
import { keyedRecords } from '../store/record-kinds.js';
import type { MetricKind } from './moments.js';

export interface Experiment {
  projectId: string;
  /** The environment; null in a single-environment project (as the API's `env`). */
  environment: string | null;
  /** The key the flag state carries while it runs (`experiment`), and the statistics are counted under. */
  key: string;
  flagId: string;
  /** The arms compared, each with its planned weight (positive, any scale), the control among them. */
  variants: { variant: string; weight: number }[];
  control: string;
  /** Tracked event keys, each read as a conversion or as the mean of each subject's total. */
  metrics: { metric: string; kind: MetricKind }[];
  primaryMetric: string;
  plannedSubjects: number;
  alpha: number;
  /** When it last started; null: never. Running while startedAt is set and stoppedAt is null. */
  startedAt: number | null;
  stoppedAt: number | null;
  /**
   * The sample-ratio check's lowest p-value over every look at its results (1 before the first): the
   * check is anytime valid only as a running minimum (src/experiments/srm.ts), so each look is given it.
   */
  lowestSrmPValue: number;
  /**
   * Who got which variant of its flag there when it last started (allocation.ts allocationOf): while it
   * runs, no change may move it (docs/decisions.md: Experiments). Null: never started.
   */
  allocation: Record<string, unknown> | null;
  /**
   * The primary metric's intervals as they stood at the first look at the results on each UTC day the
   * experiment ran, oldest first, at most kMaxIntervalPoints of schemas.ts (the oldest dropped): the statistics are
   * cumulative sums, so an interval of the past cannot be computed again; this keeps them. Absent on a
   * record made before it was kept: none yet.
   */
  intervals?: IntervalPoint[];
  createdAt: number;
  updatedAt: number;
  createdBy: string;
}

/** An experiment's plan: the arms compared and their weights, the control, the metrics, and its size and error rate. */
export type ExperimentPlan = Pick<Experiment, 'variants' | 'control' | 'metrics' | 'primaryMetric' | 'plannedSubjects' | 'alpha'>;

/** The plan of an experiment, in one key order (views compared as JSON rely on it), its lists copied. */
export function planOf(e: ExperimentPlan): ExperimentPlan {
  return {
    variants: e.variants.map(({ variant, weight }) => ({ variant, weight })),
    control: e.control,
    metrics: e.metrics.map(({ metric, kind }) => ({ metric, kind })),
    primaryMetric: e.primaryMetric,
    plannedSubjects: e.plannedSubjects,
    alpha: e.alpha,
  };
}

/** The primary metric's intervals at one look: per treatment, the lift's (or, where the control's mean is 0, the difference's). */
export interface IntervalPoint {
  at: number;
  metric: string;
  comparisons: { variant: string; scale: 'relative' | 'absolute'; estimate: number; lower: number | null; upper: number | null }[];
}

export type ExperimentStatus = 'draft' | 'running' | 'stopped';

export function experimentStatus(e: Pick<Experiment, 'startedAt' | 'stoppedAt'>): ExperimentStatus {
  if (e.startedAt === null) return 'draft';
  return e.stoppedAt === null ? 'running' : 'stopped';
}

/** A record's key: its project, environment and experiment key, which no slug or id can run together. */
function experimentRecordKey(projectId: string, environment: string | null, key: string): string {
  return JSON.stringify([projectId, environment, key]);
}

export const kExperimentRecords = keyedRecords<Experiment>()({
  name: 'experiment',
  database: 'experiments',
  relayed: false,
  key: (e) => experimentRecordKey(e.projectId, e.environment, e.key),
  deletedAs: 'experimentDeleted',
  indexes: {
    /** A project environment's experiments, by key. */
    environment: { keysOf: (e) => [[e.projectId, e.environment ?? '', e.key]] },
  },
});

export function getExperiment(r: StoreReader, projectId: string, environment: string | null, key: string): Experiment | undefined {
  return r.getKeyed(kExperimentRecords, experimentRecordKey(projectId, environment, key));
}

/** A project environment's experiments, by key. */
export function listExperiments(r: StoreReader, projectId: string, environment: string | null): Experiment[] {
  return r.listKeyedBy(kExperimentRecords, 'environment', [projectId, environment ?? '']);
}

export function putExperiment(w: StoreWriter, experiment: Experiment): void {
  w.putKeyed(kExperimentRecords, experiment);
}

export function deleteExperiment(w: StoreWriter, experiment: Experiment): void {
  w.deleteKeyed(kExperimentRecords, experiment);
}

// Flags: a single flag's state, or a group flag's state per environment.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.

export interface FlagState {
  enabled: boolean;
  trafficPercentage: number;
  audienceId: string | null;
}

/** One environment of a group flag. `cohorts` is the environment's own override; null inherits the flag-wide list. */
export interface EnvState extends FlagState {
  cohorts: string[] | null;
}

interface FlagBase {
  id: string;
  projectId: string;
  name: string;
  description: string;
  tags: string[];
  /** A single flag's cohort list, or a group flag's flag-wide list. */
  cohorts: string[];
  createdAt: number;
  updatedAt: number;
}

export interface SingleFlag extends FlagBase {
  kind: 'flag';
  state: FlagState;
}

export interface GroupFlag extends FlagBase {
  kind: 'groupflag';
  /** Environments without an entry are at their defaults (see kDefaultEnvState). */
  environments: Record<string, EnvState>;
}

export type Flag = SingleFlag | GroupFlag;

/**
 * How much a flag is evaluated (docs/operations.md: Flag usage): every evaluation through the Evaluation API or
 * OFREP, counted in the eval workers and written at most once a minute, so at most a minute behind.
 */
export interface FlagUsage {
  flagId: string;
  /** Evaluations counted since the flag was created. */
  evaluations: number;
  /** The latest evaluation counted, Unix ms. */
  lastEvaluatedAt: number;
}

/**
 * Usage counted since `total` added to it: the one rule for merging counts (the eval workers' totals,
 * the main thread's pending flush, the writer's stored totals): evaluations add up, the latest time wins.
 * `total` undefined is no usage yet. Returns a new record; neither argument is changed.
 */
export function mergeUsage(total: FlagUsage | undefined, count: FlagUsage): FlagUsage {
  if (total === undefined) return { flagId: count.flagId, evaluations: count.evaluations, lastEvaluatedAt: count.lastEvaluatedAt };
  return {
    flagId: count.flagId,
    evaluations: total.evaluations + count.evaluations,
    lastEvaluatedAt: Math.max(total.lastEvaluatedAt, count.lastEvaluatedAt),
  };
}

/** mergeUsage into a map of totals by flag id. */
export function addUsage(totals: Map<string, FlagUsage>, count: FlagUsage): void {
  totals.set(count.flagId, mergeUsage(totals.get(count.flagId), count));
}

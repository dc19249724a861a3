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
 * How much a flag is evaluated (README: Flag usage): every evaluation through the Evaluation API or
 * OFREP, counted in the eval workers and written at most once a minute, so at most a minute behind.
 */
export interface FlagUsage {
  flagId: string;
  /** Evaluations counted since the flag was created. */
  evaluations: number;
  /** The latest evaluation counted, Unix ms. */
  lastEvaluatedAt: number;
}

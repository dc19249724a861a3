// Flags: a single flag's state, or a group flag's state per environment.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.
import type { VariantValue } from '../targeting/definition.js';

/**
 * A flag's typed variants (issue 25), in flagd's terms: named values of one type (boolean, string, number
 * or JSON object), the variant served by default, and a targeting rule that picks a variant from the
 * evaluation context. Checked by src/targeting/parse.ts before it is stored (src/flags/variant-rules.ts).
 */
export interface TypedVariants {
  /** Variant name -> value; at least one, every value of one type. */
  variants: Record<string, VariantValue>;
  /** One of the variants, or null: the caller's own default value is served where it would be. */
  defaultVariant: string | null;
  /** A flagd targeting rule (JsonLogic with flagd's operators); {} is no rule. */
  targeting: Record<string, unknown>;
  /** flagd's flag metadata (string, number or boolean values), served with every answer; absent when none. */
  metadata?: Record<string, string | number | boolean>;
}

export interface FlagState {
  enabled: boolean;
  trafficPercentage: number;
  audienceId: string | null;
  /**
   * Absent (the key itself, never `undefined`): a boolean flag, stored and shown exactly as before
   * typed variants existed. Present: the state's typed variants; for a group flag, per environment.
   */
  typed?: TypedVariants;
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

/** A flag is stale (docs/operations.md: Flag usage) when not evaluated for this many days, unless told otherwise. */
export const kDefaultStaleDays = 30;
export const kMaxStaleDays = 3650;
const kDayMs = 24 * 3600 * 1000;

/** The cut-off of "not evaluated for `days` days" at `now`, Unix ms. */
export function staleBefore(now: number, days: number): number {
  return now - days * kDayMs;
}

/**
 * The stale rule, one home for the CLI and the web console: evaluated last before the cut-off, or never
 * evaluated and created before it (a flag created since has had no chance to be used).
 */
export function isStale(flag: { createdAt: number }, usage: FlagUsage | undefined, before: number): boolean {
  return (usage?.lastEvaluatedAt ?? flag.createdAt) < before;
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

// Flags: a single flag's state, or a group flag's state per environment.
// Plain data, like every record Flagwire keeps: the store writes them as they are and they cross threads as is.
import type { VariantValue } from '../targeting/definition.js';
import type { UnleashModel } from './unleash-model.js';

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
  /**
   * The experiment this state's answers belong to (issue 58; docs/api.md: Experiments), a slug. Absent
   * (the key itself): none, and the record keeps exactly the keys it had before experiments existed.
   */
  experiment?: string;
  /**
   * Unleash's model of this state (issue 60; src/model/unleash-model.ts): its strategies, variants and
   * dependencies decide the answer where `enabled` is true, in place of the percentage, audience and
   * cohorts, which are then not read (docs/design.md §2d). Absent (the key itself): none, and the record
   * keeps exactly the keys it had before. Never beside `typed`.
   */
  unleash?: UnleashModel;
}

/**
 * The flag metadata keys every answer of a state with an experiment carries (issue 58; docs/api.md:
 * Experiments), in OFREP's `metadata`, flagd's flag metadata and beside the Evaluation API's answer:
 * the experiment's key (Amplitude's name for it) and whether this answer is an exposure (LaunchDarkly's).
 */
export const kExperimentKeyField = 'experimentKey';
export const kInExperimentField = 'inExperiment';
/**
 * The flag metadata key of a flagd flag whose answers may be exposures (src/flags/flagd-flag.ts): the
 * marker that ends the name of each variant an exposure answers (docs/decisions.md: flagd names an
 * exposure in its variant). src/provider/events.ts spells it out, as it imports nothing.
 */
export const kExposureMarkerField = 'flagwireExposureMarker';

/** What an answer of a state with an experiment adds to its flag metadata: the experiment, and whether the answer is an exposure. */
export function experimentMetadata(experiment: string, exposed: boolean): Record<string, string | boolean> {
  return { [kExperimentKeyField]: experiment, [kInExperimentField]: exposed };
}

/** One environment of a group flag. `cohorts` is the environment's own override; null inherits the flag-wide list. */
export interface EnvState extends FlagState {
  cohorts: string[] | null;
}

/** What a flag is for (issue 99), Unleash's flag types: each has its expected lifetime. */
export const kFlagTypes = ['release', 'experiment', 'operational', 'kill-switch', 'permission'] as const;
export type FlagType = (typeof kFlagTypes)[number];
/** A lifetime in days, or one that never ends. */
export type Lifetime = number | 'permanent';
/** The lifetime of each type unless the flag says otherwise (Unleash's expected lifetimes, in days). */
export const kDefaultLifetimes: Readonly<Record<FlagType, Lifetime>> = Object.freeze({
  release: 40,
  experiment: 40,
  operational: 'permanent',
  'kill-switch': 'permanent',
  permission: 'permanent',
});

interface FlagBase {
  id: string;
  projectId: string;
  name: string;
  description: string;
  tags: string[];
  /** A single flag's cohort list, or a group flag's flag-wide list. */
  cohorts: string[];
  /**
   * How a key's percentage bucket is computed (issue 44). Absent (the key itself, never `undefined`):
   * design §2's `murmur3_x86_32(utf8(id + ":" + key)) mod 100`, every flag made before issue 44 and every
   * flag made without choosing. 'fractional': flagd's `fractional` point over the same hash,
   * `floor(murmur3_x86_32(utf8(id + ":" + key)) * 100 / 2^32)`, so a stock flagd provider can bucket the
   * flag exactly as the server does. Fixed when the flag is made: changing it would move users.
   */
  bucketing?: 'fractional';
  /**
   * What the flag is for (issue 99; src/flags/lifecycle.ts), which sets its expected lifetime. Absent (the
   * key itself): 'release', every flag made before kinds existed, and the record keeps the keys it had.
   * Not `kind`: the spec's `kind` is the project's form (flag or groupflag).
   */
  type?: FlagType;
  /** Who answers for the flag: a user's or a team's name. Absent: nobody named. */
  owner?: string;
  /** Expected lifetime in days, or 'permanent'. Absent: its type's default (kDefaultLifetimes). */
  lifetimeDays?: Lifetime;
  /**
   * When it was archived (issue 99, item 2), Unix ms. Absent: in service. An archived flag leaves every
   * evaluation surface (kFlagRecords' project lookup lists flags in service only) and keeps its name.
   */
  archivedAt?: number;
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
 * How much a flag is evaluated (docs/operations.md: Flag usage): every evaluation through the Evaluation API,
 * OFREP or Unleash's front-end API, counted in the eval workers and written at most once a minute, so at
 * most a minute behind; and what Unleash's SDKs, Flagwire's provider and relays report (usageKnown says
 * what may be missing).
 */
export interface FlagUsage {
  flagId: string;
  /** Evaluations counted since the flag was created. */
  evaluations: number;
  /** The latest evaluation counted, Unix ms. */
  lastEvaluatedAt: number;
  /**
   * The stored totals only (the writer's): evaluations per hour over the last kUsageHours hours, for the
   * web console's chart. Absent on the counts the workers send, and on totals written before it was kept.
   */
  hours?: UsageHours;
}

/** Evaluations per hour: `counts[i]` is the hour `lastHour - (counts.length - 1 - i)` (hours since 1970, UTC). */
export interface UsageHours {
  lastHour: number;
  counts: number[];
}

/** How many hours of per-hour counts a flag keeps: a week (the record stays small: at most 168 numbers). */
export const kUsageHours = 168;
const kHourMs = 3600 * 1000;

/**
 * `evaluations` more in the hour of `at`, over `hours` (undefined: none yet): a new record, at most
 * kUsageHours long. A count's evaluations are all in the hour of its latest (UsageCount). A count for an
 * hour before the record's newest is added to that hour while it is in the week up to the newest, also
 * before the record's first hour (two nodes flush in any order: the same record either way), and
 * dropped once it is not.
 */
export function addToHours(hours: UsageHours | undefined, evaluations: number, at: number): UsageHours {
  const hour = usageHour(at);
  if (hours === undefined) return { lastHour: hour, counts: [evaluations] };
  if (hour <= hours.lastHour) {
    if (hours.lastHour - hour >= kUsageHours) return hours;
    // An hour before the record's first (another node's flush came later) is kept too: zeros fill the gap.
    const index = hours.counts.length - 1 - (hours.lastHour - hour);
    const counts = index < 0 ? [...new Array<number>(-index).fill(0), ...hours.counts] : [...hours.counts];
    const at = Math.max(index, 0);
    counts[at] = saturatingSum(counts[at]!, evaluations);
    return { lastHour: hours.lastHour, counts };
  }
  const gap = Math.min(hour - hours.lastHour, kUsageHours);
  const counts = [...hours.counts, ...new Array<number>(gap - 1).fill(0), evaluations].slice(-kUsageHours);
  return { lastHour: hour, counts };
}

/** The last `n` hours up to `now`'s, oldest first, as evaluations per hour (0 for an hour with none). */
export function hourlySeries(hours: UsageHours | undefined, now: number, n: number): number[] {
  const series = new Array<number>(n).fill(0);
  if (hours === undefined) return series;
  const nowHour = usageHour(now);
  for (let i = 0; i < hours.counts.length; i++) {
    const age = nowHour - (hours.lastHour - (hours.counts.length - 1 - i));
    if (age >= 0 && age < n) series[n - 1 - age] = hours.counts[i]!;
  }
  return series;
}

/** The hours with evaluations among the last kUsageHours up to `now`'s, oldest first: each hour's start (Unix ms) and count. */
export function countedHours(hours: UsageHours | undefined, now: number): { hour: number; evaluations: number }[] {
  const series = hourlySeries(hours, now, kUsageHours);
  const first = usageHour(now) - (kUsageHours - 1);
  const counted: { hour: number; evaluations: number }[] = [];
  for (let i = 0; i < series.length; i++) if (series[i]! > 0) counted.push({ hour: (first + i) * kHourMs, evaluations: series[i]! });
  return counted;
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
 * What may evaluate a flag without reporting it (issue 99, item 3). Flagwire's eval workers, its
 * OpenFeature provider, relays and Unleash's SDKs report their evaluations; a stock flagd provider reading
 * a flag set (or a flagd file exported from one) reports nothing.
 */
export interface UnreportedPaths {
  /** Whether a flagd flag set serves the flag in some environment (src/flags/flagd-serving.ts). */
  servedByFlagSet: boolean;
  /**
   * Whether a flag set serving it may have been read in the lifecycle's window (a sync stream open, a
   * FetchAllFlags, a GET of the set: src/flags/records/flag-set-read-records.ts): false only when known not to be.
   */
  flagSetRead: boolean;
}

/** What a surface says of a flag whose usage is not known (usageKnown), beside its count. */
export const kUsageUnknownNote =
  'May be evaluated by paths that do not report usage (stock flagd providers reading its flag set): its count is a lower bound, and it is never called unused on it.';

/**
 * The one rule of whether a flag's usage count is all its use, for every surface that shows usage or a
 * stage read from it (the console, the API, the command line, the lifecycle): not when a path that does
 * not report may evaluate it. Where it is not known, missing evaluations prove nothing.
 */
export function usageKnown(paths: UnreportedPaths): boolean {
  return !(paths.servedByFlagSet && paths.flagSetRead);
}

/** Unused: stale by its count (isStale), and its count is all its use (usageKnown); never on missing data. */
export function isUnused(flag: { createdAt: number }, usage: FlagUsage | undefined, before: number, paths: UnreportedPaths): boolean {
  return usageKnown(paths) && isStale(flag, usage, before);
}

/**
 * a + b, held at Number.MAX_SAFE_INTEGER: past it a count is no longer exact (issue 96, item 7), so a
 * total that reaches it stays there (docs/operations.md: Flag usage says so).
 */
export function saturatingSum(a: number, b: number): number {
  return Math.min(a + b, Number.MAX_SAFE_INTEGER);
}

/**
 * Usage counted since `total` added to it: the one rule for merging counts (the eval workers' totals,
 * the main thread's pending flush, the writer's stored totals): evaluations add up, the latest time wins.
 * `total` undefined is no usage yet. Returns a new record; neither argument is changed.
 */
export function mergeUsage(total: FlagUsage | undefined, count: Pick<FlagUsage, 'flagId' | 'evaluations' | 'lastEvaluatedAt'>): FlagUsage {
  if (total === undefined) return { flagId: count.flagId, evaluations: count.evaluations, lastEvaluatedAt: count.lastEvaluatedAt };
  return {
    flagId: count.flagId,
    evaluations: saturatingSum(total.evaluations, count.evaluations),
    lastEvaluatedAt: Math.max(total.lastEvaluatedAt, count.lastEvaluatedAt),
  };
}

/** A flag's stored totals after a count is recorded: mergeUsage, and the count added to its hour (the console's chart). */
export function recordedUsage(
  total: FlagUsage | undefined,
  count: Pick<FlagUsage, 'flagId' | 'evaluations' | 'lastEvaluatedAt'>,
): FlagUsage {
  return { ...mergeUsage(total, count), hours: addToHours(total?.hours, count.evaluations, count.lastEvaluatedAt) };
}

/**
 * Evaluations of one flag in one environment, every one of them in the hour of `lastEvaluatedAt`: what
 * every path counts and sends to the writer (the eval workers, Unleash's SDKs, the provider, relays).
 * Each counter cuts its counts at the hour (a new count per hour), so a count's hour is exact.
 */
export interface UsageCount {
  flagId: string;
  /** The environment evaluated; kSingleState for a single flag's one state (docs/decisions.md: Usage per environment). */
  environment: string;
  evaluations: number;
  lastEvaluatedAt: number;
}

/** The environment a single flag's (kind 'flag') usage is counted under: its one state, which no environment name is. */
export const kSingleState = '';

/** One flag's usage in one environment, kept beside its totals (FlagUsage), with its hours. */
export interface EnvironmentUsage extends FlagUsage {
  /** As UsageCount's: kSingleState for a single flag. */
  environment: string;
}

/** The hour (since 1970, UTC) of `at`, Unix ms: the unit usage is counted in. */
export function usageHour(at: number): number {
  return Math.floor(at / kHourMs);
}

/** Adds `count` to the pending counts, summed by flag, environment and hour (the one key counts merge under). */
export function addCount(pending: Map<string, UsageCount>, count: UsageCount): void {
  const key = `${count.flagId}\n${count.environment}\n${usageHour(count.lastEvaluatedAt)}`;
  const held = pending.get(key);
  if (held === undefined) pending.set(key, { ...count });
  else {
    held.evaluations = saturatingSum(held.evaluations, count.evaluations);
    held.lastEvaluatedAt = Math.max(held.lastEvaluatedAt, count.lastEvaluatedAt);
  }
}

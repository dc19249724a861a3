// A flag's lifecycle stage (issue 99; docs/api.md: Flag lifecycle), derived from facts in one pure
// function, as Unleash derives its lifecycle stages: the facts are gathered elsewhere (lifecycle-facts.ts),
// so the rules can be tested over any facts without a store.
import { FlagwireError } from '../errors.js';
import { kDefaultLifetimes, type Flag, type FlagType, type Lifetime } from '../model/flags.js';

export const kLifecycleStages = ['new', 'live', 'settled', 'unused', 'ready-to-archive', 'archived'] as const;
export type LifecycleStage = (typeof kLifecycleStages)[number];

/** The N of every "for N days" of the stages: the stale rule's window (docs/operations.md: Flag usage). */
export const kLifecycleWindowDays = 30;
const kDayMs = 24 * 3600 * 1000;

export interface LifecycleFacts {
  now: number;
  createdAt: number;
  /** Null: in service. */
  archivedAt: number | null;
  /**
   * Every environment serves one answer to every context (servesOneAnswer), and has since `unchangedSince`:
   * the flag's last change (any change counts: a rule may change without changing the answer, and
   * the flag is then taken to be settled again only N days later).
   */
  servesOneAnswer: boolean;
  unchangedSince: number;
  /** Whether every path that evaluates the flag reports it; false: missing evaluations prove nothing. */
  usageKnown: boolean;
  /** The latest evaluation reported; null: none. */
  lastEvaluatedAt: number | null;
  lifetime: Lifetime;
  /** References found in code by the latest scan; undefined: never scanned. */
  codeReferences: number | undefined;
}

/** The lifetime a flag has: its own, else its type's. */
export function lifetimeOf(flag: { type?: FlagType; lifetimeDays?: Lifetime }): Lifetime {
  return flag.lifetimeDays ?? kDefaultLifetimes[flag.type ?? 'release'];
}

/**
 * The stage, first that holds:
 * - archived: archived;
 * - ready-to-archive: settled or unused, past its lifetime (never when permanent), not evaluated in the
 *   window, and no code reference: a scan found none, or it was never scanned and usage is known (a
 *   flag that every path reports unevaluated is in no running code). Unknown usage and no scan: never.
 * - unused: usage is known, and no evaluation in the window, and created before it;
 * - settled: serves one answer everywhere, unchanged for the window;
 * - new: created within the window, never evaluated;
 * - live: anything else.
 */
export function lifecycleStage(facts: LifecycleFacts): LifecycleStage {
  if (facts.archivedAt !== null) return 'archived';
  const windowStart = facts.now - kLifecycleWindowDays * kDayMs;
  const evaluatedInWindow = facts.lastEvaluatedAt !== null && facts.lastEvaluatedAt >= windowStart;
  const unused = facts.usageKnown && !evaluatedInWindow && facts.createdAt < windowStart;
  const settled = facts.servesOneAnswer && facts.unchangedSince < windowStart;
  const pastLifetime = facts.lifetime !== 'permanent' && facts.now - facts.createdAt >= facts.lifetime * kDayMs;
  const noReference = facts.codeReferences === undefined ? facts.usageKnown : facts.codeReferences === 0;
  if ((settled || unused) && pastLifetime && !evaluatedInWindow && noReference) return 'ready-to-archive';
  if (unused) return 'unused';
  if (settled) return 'settled';
  if (facts.createdAt >= windowStart && facts.lastEvaluatedAt === null) return 'new';
  return 'live';
}

/** A flag's lifecycle fields as a record, a flag file and a create body carry them: each absent at its default. */
export type LifecycleFields = Pick<Flag, 'type' | 'owner' | 'lifetimeDays'>;

/** The lifecycle fields a create or a flag file sets: each key only when given, so a record keeps the keys it had. */
export function lifecycleFields(body: LifecycleFields): LifecycleFields {
  const out: LifecycleFields = {};
  if (body.type !== undefined) out.type = body.type;
  if (body.owner !== undefined) out.owner = body.owner.trim();
  if (body.lifetimeDays !== undefined) out.lifetimeDays = body.lifetimeDays;
  return out;
}

/** A stage as a query or an option names it (null: none named); another word is refused with the list. */
export function stageParam(value: string | null | undefined): LifecycleStage | null {
  if (value === null || value === undefined) return null;
  if ((kLifecycleStages as readonly string[]).includes(value)) return value as LifecycleStage;
  throw new FlagwireError('INVALID_REQUEST', `stage must be one of ${kLifecycleStages.join(', ')}`);
}

// Scheduled changes and rollouts as people read them (`flagwire flag schedule`, `schedule list`, `flag rollout`, ...),
// and a rollout's steps as people write them (`flag rollout --steps`).
import type { RolloutPlan, RolloutStep } from './rollouts.js';
import type { ScheduledChange } from './schedules.js';
import { readingText } from './guards.js';
import { isWeightsStep } from './rollout-weights.js';
import { weightsText } from '../flags/fractional-split.js';
import type { RolloutAction } from './schemas.js';

const time = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());

function row(change: ScheduledChange): string[] {
  return [change.id, change.flagId, change.env ?? '-', time(change.at), JSON.stringify(change.patch), change.status, change.outcome ?? '-'];
}

const kHeaders = ['ID', 'FLAG', 'ENV', 'AT', 'PATCH', 'STATUS', 'OUTCOME'];

export function renderSchedules(
  changes: readonly ScheduledChange[],
  table: (h: readonly string[], r: readonly (readonly string[])[]) => string,
): string {
  return changes.length === 0 ? 'No scheduled changes.' : table(kHeaders, changes.map(row));
}

export function renderSchedule(
  change: ScheduledChange,
  table: (h: readonly string[], r: readonly (readonly string[])[]) => string,
): string {
  const said =
    change.status === 'pending' ? `Scheduled for ${time(change.at)}.` : `${change.status[0]!.toUpperCase()}${change.status.slice(1)}.`;
  return `${said}\n${table(kHeaders, [row(change)])}`;
}

type Table = (h: readonly string[], r: readonly (readonly string[])[]) => string;

/** What a step sets: `10%`, or `on=10/off=90`. */
export function stepText(step: RolloutStep): string {
  return isWeightsStep(step) ? weightsText(step.variantWeights) : `${step.trafficPercentage}%`;
}

/** The steps, the one in force in brackets: none once rolled back (the flag is back where it was before the first). */
function stepsText(plan: RolloutPlan): string {
  const current = plan.status === 'rolled-back' ? -1 : plan.current;
  return plan.steps
    .map((s, i) => {
      const text = stepText(s);
      return i === current ? `[${text}]` : text;
    })
    .join(' -> ');
}

/** The guard's last reading: its value (or why none), `breached` when it tripped; null without a guard. */
export function guardReadingText(plan: RolloutPlan): string | null {
  if (!plan.guard) return null;
  const reading = plan.guardReading ?? null;
  if (reading === null) return 'not read yet';
  const said = reading.value === null ? (reading.note ?? 'no data') : readingText(reading.value);
  return reading.breached ? `breached: ${reading.note}` : `${said} at ${time(reading.at)}`;
}

export function renderRollouts(plans: readonly RolloutPlan[], table: Table): string {
  if (plans.length === 0) return 'No rollouts.';
  return table(
    ['ID', 'FLAG', 'ENV', 'STEPS', 'STATUS', 'NEXT STEP', 'GUARD', 'WHY PAUSED'],
    plans.map((p) => [
      p.id,
      p.flagId,
      p.env ?? '-',
      stepsText(p),
      p.status,
      time(p.nextAt),
      guardReadingText(p) ?? '-',
      p.pausedReason ?? '-',
    ]),
  );
}

export const kRolloutActionSummary: Readonly<Record<RolloutAction, string>> = {
  pause: 'pause a running rollout: it holds its step until resumed -> the rollout',
  resume: 'resume a paused rollout: its step is set again and held anew -> the rollout',
  skip: 'take the next step of a rollout now -> the rollout',
  rollback: 'roll a rollout back: the percentage (or the targeting) before its first step; it ends -> the rollout',
};

/** A duration's units as people write them: `30s`, `30m`, `1h`, `2d`. */
export const kUnitMs: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Steps written `10:1h,50:30m,100` (percentages) or `on=10/off=90:1h,on=100/off=0` (variant weights,
 * VARIANT=WEIGHT joined by `/`), in order, each but the last held for a duration (N s, m, h or d); or what
 * is wrong with the first part that is neither. The writer checks the steps themselves.
 */
export function rolloutStepsFromText(text: string): { steps: RolloutStep[] } | { problem: string } {
  const steps: RolloutStep[] = [];
  for (const part of text.split(',').map((s) => s.trim())) {
    if (part === '') continue;
    const m = /^(.+?)(?::(\d{1,9})(s|m|h|d))?$/.exec(part);
    const step = m === null ? null : rolloutStep(m[1]!);
    if (m === null || step === null)
      return {
        problem: `"${part}" is not PERCENT or VARIANT=WEIGHT/VARIANT=WEIGHT/..., each with :HOLD but the last (10:1h, 50:30m, 100; on=10/off=90:1h, on=100/off=0)`,
      };
    if (m[2] !== undefined) step.holdMs = Number(m[2]) * kUnitMs[m[3]!]!;
    steps.push(step);
  }
  return { steps };
}

function rolloutStep(text: string): RolloutStep | null {
  if (/^\d{1,3}$/.test(text)) return { trafficPercentage: Number(text) };
  const pairs = text.split('/').map((pair) => /^(.+)=(\d{1,10})$/.exec(pair));
  if (pairs.some((m) => m === null)) return null;
  // fromEntries: every name an own key, `__proto__` too (refused then as no variant of the flag).
  return { variantWeights: Object.fromEntries(pairs.map((m) => [m![1]!, Number(m![2])])) };
}

// Scheduled changes and rollouts as people read them (`flagwire flag schedule`, `schedule list`, `flag rollout`, ...).
import type { RolloutPlan } from '../model/rollouts.js';
import type { ScheduledChange } from '../model/schedules.js';
import { isWeightsStep, weightsText } from './rollout-weights.js';
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

function stepsText(plan: RolloutPlan): string {
  return plan.steps
    .map((s, i) => {
      const text = isWeightsStep(s) ? weightsText(s.variantWeights) : `${s.trafficPercentage}%`;
      return i === plan.current ? `[${text}]` : text;
    })
    .join(' -> ');
}

/** The guard's last reading: its value (or why none), `breached` when it tripped. */
function guardText(plan: RolloutPlan): string {
  if (!plan.guard) return '-';
  const reading = plan.guardReading ?? null;
  if (reading === null) return 'not read yet';
  const said = reading.value === null ? (reading.note ?? 'no data') : String(reading.value);
  return reading.breached ? `breached: ${reading.note}` : `${said} at ${time(reading.at)}`;
}

export function renderRollouts(plans: readonly RolloutPlan[], table: Table): string {
  if (plans.length === 0) return 'No rollouts.';
  return table(
    ['ID', 'FLAG', 'ENV', 'STEPS', 'STATUS', 'NEXT STEP', 'GUARD', 'WHY PAUSED'],
    plans.map((p) => [p.id, p.flagId, p.env ?? '-', stepsText(p), p.status, time(p.nextAt), guardText(p), p.pausedReason ?? '-']),
  );
}

export const kRolloutActionSummary: Readonly<Record<RolloutAction, string>> = {
  pause: 'pause a running rollout: it holds its step until resumed -> the rollout',
  resume: 'resume a paused rollout: its step is set again and held anew -> the rollout',
  skip: 'take the next step of a rollout now -> the rollout',
  rollback: 'roll a rollout back: the percentage (or the targeting) before its first step; it ends -> the rollout',
};

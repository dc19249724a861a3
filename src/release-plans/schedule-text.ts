// Scheduled changes and rollouts as people read them (`flagwire flag schedule`, `schedule list`, `flag rollout`, ...),
// and a rollout's steps as people write them (`flag rollout --steps`, the web console's rollout form).
import type { RolloutPlan, RolloutStep } from '../model/rollouts.js';
import type { ScheduledChange } from '../model/schedules.js';
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
  return plan.steps.map((s, i) => `${i === plan.current ? '[' : ''}${s.trafficPercentage}%${i === plan.current ? ']' : ''}`).join(' -> ');
}

export function renderRollouts(plans: readonly RolloutPlan[], table: Table): string {
  if (plans.length === 0) return 'No rollouts.';
  return table(
    ['ID', 'FLAG', 'ENV', 'STEPS', 'STATUS', 'NEXT STEP', 'WHY PAUSED'],
    plans.map((p) => [p.id, p.flagId, p.env ?? '-', stepsText(p), p.status, time(p.nextAt), p.pausedReason ?? '-']),
  );
}

export const kRolloutActionSummary: Readonly<Record<RolloutAction, string>> = {
  pause: 'pause a running rollout: it holds its step until resumed -> the rollout',
  resume: 'resume a paused rollout: its step is set again and held anew -> the rollout',
  skip: 'take the next step of a rollout now -> the rollout',
  rollback: 'roll a rollout back: the percentage before its first step; it ends -> the rollout',
};

/** A duration's units as people write them: `30s`, `30m`, `1h`, `2d`. */
export const kUnitMs: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Steps written `10:1h,50:30m,100`: percentages in order, each but the last held for a duration (N s, m,
 * h or d); or what is wrong with the first part that is neither. The writer checks the steps themselves.
 */
export function rolloutStepsFromText(text: string): { steps: RolloutStep[] } | { problem: string } {
  const steps: RolloutStep[] = [];
  for (const part of text.split(',').map((s) => s.trim())) {
    if (part === '') continue;
    const m = /^(\d{1,3})(?::(\d{1,9})(s|m|h|d))?$/.exec(part);
    if (!m) return { problem: `"${part}" is not PERCENT or PERCENT:HOLD (10:1h, 50:30m, 100)` };
    steps.push(
      m[2] === undefined
        ? { trafficPercentage: Number(m[1]) }
        : { trafficPercentage: Number(m[1]), holdMs: Number(m[2]) * kUnitMs[m[3]!]! },
    );
  }
  return { steps };
}

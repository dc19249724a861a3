// Scheduled changes as people read them (`flagwire flag schedule`, `schedule list`, `schedule cancel`).
import type { ScheduledChange } from '../model/schedules.js';

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

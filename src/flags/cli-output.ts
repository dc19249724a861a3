// How the command line prints flags, without --json (src/cli/command/output.ts says how it prints
// everything: tables, fields, times): a flag as stored, flags as the Management API shows them, a flags
// import's outcome.
import { formatList, formatTime, renderFields, renderTable } from '../cli/command/output.js';
import type { EnvironmentEntry, EnvironmentsFlag, FlatFlag } from './representation-shapes.js';
import type { Flag } from '../model/flags.js';
import type { FlagLifecycle } from './lifecycle-shapes.js';

function formatState(s: { enabled: boolean; trafficPercentage: number; audienceId: string | null }): string {
  return `${s.enabled ? 'on' : 'off'}, ${s.trafficPercentage}%${s.audienceId === null ? '' : `, audience ${s.audienceId}`}`;
}

export function renderFlag(flag: Flag): string {
  const fields: [string, string][] = [
    ['id', flag.id],
    ['project', flag.projectId],
    ['name', flag.name],
    ['kind', flag.kind],
    ...bucketingLine(flag),
    ['description', flag.description === '' ? '-' : flag.description],
    ['tags', formatList(flag.tags)],
  ];
  if (flag.kind === 'flag') {
    fields.push(['state', formatState(flag.state)], ['cohorts', formatList(flag.cohorts)]);
  } else {
    fields.push(['cohorts', `${formatList(flag.cohorts)} (flag-wide)`]);
    for (const [env, state] of Object.entries(flag.environments)) {
      const cohorts = state.cohorts === null ? 'inherited' : formatList(state.cohorts);
      fields.push([`env ${env}`, `${formatState(state)}, cohorts: ${cohorts}`]);
    }
  }
  fields.push(['updated', formatTime(flag.updatedAt)]);
  return renderFields(fields);
}

// ---- flags as the Management API shows them ----------------------------------------------------

type FlagView = FlatFlag | EnvironmentsFlag;

/** One state: `on, 50%[, audience A][, cohorts: a, b]`. */
function formatViewState(s: Omit<EnvironmentEntry, 'updatedAt'>): string {
  const cohorts = s.cohorts.length === 0 ? '' : `, cohorts: ${s.cohorts.join(', ')}`;
  if (s.variants === undefined) return `${formatState(s)}${cohorts}`;
  const rule = s.targeting === undefined || Object.keys(s.targeting).length === 0 ? 'none' : JSON.stringify(s.targeting);
  return `${formatState(s)}${cohorts}, variants: ${JSON.stringify(s.variants)}, default: ${s.defaultVariant ?? "(the caller's)"}, rule: ${rule}`;
}

function viewStates(flag: FlagView): [string, string][] {
  if ('environments' in flag) {
    const envs = Object.entries(flag.environments);
    return envs.length === 0 ? [['state', '(no environments yet)']] : envs.map(([env, state]) => [`env ${env}`, formatViewState(state)]);
  }
  return [['state', formatViewState(flag)]];
}

/** A fractional flag's bucketing line; none for a modulo flag, whose output is as it was before the choice existed. */
function bucketingLine(flag: { bucketing?: 'fractional' }): [string, string][] {
  return flag.bucketing === undefined ? [] : [['bucketing', `${flag.bucketing} (flagd's fractional point; fixed when the flag was made)`]];
}

export function renderFlagView(flag: FlagView): string {
  return renderFields([
    ['id', flag.id],
    ['name', flag.name],
    ['kind', flag.kind],
    ...bucketingLine(flag),
    ['description', flag.description === '' ? '-' : flag.description],
    ['tags', formatList(flag.tags)],
    ...viewStates(flag),
    ['updated', formatTime(flag.updatedAt)],
    ['last evaluated', formatTime(flag.lastEvaluatedAt, 'never')],
    ['evaluations', String(flag.evaluations)],
  ]);
}

export function renderFlagViews(flags: readonly FlagView[]): string {
  if (flags.length === 0) return 'No flags.';
  return renderTable(
    ['ID', 'NAME', 'KIND', 'STATE', 'UPDATED', 'LAST EVALUATED'],
    flags.map((f) => [
      f.id,
      f.name,
      f.bucketing === undefined ? f.kind : `${f.kind} (${f.bucketing})`,
      viewStates(f)
        .map(([label, state]) => (label === 'state' ? state : `${label.slice(4)}: ${state}`))
        .join('; '),
      formatTime(f.updatedAt),
      formatTime(f.lastEvaluatedAt, 'never'),
    ]),
  );
}

export function renderStaleFlags(result: { days: number; flags: readonly FlagView[] }): string {
  const span = `${result.days} day${result.days === 1 ? '' : 's'}`;
  if (result.flags.length === 0) return `No flag has gone ${span} without an evaluation.`;
  return `Not evaluated for ${span}:\n${renderTable(
    ['ID', 'NAME', 'LAST EVALUATED', 'EVALUATIONS', 'UPDATED'],
    result.flags.map((f) => [f.id, f.name, formatTime(f.lastEvaluatedAt, 'never'), String(f.evaluations), formatTime(f.updatedAt)]),
  )}`;
}

export function renderDeleted(result: { id: string }): string {
  return `Deleted flag ${result.id}.`;
}

/** Flags' lifecycles, one row each: the stage first, as `flag lifecycles` is read for what to remove. */
export function renderLifecycles(views: readonly FlagLifecycle[]): string {
  return renderTable(
    ['stage', 'name', 'type', 'owner', 'lifetime', 'last evaluated', 'id'],
    views.map((v) => [
      v.stage,
      v.name,
      v.type,
      v.owner ?? '-',
      v.lifetimeDays === 'permanent' ? 'permanent' : `${v.lifetimeDays} days`,
      v.lastEvaluatedAt === null ? 'never' : formatTime(v.lastEvaluatedAt),
      v.id,
    ]),
  );
}

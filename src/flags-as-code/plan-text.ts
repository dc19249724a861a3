// A plan as people read it (`flagwire plan` and `apply` without --json): one line per thing created,
// changed or deleted, then one indented line per field, `before -> after` for a change (changeLines, which
// the Unleash importer's plan prints too: src/unleash/import-text.ts).
import type { PlannedChange, PlanResult } from './schemas.js';

const kMark: Readonly<Record<PlannedChange['op'], string>> = { create: '+', update: '~', delete: '-' };

function value(v: unknown): string {
  return JSON.stringify(v) ?? 'null';
}

export function changeLines(change: PlannedChange): string[] {
  const where = change.environment === undefined ? '' : ` in ${change.environment}`;
  const head = `${kMark[change.op]} ${change.kind} ${change.name}${where}${change.consoleOnly ? '  (console only)' : ''}`;
  const fields = change.fields.map((f) =>
    change.op === 'create' ? `    ${f.path}: ${value(f.after)}` : `    ${f.path}: ${value(f.before)} -> ${value(f.after)}`,
  );
  return [head, ...fields];
}

function notes(result: PlanResult): string[] {
  const lines: string[] = [];
  if (result.notInFile.length > 0) lines.push(`Not in the file, kept (--prune deletes them): ${result.notInFile.join(', ')}`);
  if (result.ignored.length > 0) lines.push(`Not managed through the Management API, left as they are: ${result.ignored.join('; ')}`);
  return lines;
}

function counts(changes: readonly PlannedChange[]): string {
  const n = (op: PlannedChange['op']) => changes.filter((c) => c.op === op).length;
  return `${n('create')} to create, ${n('update')} to change, ${n('delete')} to delete.`;
}

export function renderPlan(result: PlanResult): string {
  if (!result.changed)
    return [`No changes: project ${result.projectId} matches the file (revision ${result.revision}).`, ...notes(result)].join('\n');
  return [
    `Plan for project ${result.projectId} at revision ${result.revision} (apply --if-revision ${result.revision} applies it only if nothing changed since):`,
    ...result.changes.flatMap(changeLines),
    ...notes(result),
    counts(result.changes),
  ].join('\n');
}

export function renderApplied(result: PlanResult): string {
  if (!result.changed)
    return [`Nothing to apply: project ${result.projectId} already matches the file (revision ${result.revision}).`, ...notes(result)].join(
      '\n',
    );
  const n = (op: PlannedChange['op']) => result.changes.filter((c) => c.op === op).length;
  return [
    ...result.changes.flatMap(changeLines),
    ...notes(result),
    `Applied to project ${result.projectId}, now at revision ${result.revision}: ${n('create')} created, ${n('update')} changed, ${n('delete')} deleted.`,
  ].join('\n');
}

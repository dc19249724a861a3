// The importer's plan and report as people read them (`flagwire import unleash` without --json): per
// project, flags as code's lines (changeLines), then every flag not carried with each reason, then what
// is left behind without changing an answer.
import { changeLines } from '../flags-as-code/plan-text.js';
import type { PlanResult } from '../flags-as-code/schemas.js';
import type { ImportPlan } from './import-plan.js';

/** What the command answers (cli.ts): the plan, and what was applied (null: a plan only). */
export interface ImportOutcome {
  plan: ImportPlan;
  applied: PlanResult[] | null;
}

function planLines(plan: ImportPlan): string[] {
  const lines = [`Import of Unleash (${plan.from}) into organisation ${plan.orgId}:`];
  for (const p of plan.projects) {
    lines.push(
      p.projectId === null
        ? `+ project ${p.name} (from Unleash's "${p.unleashProject}")`
        : `~ project ${p.name} (${p.projectId}, from Unleash's "${p.unleashProject}")`,
    );
    lines.push(...p.changes.flatMap(changeLines).map((l) => `  ${l}`));
    if (p.changes.length === 0) lines.push('  no changes');
  }
  // flags as code's mark: a change POST /api/v1/apply refuses; this import, from the command line, makes it.
  if (plan.projects.some((p) => p.changes.some((c) => c.consoleOnly)))
    lines.push(
      '(console only): a change only the console and the command line make, as this import does; the Management API (POST /api/v1/apply) refuses it, so a file kept as code that still makes it is applied with `flagwire apply`.',
    );
  if (plan.refused.length > 0) {
    lines.push(`Not carried: ${plan.refused.length} flag(s) that would not answer as they do in Unleash, left out:`);
    for (const f of plan.refused) {
      lines.push(`  ${f.project}/${f.flag}`);
      for (const r of f.refusals) lines.push(`    ${r.where}: ${r.reason}`);
    }
  }
  if (plan.notes.length > 0) {
    lines.push('Left behind, answers unchanged:');
    for (const n of plan.notes) lines.push(`  ${n.project}/${n.flag}: ${n.note}`);
  }
  return lines;
}

export function renderImport(outcome: ImportOutcome): string {
  const lines = planLines(outcome.plan);
  if (outcome.applied === null) {
    const changes = outcome.plan.projects.reduce((n, p) => n + p.changes.length, 0);
    lines.push(
      `${changes} change(s) planned, nothing applied: run again with --apply${outcome.plan.refused.length > 0 ? ' --skip-refused (the flags not carried stay out)' : ''}.`,
    );
  } else {
    lines.push(`Applied: ${outcome.applied.map((r) => `${r.projectId} at revision ${r.revision}`).join(', ') || 'nothing to apply'}.`);
  }
  return lines.join('\n');
}

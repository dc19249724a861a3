// A saved plan: the JSON a plan answers with (`flagwire plan --out`, `--json`, POST /api/v1/plan), kept
// so that apply makes that plan and no other (docs/flags-as-code.md, "A saved plan"). Apply needs three
// of its fields: the project, the revision it was made at and its digest.
import { compileValidator } from '../model/validation.js';
import { type Static, Type } from '../typebox.js';
import type { ApplyConditions } from './apply-commands.js';
import { PlanResult } from './schemas.js';

export const SavedPlan = Type.Pick(PlanResult, ['projectId', 'revision', 'digest']);
export type SavedPlan = Static<typeof SavedPlan>;

const kSavedPlan = compileValidator(SavedPlan, { quoteKeys: false });

/** The conditions a saved plan puts on an apply to `projectId`; problems name what is wrong with the text. */
export function savedPlanConditions(
  text: string,
  projectId: string,
): { ok: true; conditions: ApplyConditions } | { ok: false; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `is not JSON (${(err as Error).message})` };
  }
  const problems = kSavedPlan.problems(value);
  if (problems.length > 0) return { ok: false, problem: `is not a saved plan (${problems.join('; ')})` };
  const plan = value as SavedPlan;
  if (plan.projectId !== projectId) return { ok: false, problem: `is a plan of project ${plan.projectId}, not ${projectId}` };
  return { ok: true, conditions: { ifProjectRevision: plan.revision, ifPlan: plan.digest } };
}

// The importer's writer command (issue 60, item 4): a plan (import-plan.ts) applied in one transaction,
// all of it or, when anything is refused, none. Each project the plan creates is made as `flagwire
// project create` makes one; each file is applied as `flagwire apply` applies it (flags as code's
// flagsApply: every change through the command a person would use, audited as the operator), on the
// condition that it still makes the changes the plan showed (its digest), so a project changed between
// the plan and the apply is refused, not overwritten.
import type { Principal } from '../actor/audit-actor.js';
import { flagsApply } from '../flags-as-code/apply-commands.js';
import { fileText } from '../flags-as-code/flag-file.js';
import { planDigest } from '../flags-as-code/plan.js';
import type { PlanResult } from '../flags-as-code/schemas.js';
import { jsonBody } from '../model/request-body.js';
import { projectCreate } from '../projects/project-commands.js';
import type { StoreWriter } from '../store/interfaces.js';
import type { ImportPlan } from './import-plan.js';

export interface UnleashImportInput {
  /** The operator, or the `--as` user: an Admin or Owner of the organisation to create projects. */
  principal: Principal;
  orgId: string;
  projects: {
    name: string;
    /** null: created by this import. */
    projectId: string | null;
    environments: string[];
    file: Record<string, unknown>;
    /** The plan's digest of an existing project's changes: applied only if they are still those. */
    digest: string | null;
  }[];
}

/** The writer command's input for `plan`: what it applies, and what it insists on. */
export function importInput(plan: ImportPlan, principal: Principal): UnleashImportInput {
  return {
    principal,
    orgId: plan.orgId,
    projects: plan.projects.map((p) => ({
      name: p.name,
      projectId: p.projectId,
      environments: (p.file.environments as string[] | undefined) ?? [],
      file: p.file,
      digest: p.projectId === null ? null : planDigest(p.projectId, p.changes),
    })),
  };
}

export interface UnleashImportResult {
  projects: PlanResult[];
}

export function unleashImport(w: StoreWriter, input: UnleashImportInput, now: number): UnleashImportResult {
  const projects = input.projects.map((p) => {
    // A name taken since the plan is refused by projectCreate (names are unique in an organisation).
    const projectId =
      p.projectId ??
      projectCreate(w, { name: p.name, orgId: input.orgId, kind: 'multi', environments: p.environments, principal: input.principal }, now)
        .id;
    return flagsApply(
      w,
      {
        principal: input.principal,
        projectId,
        received: jsonBody(fileText(p.file)),
        prune: false,
        ifProjectRevision: null,
        ifPlan: p.digest,
      },
      now,
    );
  });
  return { projects };
}

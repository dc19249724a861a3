// Who makes and acts on a release plan (a scheduled change, a rollout), and how it is audited: one home
// for what schedule-commands.ts and rollout-commands.ts both need. Each verb is one command given the
// Principal, resolved here with actorFor (src/actor/audit-actor.ts): a token (authorised again in the
// transaction that writes, acting in its own project only), the console's user or the `--as` user, who
// must be allowed to change flags, or the operator; the plan's own changes act as the `plan` principal.
import { type Actor, actorFor, type Principal, tokenProject, writeAudit } from '../actor/audit-actor.js';
import { FlagwireError } from '../errors.js';
import { requireProject } from '../model/records/lookups.js';
import { requireFlag } from '../flags/flag-lookups.js';
import type { Project } from '../model/projects.js';
import { parseJsonObject, type ReceivedBody } from '../model/request-body.js';
import type { StoreWriter } from '../store/interfaces.js';
import type { ReleasePlanAuditAction } from './audit-actions.js';

/**
 * A new plan's body. The Management API's arrives as received (`received`) and is parsed in the writer
 * by the rules of every request body, so no parsed value crosses threads and its problems are reported
 * as every API body's are; the console's form and the command line send the object they built (`body`).
 */
export type PlanBody = { readonly received: ReceivedBody; readonly body?: never } | { readonly body: unknown; readonly received?: never };

/**
 * The project a new plan for `flagId` is made in, who makes it, and its body, in the order every caller
 * has always been answered in: a token's own project (its flag is looked up there, by the command), or
 * for a person the flag's (an unknown flag: 404); then who acts (a user not allowed to change flags:
 * 403); then a received body's parse (400).
 */
export function newPlanRequest(
  w: StoreWriter,
  principal: Principal,
  flagId: string,
  body: PlanBody,
  now: number,
): { project: Project; actor: Actor; body: unknown } {
  const project = principal.kind === 'token' ? tokenProject(w, principal, now) : requireProject(w, requireFlag(w, flagId).projectId);
  return { project, actor: actorFor(w, principal, project, 'editFlags', now), body: planBody(body) };
}

function planBody(body: PlanBody): unknown {
  if (body.received === undefined) return body.body;
  const parsed = parseJsonObject(body.received, 'create');
  if (!parsed.ok) throw new FlagwireError('INVALID_REQUEST', parsed.problem);
  return parsed.value;
}

/**
 * Who acts on an existing plan (looked up by id; undefined when there is none). A token acts in its own
 * project: another project's plan is as missing as an unknown id (`missing`, the one 404 of every caller).
 */
export function existingPlanRequest<T extends { projectId: string }>(
  w: StoreWriter,
  principal: Principal,
  plan: T | undefined,
  missing: () => FlagwireError,
  now: number,
): { plan: T; actor: Actor } {
  const project = principal.kind === 'token' ? tokenProject(w, principal, now) : undefined;
  if (plan === undefined || (project !== undefined && plan.projectId !== project.id)) throw missing();
  return { plan, actor: actorFor(w, principal, project ?? requireProject(w, plan.projectId), 'editFlags', now) };
}

export function auditPlan(
  w: StoreWriter,
  actor: Actor,
  plan: { projectId: string; flagId: string; env: string | null },
  action: ReleasePlanAuditAction,
  changes: Record<string, { before: unknown; after: unknown }>,
  now: number,
): void {
  writeAudit(w, actor, { projectId: plan.projectId, action, flagId: plan.flagId, env: plan.env, changes }, now);
}

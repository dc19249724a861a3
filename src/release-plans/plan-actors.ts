// Who makes and acts on a release plan (a scheduled change, a rollout), and how it is audited: one home
// for what schedule-commands.ts and rollout-commands.ts both need. The API acts as its token (authorised
// again in the transaction that writes), the console as `console` or the `--as` user, who must be
// allowed to change flags; the plan's own changes are audited as `plan:<id>`.
import { FlagwireError } from '../errors.js';
import { type Actor, consoleActor, tokenActor } from '../audit/audit-actor.js';
import { requireFlag, requireProject } from '../model/lookups.js';
import { parseJsonObject, type ReceivedBody } from '../model/request-body.js';
import { authorizeTokenWrite } from '../model/token-access.js';
import type { StoreWriter } from '../store/interfaces.js';

/** The token that sent a plan's request, authorised again here: its project, and it as the actor. */
export function apiActor(w: StoreWriter, tokenId: string, now: number): { projectId: string; actor: Actor } {
  const { token, project } = authorizeTokenWrite(w, tokenId, now);
  return { projectId: project.id, actor: tokenActor(token) };
}

/** A plan's request as the API sent it: apiActor, and the body parsed by the rules of every request body. */
export function apiPlanRequest(w: StoreWriter, tokenId: string, received: ReceivedBody, now: number) {
  const who = apiActor(w, tokenId, now);
  const parsed = parseJsonObject(received, 'create');
  if (!parsed.ok) throw new FlagwireError('INVALID_REQUEST', parsed.problem);
  return { ...who, body: parsed.value };
}

/** A plan made from the console for a flag: the flag's project, and who makes it (unknown flag: 404 first). */
export function consolePlanRequest(w: StoreWriter, flagId: string, asUserId: string | undefined) {
  const flag = requireFlag(w, flagId);
  return { projectId: flag.projectId, actor: consoleActor(w, requireProject(w, flag.projectId), asUserId) };
}

/** Who acts on an existing plan of `projectId` from the console. */
export function consoleActorOf(w: StoreWriter, projectId: string, asUserId: string | undefined): Actor {
  return consoleActor(w, requireProject(w, projectId), asUserId);
}

/** The actor a plan's own changes are made and audited as. */
export function planActor(plan: { id: string }, what: string): Actor {
  return { id: `plan:${plan.id}`, name: `${what} ${plan.id}`, environments: [] };
}

/** Every audit action a release plan writes (its own flag changes are the flag's `flag.patch`). */
export const kReleasePlanAuditActions = [
  'schedule.create',
  'schedule.cancel',
  'schedule.fail',
  'rollout.start',
  'rollout.pause',
  'rollout.resume',
  'rollout.skip',
  'rollout.rollback',
  'rollout.guard-breach',
] as const;
export type ReleasePlanAuditAction = (typeof kReleasePlanAuditActions)[number];

export function auditPlan(
  w: StoreWriter,
  actor: Actor,
  plan: { projectId: string; flagId: string; env: string | null },
  action: ReleasePlanAuditAction,
  changes: Record<string, { before: unknown; after: unknown }>,
  now: number,
): void {
  w.appendAudit({
    at: now,
    projectId: plan.projectId,
    actor: actor.id,
    actorName: actor.name,
    action,
    flagId: plan.flagId,
    env: plan.env,
    changes,
  });
}

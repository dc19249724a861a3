// Progressive rollouts (issue 27, item 2): a flag's traffic percentage raised in steps, each held for a
// duration, then the next; pause, resume, skip a step, roll back to the percentage before the first. A
// flag (an environment of a group flag) has at most one rollout running or paused. Every step is a PATCH
// of the flag by the actor `plan:<id>`, so it is checked, audited and served like any write.
//
// A change made by hand to what a rollout drives (its flag's percentage) pauses it, and the plan says
// why: before each step the rollout compares the flag with what its last step set, and when someone else
// changed it, it stops there rather than overwrite their change. Steps are run by the node's scheduler
// (scheduler.ts) through rolloutAdvance, which applies a due step exactly once as scheduleRun does.
import { FlagwireError } from '../errors.js';
import type { Actor } from '../audit/audit-actor.js';
import { requireEnvironmentAllowed } from '../model/environments.js';
import { flagPatch } from '../flags/flag-commands.js';
import { effectiveState } from '../model/flag-state.js';
import { randomId } from '../model/ids.js';
import { requirePatchTarget } from '../model/lookups.js';
import type { ReceivedBody } from '../model/request-body.js';
import type { RolloutPlan } from '../model/rollouts.js';
import { compileValidator } from '../model/validation.js';
import type { StoreWriter } from '../store/interfaces.js';
import { apiActor, apiPlanRequest, auditPlan, consoleActorOf, consolePlanRequest, planActor } from './plan-actors.js';
import { kRolloutActionFrom, RolloutCreate, type RolloutAction } from './schemas.js';

const kCreateValidator = compileValidator(RolloutCreate, { quoteKeys: false });
/** Steps a rollout may have, and how long one may be held: a rollout is bounded like everything a client makes. */
export const kMaxRolloutSteps = 20;
export const kMaxHoldMs = 366 * 24 * 3600 * 1000;

/** A rollout started by `actor`: its first step is applied now. */
export function rolloutStart(
  w: StoreWriter,
  input: { projectId: string; flagId: string; env: string | null; actor: Actor; body: unknown },
  now: number,
): RolloutPlan {
  const { flag, project, env, problem } = requirePatchTarget(w, input.projectId, input.flagId, input.env, input.actor.environments);
  const problems = problem === null ? [] : [problem];
  const body = kCreateValidator.check(input.body) ? input.body : null;
  if (body === null) problems.push(...kCreateValidator.problems(input.body));
  else problems.push(...stepProblems(body.steps));
  const running = w
    .listRollouts(project.id)
    .find((p) => p.flagId === flag.id && p.env === env && (p.status === 'running' || p.status === 'paused'));
  if (running !== undefined)
    problems.push(
      `this flag${env === null ? '' : ` (environment ${env})`} already has a ${running.status} rollout, ${running.id}: roll it back or let it complete first`,
    );
  if (body === null || problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  const plan: RolloutPlan = {
    id: `rol_${randomId(12)}`,
    projectId: project.id,
    flagId: flag.id,
    env,
    steps: body.steps,
    initialPercentage: effectiveState(flag, env).trafficPercentage,
    current: 0,
    nextAt: null,
    status: 'running',
    pausedReason: null,
    createdAt: now,
    updatedAt: now,
    createdBy: input.actor.id,
    createdByName: input.actor.name,
  };
  auditPlan(w, input.actor, plan, 'rollout.start', { rollout: { before: null, after: { id: plan.id, steps: plan.steps } } }, now);
  return applyStep(w, plan, 0, now);
}

function stepProblems(steps: RolloutPlan['steps']): string[] {
  const problems: string[] = [];
  if (steps.length > kMaxRolloutSteps) problems.push(`steps: at most ${kMaxRolloutSteps}`);
  steps.forEach((step, i) => {
    const last = i === steps.length - 1;
    if (!last && step.holdMs === undefined) problems.push(`steps[${i}].holdMs is required (how long the step is held before the next)`);
    if (last && step.holdMs !== undefined) problems.push(`steps[${i}].holdMs: the last step is held for good; drop it`);
    if (step.holdMs !== undefined && step.holdMs > kMaxHoldMs) problems.push(`steps[${i}].holdMs must be at most a year`);
    if (i > 0 && step.trafficPercentage < steps[i - 1]!.trafficPercentage)
      problems.push(
        `steps[${i}].trafficPercentage goes down (${steps[i - 1]!.trafficPercentage} to ${step.trafficPercentage}): a rollout only raises it; roll back instead`,
      );
  });
  return problems;
}

export function consoleRolloutStart(
  w: StoreWriter,
  input: { flagId: string; env: string | null; body: unknown; asUserId?: string },
  now: number,
) {
  return rolloutStart(w, { ...input, ...consolePlanRequest(w, input.flagId, input.asUserId) }, now);
}

export function apiRolloutStart(
  w: StoreWriter,
  input: { tokenId: string; flagId: string; env: string | null; received: ReceivedBody },
  now: number,
) {
  return rolloutStart(w, { flagId: input.flagId, env: input.env, ...apiPlanRequest(w, input.tokenId, input.received, now) }, now);
}

/**
 * A person's action on a rollout: pause (it holds its step), resume (its step is set again and held
 * anew), skip (the next step now), roll back (the percentage before the first step; the rollout ends).
 */
export function rolloutAct(
  w: StoreWriter,
  input: { rolloutId: string; projectId: string; action: RolloutAction; actor: Actor },
  now: number,
): RolloutPlan {
  const plan = w.getRollout(input.rolloutId);
  if (plan === undefined || plan.projectId !== input.projectId)
    throw new FlagwireError('NOT_FOUND', 'No rollout with this id exists in this project.');
  requireEnvironmentAllowed(input.actor.environments, plan.env);
  if (!kRolloutActionFrom[input.action].includes(plan.status))
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Rollout ${plan.id} is ${plan.status}: it cannot ${input.action === 'rollback' ? 'roll back' : input.action} now.`,
    );
  auditPlan(w, input.actor, plan, `rollout.${input.action}`, { rollout: { before: plan.status, after: input.action } }, now);
  switch (input.action) {
    case 'pause':
      return save(w, { ...plan, status: 'paused', nextAt: null, pausedReason: `paused by ${input.actor.name}` }, now);
    case 'resume':
      return applyStep(w, { ...plan, status: 'running', pausedReason: null }, plan.current, now);
    case 'skip':
      if (plan.current + 1 >= plan.steps.length) throw new FlagwireError('INVALID_REQUEST', `Rollout ${plan.id} is at its last step.`);
      return applyStep(w, { ...plan, status: 'running', pausedReason: null }, plan.current + 1, now);
    case 'rollback':
      patchPercentage(w, plan, plan.initialPercentage, now);
      return save(w, { ...plan, status: 'rolled-back', nextAt: null, pausedReason: null }, now);
  }
}

export function consoleRolloutAct(w: StoreWriter, input: { rolloutId: string; action: RolloutAction; asUserId?: string }, now: number) {
  const plan = w.getRollout(input.rolloutId);
  if (plan === undefined) throw new FlagwireError('NOT_FOUND', `No rollout ${input.rolloutId} exists.`);
  return rolloutAct(
    w,
    { rolloutId: plan.id, projectId: plan.projectId, action: input.action, actor: consoleActorOf(w, plan.projectId, input.asUserId) },
    now,
  );
}

export function apiRolloutAct(w: StoreWriter, input: { tokenId: string; rolloutId: string; action: RolloutAction }, now: number) {
  return rolloutAct(w, { rolloutId: input.rolloutId, action: input.action, ...apiActor(w, input.tokenId, now) }, now);
}

/**
 * The scheduler's step: the next step of a running rollout whose time has come, once (null when there
 * is nothing to do: another node took it, or it was paused). When the flag's percentage is no longer
 * what the last step set, someone changed it by hand: the rollout pauses and says so instead.
 */
export function rolloutAdvance(w: StoreWriter, input: { rolloutId: string }, now: number): RolloutPlan | null {
  const plan = w.getRollout(input.rolloutId);
  if (plan === undefined || plan.status !== 'running' || plan.nextAt === null || plan.nextAt > now) return null;
  const flag = w.getFlag(plan.flagId);
  const expected = plan.steps[plan.current]!.trafficPercentage;
  const actual = flag === undefined ? null : effectiveState(flag, plan.env).trafficPercentage;
  if (actual !== expected) {
    const why =
      actual === null
        ? 'the flag was deleted'
        : `the traffic percentage was changed by hand to ${actual} (step ${plan.current + 1} set ${expected})${lastChangedBy(w, plan)}`;
    const actor = planActor(plan, 'rollout');
    auditPlan(w, actor, plan, 'rollout.pause', { rollout: { before: 'running', after: why } }, now);
    return save(w, { ...plan, status: 'paused', nextAt: null, pausedReason: why }, now);
  }
  return applyStep(w, plan, plan.current + 1, now);
}

/** Who last changed the flag other than the rollout: the audit says it. */
function lastChangedBy(w: StoreWriter, plan: RolloutPlan): string {
  const entry = w
    .listAudit(plan.projectId, { limit: 100, before: null })
    .find((e) => e.flagId === plan.flagId && e.action === 'flag.patch' && e.env === plan.env && e.actor !== `plan:${plan.id}`);
  return entry === undefined ? '' : ` by ${entry.actorName} (${entry.actor})`;
}

function applyStep(w: StoreWriter, plan: RolloutPlan, index: number, now: number): RolloutPlan {
  const step = plan.steps[index]!;
  patchPercentage(w, plan, step.trafficPercentage, now);
  const last = index === plan.steps.length - 1;
  const appliedAt = [...plan.steps.slice(0, index).map((_, i) => plan.appliedAt?.[i] ?? null), now];
  return save(
    w,
    { ...plan, current: index, appliedAt, status: last ? 'completed' : 'running', nextAt: last ? null : now + step.holdMs! },
    now,
  );
}

function patchPercentage(w: StoreWriter, plan: RolloutPlan, trafficPercentage: number, now: number): void {
  flagPatch(
    w,
    { projectId: plan.projectId, flagId: plan.flagId, env: plan.env, actor: planActor(plan, 'rollout'), patch: { trafficPercentage } },
    now,
  );
}

function save(w: StoreWriter, plan: RolloutPlan, now: number): RolloutPlan {
  const next = { ...plan, updatedAt: now };
  w.putRollout(next);
  return next;
}

// Progressive rollouts (issue 27, item 2): a flag's traffic percentage raised in steps, or the weights of
// its typed variants set in steps (rollout-weights.ts), each held for a duration, then the next; pause,
// resume, skip a step, roll back to the percentage (or the targeting) before the first. A flag (an
// environment of a group flag) has at most one rollout running or paused. Every step is a PATCH of the
// flag by the actor `plan:<id>`, so it is checked, audited and served like any write.
//
// A change made by hand to what a rollout drives (its flag's percentage, or its targeting) pauses it, and the plan says
// why: before each step the rollout compares the flag with what its last step set, and when someone else
// changed it, it stops there rather than overwrite their change. Steps are run by the node's scheduler
// (scheduler.ts) through rolloutAdvance, which applies a due step exactly once as scheduleRun does.
import { FlagwireError } from '../errors.js';
import { type Actor, type Principal, planActor } from '../actor/audit-actor.js';
import { requireEnvironmentAllowed } from '../model/environments.js';
import { patchFlagAs } from '../flags/flag-commands.js';
import { effectiveState, type EffectiveState } from '../flags/records/flag-state.js';
import { randomId } from '../model/ids.js';
import { rolloutNotFound } from '../model/records/lookups.js';
import { requirePatchTarget } from '../flags/flag-lookups.js';
import type { GuardReading, RolloutGuard, RolloutPlan, WeightsStep } from './rollouts.js';
import type { ExperimentStatistics } from '../events/statistics.js';
import { getExperiment } from '../experiments/records.js';
import { followAllocation } from '../experiments/allocation.js';
import { experimentGuardProblems, judgeExperimentReading } from './experiment-guards.js';
import { compileValidator } from '../model/validation.js';
import type { StoreWriter } from '../store/interfaces.js';
import type { PageRequest } from './list-pages.js';
import { auditPlan, existingPlanRequest, newPlanRequest, type PlanBody } from './plan-actors.js';
import { MetricAllowList } from './promql-metrics.js';
import { describeGuard, guardProblems, judgeReading, storedGuard } from './guards.js';
import type { RawReading } from './guard-reader.js';
import { isWeightsStep, unknownVariants, weightsHandChange, weightStepProblems, weightTargetProblems } from './rollout-weights.js';
import { weightsTargeting } from '../flags/fractional-split.js';
import { kRolloutActionFrom, RolloutCreate, type RolloutAction } from './schemas.js';
import { getRollout, listFlagRollouts, putRollout } from './records.js';
import { getFlag } from '../flags/records/flag-store.js';

const kCreateValidator = compileValidator(RolloutCreate, { quoteKeys: false });
/** Steps a rollout may have, and how long one may be held: a rollout is bounded like everything a client makes. */
export const kMaxRolloutSteps = 20;
export const kMaxHoldMs = 366 * 24 * 3600 * 1000;

/**
 * The flag's (environment's) running or paused rollout, if any. Only the newest rollout of an
 * environment can be one (another cannot start beside it), so the flag's are read newest first until
 * the environment's newest is found.
 */
function activeRollout(w: StoreWriter, flagId: string, env: string | null): RolloutPlan | undefined {
  let page: PageRequest = { limit: 50, maxBytes: Number.POSITIVE_INFINITY, after: null, newestFirst: true };
  for (;;) {
    const { items, next } = listFlagRollouts(w, flagId, page);
    const newest = items.find((p) => p.env === env);
    if (newest !== undefined) return newest.status === 'running' || newest.status === 'paused' ? newest : undefined;
    if (next === null) return undefined;
    page = { ...page, after: next };
  }
}

/**
 * A rollout: POST /api/v1/flags/{id}/rollouts (a token, authorised again here and audited as itself), the
 * console's form (its user) and `flagwire flag rollout` (the operator, or the `--as` user), who must be
 * allowed to change flags. Its first step is applied now. `guardMetrics`: the metrics a PromQL guard may
 * read (FLAGWIRE_PROMETHEUS_METRICS) for a token and the web console's users; null for the command line,
 * whose user is the operator (the server still checks every reading).
 */
export function rolloutStart(
  w: StoreWriter,
  input: { principal: Principal; flagId: string; env: string | null; guardMetrics: readonly string[] | null } & PlanBody,
  now: number,
): RolloutPlan {
  const request = newPlanRequest(w, input.principal, input.flagId, input, now);
  const { flagId, env, guardMetrics } = input;
  return startRollout(w, { flagId, env, guardMetrics, projectId: request.project.id, actor: request.actor, body: request.body }, now);
}

function startRollout(
  w: StoreWriter,
  input: { projectId: string; flagId: string; env: string | null; actor: Actor; body: unknown; guardMetrics: readonly string[] | null },
  now: number,
): RolloutPlan {
  const { flag, project, env, problem } = requirePatchTarget(w, input.projectId, input.flagId, input.env, input.actor.environments);
  const problems = problem === null ? [] : [problem];
  const body = kCreateValidator.check(input.body) ? input.body : null;
  if (body === null) problems.push(...kCreateValidator.problems(input.body));
  else {
    problems.push(...stepProblems(body.steps));
    const metrics = input.guardMetrics === null ? null : new MetricAllowList(input.guardMetrics);
    if (body.guard !== undefined) problems.push(...guardProblems(body.guard, metrics));
    if (body.guard?.experiment !== undefined && problem === null)
      problems.push(...experimentGuardProblems(body.guard, getExperiment(w, project.id, env, body.guard.experiment), flag.id, env));
  }
  const { typed, unleash } = effectiveState(flag, env);
  // A state in Unleash's model reads neither the percentage nor typed variants, which the steps set.
  if (unleash !== undefined && problem === null)
    problems.push(
      `this flag${env === null ? '' : ` (environment ${env})`} is in Unleash's model, whose strategies decide in place of the percentage and variants a rollout sets: roll it out by its flexibleRollout, or remove the model first`,
    );
  const byWeights = (body?.steps ?? []).some(isWeightsStep);
  if (body !== null && byWeights && problem === null) problems.push(...weightTargetProblems(typed, body.steps, env));
  const running = activeRollout(w, flag.id, env);
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
    initialTargeting: byWeights ? (typed?.targeting ?? {}) : null,
    current: 0,
    nextAt: null,
    status: 'running',
    pausedReason: null,
    // The first reading at the scheduler's next poll: a guard that cannot be read shows it at once.
    guard: body.guard === undefined ? null : storedGuard(body.guard),
    guardNextAt: body.guard === undefined ? null : now,
    guardReading: null,
    createdAt: now,
    updatedAt: now,
    createdBy: input.actor.id,
    createdByName: input.actor.name,
  };
  const started = { id: plan.id, steps: plan.steps, ...(plan.guard === null ? {} : { guard: describeGuard(plan.guard!) }) };
  auditPlan(w, input.actor, plan, 'rollout.start', { rollout: { before: null, after: started } }, now);
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
    const before = steps[i - 1];
    if (before !== undefined && !isWeightsStep(before) && !isWeightsStep(step) && step.trafficPercentage < before.trafficPercentage)
      problems.push(
        `steps[${i}].trafficPercentage goes down (${before.trafficPercentage} to ${step.trafficPercentage}): a rollout only raises it; roll back instead`,
      );
  });
  problems.push(...weightStepProblems(steps));
  return problems;
}

/**
 * A person's action on a rollout: pause (it holds its step), resume (its step is set again and held
 * anew), skip (the next step now), roll back (the percentage, or the targeting, before the first step;
 * the rollout ends).
 */
export function rolloutAct(
  w: StoreWriter,
  input: { rolloutId: string; action: RolloutAction; principal: Principal },
  now: number,
): RolloutPlan {
  const { plan, actor } = existingPlanRequest(w, input.principal, getRollout(w, input.rolloutId), rolloutNotFound, now);
  requireEnvironmentAllowed(actor.environments, plan.env);
  if (!kRolloutActionFrom[input.action].includes(plan.status))
    throw new FlagwireError(
      'INVALID_REQUEST',
      `Rollout ${plan.id} is ${plan.status}: it cannot ${input.action === 'rollback' ? 'roll back' : input.action} now.`,
    );
  auditPlan(w, actor, plan, `rollout.${input.action}`, { rollout: { before: plan.status, after: input.action } }, now);
  switch (input.action) {
    case 'pause':
      return save(w, { ...plan, status: 'paused', nextAt: null, guardNextAt: null, pausedReason: `paused by ${actor.name}` }, now);
    case 'resume':
      return applyStep(w, { ...plan, status: 'running', pausedReason: null, ...guardRestart(plan, now) }, plan.current, now);
    case 'skip':
      if (plan.current + 1 >= plan.steps.length) throw new FlagwireError('INVALID_REQUEST', `Rollout ${plan.id} is at its last step.`);
      return applyStep(w, { ...plan, status: 'running', pausedReason: null, ...guardRestart(plan, now) }, plan.current + 1, now);
    case 'rollback':
      return rollBack(w, plan, null, now);
  }
}

/** A resumed rollout's guard is read again at once, its failed readings forgotten. */
function guardRestart(plan: RolloutPlan, now: number): Pick<RolloutPlan, 'guardNextAt' | 'guardReading'> {
  const reading = plan.guardReading ?? null;
  return {
    guardNextAt: plan.guard ? now : null,
    guardReading: reading === null ? null : { ...reading, failures: 0 },
  };
}

/** The percentage before the first step, set again; the rollout ends (`why`: its guard's breach, or null for a person). */
function rollBack(w: StoreWriter, plan: RolloutPlan, why: string | null, now: number): RolloutPlan {
  patchFlag(w, plan, rollbackPatch(plan), now);
  return save(w, { ...plan, status: 'rolled-back', nextAt: null, guardNextAt: null, pausedReason: why }, now);
}

/**
 * A guard's reading, taken by a node's scheduler for the reading due at `dueAt`, judged and recorded
 * once (null when there was nothing to do: another node recorded it, or the rollout no longer runs). A
 * breach pauses the rollout, or rolls it back when its guard says so; the audit entry holds the reading.
 */
export function rolloutGuardRecord(
  w: StoreWriter,
  input: { rolloutId: string; dueAt: number; reading: RawReading; refused?: string },
  now: number,
): RolloutPlan | null {
  const plan = getRollout(w, input.rolloutId);
  const guard = plan?.guard ?? null;
  if (plan === undefined || guard === null || plan.status !== 'running' || plan.guardNextAt !== input.dueAt) return null;
  // The approvals gate refused its rollback (a plan never approved for a guarded environment): paused, with why.
  if (input.refused !== undefined) {
    auditPlan(w, planActor(plan.id, 'rollout'), plan, 'rollout.pause', { rollout: { before: 'running', after: input.refused } }, now);
    return save(w, { ...plan, status: 'paused', nextAt: null, guardNextAt: null, pausedReason: input.refused }, now);
  }
  const reading =
    'statistics' in input.reading
      ? judgeExperimentGuard(w, plan, guard, input.reading.statistics, now)
      : judgeReading(guard, input.reading, plan.guardReading?.failures ?? 0, now);
  if (!reading.breached) return save(w, { ...plan, guardReading: reading, guardNextAt: now + guard.intervalMs }, now);
  const why = `guard breached: ${reading.note}`;
  const after = guard.onBreach === 'rollback' ? 'rolled-back' : 'paused';
  const changes = { guard: { before: describeGuard(guard), after: reading }, rollout: { before: 'running', after } };
  auditPlan(w, planActor(plan.id, 'rollout'), plan, 'rollout.guard-breach', changes, now);
  const breached = { ...plan, guardReading: reading };
  if (guard.onBreach === 'rollback') return rollBack(w, breached, why, now);
  return save(w, { ...breached, status: 'paused', nextAt: null, guardNextAt: null, pausedReason: why }, now);
}

/**
 * An experiment guard's reading, judged against the experiment as it is now: one deleted since the
 * rollout started (or changed so the guard no longer fits it) will never read again, a breach at once.
 */
function judgeExperimentGuard(
  w: StoreWriter,
  plan: RolloutPlan,
  guard: RolloutGuard,
  statistics: ExperimentStatistics,
  now: number,
): GuardReading {
  const experiment = getExperiment(w, plan.projectId, plan.env, guard.experiment!);
  const problems = experimentGuardProblems(guard, experiment, plan.flagId, plan.env);
  if (experiment === undefined || problems.length > 0)
    return { at: now, value: null, breached: true, note: `the guard cannot be read: ${problems.join('; ')}`, failures: 0 };
  return judgeExperimentReading(guard, experiment, statistics, now);
}

/**
 * The scheduler's step: the next step of a running rollout whose time has come, once (null when there
 * is nothing to do: another node took it, or it was paused). When the flag's percentage (or targeting)
 * is no longer what the last step set, someone changed it by hand: the rollout pauses and says so instead.
 */
export function rolloutAdvance(w: StoreWriter, input: { rolloutId: string; refused?: string }, now: number): RolloutPlan | null {
  const plan = getRollout(w, input.rolloutId);
  if (plan === undefined || plan.status !== 'running' || plan.nextAt === null || plan.nextAt > now) return null;
  const flag = getFlag(w, plan.flagId);
  const changed = flag === undefined ? null : handChange(plan, effectiveState(flag, plan.env));
  // The approvals gate refused its step (a plan never approved for a guarded environment), or a write
  // check did (a running experiment's allocation): paused, with why.
  if (input.refused !== undefined || flag === undefined || changed !== null) {
    const why = input.refused ?? (changed === null ? 'the flag was deleted' : `${changed}${lastChangedBy(w, plan)}`);
    const actor = planActor(plan.id, 'rollout');
    auditPlan(w, actor, plan, 'rollout.pause', { rollout: { before: 'running', after: why } }, now);
    return save(w, { ...plan, status: 'paused', nextAt: null, guardNextAt: null, pausedReason: why }, now);
  }
  return applyStep(w, plan, plan.current + 1, now);
}

/** What was changed by hand since the last step, or null when the flag is as that step left it. */
function handChange(plan: RolloutPlan, state: EffectiveState): string | null {
  const step = plan.steps[plan.current]!;
  if (isWeightsStep(step)) return weightsHandChange(plan.initialTargeting ?? {}, plan.steps, plan.current, state.typed);
  if (state.trafficPercentage === step.trafficPercentage) return null;
  return `the traffic percentage was changed by hand to ${state.trafficPercentage} (step ${plan.current + 1} set ${step.trafficPercentage})`;
}

/** Who last changed what the rollout drives, other than the rollout: the audit says it. */
function lastChangedBy(w: StoreWriter, plan: RolloutPlan): string {
  const fields = isWeightsStep(plan.steps[0]!) ? ['targeting', 'variants'] : ['trafficPercentage'];
  const entry = w
    .listAudit(plan.projectId, { limit: 100, before: null })
    .find(
      (e) =>
        e.flagId === plan.flagId &&
        e.action === 'flag.patch' &&
        e.env === plan.env &&
        e.actor !== `plan:${plan.id}` &&
        fields.some((f) => Object.hasOwn(e.changes, f)),
    );
  return entry === undefined ? '' : ` by ${entry.actorName} (${entry.actor})`;
}

function applyStep(w: StoreWriter, plan: RolloutPlan, index: number, now: number): RolloutPlan {
  const step = plan.steps[index]!;
  if (isWeightsStep(step)) patchWeights(w, plan, index, now);
  else patchFlag(w, plan, stepPatch(plan, index), now);
  const last = index === plan.steps.length - 1;
  const appliedAt = [...plan.steps.slice(0, index).map((_, i) => plan.appliedAt?.[i] ?? null), now];
  const next = last
    ? { status: 'completed' as const, nextAt: null, guardNextAt: null }
    : { status: 'running' as const, nextAt: now + step.holdMs! };
  return save(w, { ...plan, current: index, appliedAt, ...next }, now);
}

/** A step by variant weights: refused when the flag no longer has a variant it names (a resume or skip after a hand change). */
function patchWeights(w: StoreWriter, plan: RolloutPlan, index: number, now: number): void {
  const step = plan.steps[index] as WeightsStep;
  const flag = getFlag(w, plan.flagId);
  const typed = flag === undefined ? undefined : effectiveState(flag, plan.env).typed;
  const problems = typed === undefined ? [] : unknownVariants(typed, step, index, plan.env);
  if (problems.length > 0) throw new FlagwireError('INVALID_REQUEST', problems.join('; '));
  patchFlag(w, plan, stepPatch(plan, index), now);
}

/** The PATCH of the flag a step makes: its percentage, or the targeting of its variant weights. */
export function stepPatch(plan: RolloutPlan, index: number): Record<string, unknown> {
  const step = plan.steps[index]!;
  return isWeightsStep(step)
    ? { targeting: weightsTargeting(plan.initialTargeting ?? {}, step.variantWeights) }
    : { trafficPercentage: step.trafficPercentage };
}

/** A rollback's PATCH: the percentage before the first step, or for a rollout by variant weights the targeting. */
export function rollbackPatch(plan: RolloutPlan): Record<string, unknown> {
  return isWeightsStep(plan.steps[0]!) ? { targeting: plan.initialTargeting ?? {} } : { trafficPercentage: plan.initialPercentage };
}

/** A step (or the rollback) as a PATCH of the flag by `plan:<id>`: checked, audited and served like any write. */
function patchFlag(w: StoreWriter, plan: RolloutPlan, patch: Record<string, unknown>, now: number): void {
  patchFlagAs(w, { projectId: plan.projectId, flagId: plan.flagId, env: plan.env, actor: planActor(plan.id, 'rollout'), patch }, now);
  // A rollout whose guard reads an experiment drives its split (docs/decisions.md: Experiments).
  if (plan.guard?.experiment !== undefined) followAllocation(w, plan.projectId, plan.env, plan.guard.experiment, plan.flagId, now);
}

function save(w: StoreWriter, plan: RolloutPlan, now: number): RolloutPlan {
  const next = { ...plan, updatedAt: now };
  putRollout(w, next);
  return next;
}

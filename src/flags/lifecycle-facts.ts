// The facts of a flag's lifecycle stage (lifecycle.ts) as the server knows them, and the view the
// Management API, the command line and the web console show of it (docs/api.md: Flag lifecycle).
import { effectiveState, type EffectiveState } from './records/flag-state.js';
import { countedHours, type EnvironmentUsage, kSingleState, usageKnown, type Flag, type FlagUsage } from '../model/flags.js';
import type { Project } from '../model/projects.js';
import { lifecycleStage, lifetimeOf, type LifecycleStage } from './lifecycle.js';
import type { StoreReader } from '../store/interfaces.js';
import { getUsage, listAllFlags, listEnvironmentUsage } from './records/flag-store.js';
import type { FlagLifecycle } from './lifecycle-shapes.js';
import { flagdServingIn } from './flagd-serving.js';
import { getOrg } from '../model/records/org-records.js';
import { listBranchScans } from '../code-refs/records.js';

/**
 * Whether the state answers one value to every context: off, or on for everyone (every percentage, no
 * audience) with no rule, experiment or Unleash model choosing among answers. Cohorts only add keys to an
 * answer everyone already gets.
 */
function oneAnswer(state: EffectiveState): boolean {
  if (!state.enabled) return true;
  if (state.trafficPercentage !== 100 || state.audienceId !== null) return false;
  if (state.experiment !== undefined || state.unleash !== undefined) return false;
  return state.typed === undefined || Object.keys(state.typed.targeting).length === 0;
}

/** Every environment of the project (a single flag: its one state) answers one value to every context. */
export function servesOneAnswer(flag: Flag, project: Project): boolean {
  if (flag.kind === 'flag') return oneAnswer(effectiveState(flag, null));
  return project.environments.every((env) => oneAnswer(effectiveState(flag, env)));
}

/** What a flag's stage reads beyond the flag itself, for the flags of one project. */
export interface ProjectFacts {
  /** Whether every path that evaluates the flag reports it (usageKnown). */
  usageKnown(flag: Flag): boolean;
  /** References to the flag's key in the project's latest code scans; undefined: never scanned. */
  codeReferences(flag: Flag): number | undefined;
}

/** The facts of `project`'s flags, its flag sets' audiences and fragments and its code scans read once. */
export function projectFacts(r: StoreReader, project: Project, now: number): ProjectFacts {
  const serving = flagdServingIn(r, project, project.orgId === null ? null : getOrg(r, project.orgId), now);
  const scans = listBranchScans(r, project.id);
  const references = new Map<string, number>();
  for (const scan of scans)
    for (const ref of scan.references) if (ref.key !== null) references.set(ref.key, (references.get(ref.key) ?? 0) + 1);
  return {
    // A stock flagd provider reads flag sets and reports nothing, and no node records whether one was
    // read: a flag a set serves may be evaluated where no count sees it.
    usageKnown: (flag) => usageKnown({ servedByFlagSet: serving(flag).some((set) => set.served), flagSetRead: true }),
    codeReferences: (flag) => (scans.length === 0 ? undefined : (references.get(flag.name) ?? 0)),
  };
}

/** A flag's usage as its lifecycle shows it: the totals, and each environment's (with their hours when `withHours`). */
export interface UsageView {
  total: FlagUsage | undefined;
  environments: readonly EnvironmentUsage[];
  withHours: boolean;
}

/** The flag's usage as the store has it; `withHours`: a single flag's read, not a list's. */
function usageView(r: StoreReader, flagId: string, withHours: boolean): UsageView {
  return { total: getUsage(r, flagId), environments: listEnvironmentUsage(r, flagId), withHours };
}

/** The flag's lifecycle as the API shows it: its stage from the facts the server has. */
export function lifecycleView(flag: Flag, project: Project, view: UsageView, now: number, facts: ProjectFacts): FlagLifecycle {
  const usage = view.total;
  const lifetime = lifetimeOf(flag);
  const lastEvaluatedAt = usage?.lastEvaluatedAt ?? null;
  const known = facts.usageKnown(flag);
  const codeReferences = facts.codeReferences(flag);
  const stage = lifecycleStage({
    now,
    createdAt: flag.createdAt,
    archivedAt: flag.archivedAt ?? null,
    servesOneAnswer: servesOneAnswer(flag, project),
    unchangedSince: flag.updatedAt,
    usageKnown: known,
    lastEvaluatedAt,
    lifetime,
    codeReferences,
  });
  return {
    id: flag.id,
    name: flag.name,
    type: flag.type ?? 'release',
    owner: flag.owner ?? null,
    lifetimeDays: lifetime,
    stage,
    archivedAt: flag.archivedAt ?? null,
    createdAt: flag.createdAt,
    lastEvaluatedAt,
    usageKnown: known,
    codeReferences: codeReferences ?? null,
    evaluations: usage?.evaluations ?? 0,
    ...(view.withHours ? { hours: countedHours(usage?.hours, now) } : {}),
    environments: view.environments.map((env) => ({
      environment: env.environment === kSingleState ? null : env.environment,
      evaluations: env.evaluations,
      lastEvaluatedAt: env.lastEvaluatedAt,
      ...(view.withHours ? { hours: countedHours(env.hours, now) } : {}),
    })),
  };
}

/** One flag's lifecycle, with its project's facts read for it. */
export function flagLifecycle(r: StoreReader, flag: Flag, project: Project, now: number): FlagLifecycle {
  return lifecycleView(flag, project, usageView(r, flag.id, true), now, projectFacts(r, project, now));
}

/** Which flags a project's lifecycle list keeps: null keeps every one. */
export interface LifecycleFilter {
  stage: LifecycleStage | null;
  owner: string | null;
}

/** Every flag of the project, archived ones too, oldest first, with its lifecycle: the API's, the command line's and the console's list. */
export function projectLifecycle(r: StoreReader, project: Project, now: number, only: LifecycleFilter): FlagLifecycle[] {
  const facts = projectFacts(r, project, now);
  return listAllFlags(r, project.id)
    .map((flag) => lifecycleView(flag, project, usageView(r, flag.id, false), now, facts))
    .filter((view) => (only.stage === null || view.stage === only.stage) && (only.owner === null || view.owner === only.owner));
}

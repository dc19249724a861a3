// The facts of a flag's lifecycle stage (lifecycle.ts) as the server knows them, and the view the
// Management API, the command line and the web console show of it (docs/api.md: Flag lifecycle).
import { effectiveState, type EffectiveState } from './records/flag-state.js';
import { countedHours, type EnvironmentUsage, kSingleState, usageKnown, type Flag, type FlagUsage } from '../model/flags.js';
import type { Project } from '../model/projects.js';
import { kLifecycleWindowDays, lifecycleStage, lifetimeOf, type LifecycleStage } from './lifecycle.js';
import type { StoreReader } from '../store/interfaces.js';
import { getUsage, listAllFlags, listEnvironmentUsage } from './records/flag-store.js';
import type { FlagLifecycle } from './lifecycle-shapes.js';
import { flagdServingIn } from './flagd-serving.js';
import type { FlagdServing } from './flagd-serving-shape.js';
import { getOrg } from '../model/records/org-records.js';
import { listBranchScans, scansTag } from '../code-refs/records.js';
import { hasAudiences } from '../model/plans.js';
import { flagSetIdOf, projectFlagSetReads, readSince } from './records/flag-set-read-records.js';

const kDayMs = 24 * 3600 * 1000;

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

/** What a project's facts are derived from, read once per project: its flag sets' answers and its code scans. */
interface ProjectDerived {
  /** The store, project, plan and scans they were read at (derivedTag): while it holds, they hold. */
  readonly tag: string;
  readonly serving: (flag: Flag) => FlagdServing[];
  readonly scanned: boolean;
  readonly references: ReadonlyMap<string, number>;
}

/**
 * Derived facts kept per reader (a front end's lives as long as it does) and project, one per project
 * read recently, the oldest going first: a flag's lifecycle read again reads nothing project-wide.
 * Bounded as the flag sets a node keeps are.
 */
const kMaxKept = 1000;
const keptBy = new WeakMap<StoreReader, Map<string, ProjectDerived>>();

/**
 * What moves when the derived facts can change: the store's configuration (flags, audiences, fragments,
 * environments, the plan: every write of one moves configSeq), whether the plan allows audiences now (a
 * trial ends with no write), and the project's scans (a push moves no configSeq: scansTag).
 */
function derivedTag(r: StoreReader, project: Project, now: number): string {
  const org = project.orgId === null ? null : getOrg(r, project.orgId);
  return `${r.configSeq()}.${hasAudiences(org, now) ? '+' : '-'}.${scansTag(r, project.id)}`;
}

function derive(r: StoreReader, project: Project, now: number, tag: string): ProjectDerived {
  const serving = flagdServingIn(r, project, project.orgId === null ? null : getOrg(r, project.orgId), now);
  const scans = listBranchScans(r, project.id);
  const references = new Map<string, number>();
  for (const scan of scans)
    for (const ref of scan.references) if (ref.key !== null) references.set(ref.key, (references.get(ref.key) ?? 0) + 1);
  return { tag, serving, scanned: scans.length > 0, references };
}

/** The derived facts of `project` as `r` has them: kept ones while their tag holds, else read anew. */
function derivedFacts(r: StoreReader, project: Project, now: number): ProjectDerived {
  let kept = keptBy.get(r);
  if (kept === undefined) {
    kept = new Map();
    keptBy.set(r, kept);
  }
  const key = project.id;
  const tag = derivedTag(r, project, now);
  const known = kept.get(key);
  if (known !== undefined && known.tag === tag) return known;
  const made = derive(r, project, now, tag);
  kept.delete(key);
  kept.set(key, made);
  if (kept.size > kMaxKept) kept.delete(kept.keys().next().value!);
  return made;
}

/**
 * The facts of `project`'s flags: its flag sets' answers and its code scans as last derived while
 * nothing they read has moved, and its flag sets' reads read now (one record per set).
 */
export function projectFacts(r: StoreReader, project: Project, now: number): ProjectFacts {
  const { serving, scanned, references } = derivedFacts(r, project, now);
  const reads = projectFlagSetReads(r, project.id);
  const windowStart = now - kLifecycleWindowDays * kDayMs;
  return {
    // A stock flagd provider reads a flag set and reports nothing: a flag a set serves is evaluated
    // unseen while a set serving it was read in the window (a sync stream open counts all along).
    usageKnown: (flag) => {
      const sets = serving(flag)
        .filter((set) => set.served)
        .map((set) => flagSetIdOf(project.id, set.environment));
      return usageKnown({ servedByFlagSet: sets.length > 0, flagSetRead: readSince(reads, sets, windowStart) });
    },
    codeReferences: (flag) => (scanned ? (references.get(flag.name) ?? 0) : undefined),
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

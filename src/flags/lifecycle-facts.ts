// The facts of a flag's lifecycle stage (lifecycle.ts) as the server knows them, and the view the
// Management API, the command line and the web console show of it (docs/api.md: Flag lifecycle).
import { effectiveState, type EffectiveState } from '../flag-records/flag-state.js';
import type { Flag, FlagUsage } from '../model/flags.js';
import type { Project } from '../model/projects.js';
import { lifecycleStage, lifetimeOf, type LifecycleStage } from './lifecycle.js';
import type { StoreReader } from '../store/interfaces.js';
import { getUsage, listAllFlags } from '../flag-records/flag-store.js';
import type { FlagLifecycle } from './lifecycle-shapes.js';

/**
 * Whether every path that evaluates a flag reports it to the server. Flagwire's own provider and stock
 * flagd providers evaluate in-process and report nothing yet (issue 99, item 3), so a flag missing
 * evaluations may still be evaluated: usage is not known, and no flag is called unused on it.
 */
const kUsageKnown = false;

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

/** The flag's lifecycle as the API shows it: its stage from the facts the server has. */
export function lifecycleView(flag: Flag, project: Project, usage: FlagUsage | undefined, now: number): FlagLifecycle {
  const lifetime = lifetimeOf(flag);
  const lastEvaluatedAt = usage?.lastEvaluatedAt ?? null;
  const stage = lifecycleStage({
    now,
    createdAt: flag.createdAt,
    archivedAt: flag.archivedAt ?? null,
    servesOneAnswer: servesOneAnswer(flag, project),
    unchangedSince: flag.updatedAt,
    usageKnown: kUsageKnown,
    lastEvaluatedAt,
    lifetime,
    codeReferences: undefined,
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
    usageKnown: kUsageKnown,
    codeReferences: null,
  };
}

/** Which flags a project's lifecycle list keeps: null keeps every one. */
export interface LifecycleFilter {
  stage: LifecycleStage | null;
  owner: string | null;
}

/** Every flag of the project, archived ones too, oldest first, with its lifecycle: the API's, the command line's and the console's list. */
export function projectLifecycle(
  r: Pick<StoreReader, 'listKeyedBy' | 'getKeyed'>,
  project: Project,
  now: number,
  only: LifecycleFilter,
): FlagLifecycle[] {
  return listAllFlags(r, project.id)
    .map((flag) => lifecycleView(flag, project, getUsage(r, flag.id), now))
    .filter((view) => (only.stage === null || view.stage === only.stage) && (only.owner === null || view.owner === only.owner));
}

// Whether the flagd flag sets serve a flag (issue 44, item 3): per environment of its project, served or
// left out and why, as buildFlagSet decides it (flagdInexpressible is the one judgement). The Management
// API (GET /api/v1/flags/{flag_id}/flagd) and the console's flag page say it for the flag.
import type { Flag } from '../model/flags.js';
import { hasAudiences } from '../model/plans.js';
import type { Org } from '../model/accounts.js';
import type { Project } from '../model/projects.js';
import type { StoreReader } from '../store/interfaces.js';
import type { FlagdServing } from './flagd-serving-shape.js';
import { flagdInexpressible } from './flagd-flag.js';
import { fragmentRules, projectFragments } from './records/fragment-records.js';
import { ResolvedFragments } from './records/fragment-resolve.js';
import { listAudiences } from '../model/records/project-records.js';

/** `flag` in each flag set of `project` (one per environment of a multi-environment project, else one), with `org` its organisation. */
export function flagdServing(store: StoreReader, flag: Flag, project: Project, org: Org | null | undefined, now: number): FlagdServing[] {
  return flagdServingIn(store, project, org, now)(flag);
}

/** flagdServing for many flags of one project: its audiences and fragments read once. */
export function flagdServingIn(
  store: StoreReader,
  project: Project,
  org: Org | null | undefined,
  now: number,
): (flag: Flag) => FlagdServing[] {
  const audiences = listAudiences(store, project.id);
  const allowed = hasAudiences(org, now);
  const fragments = new ResolvedFragments(fragmentRules(projectFragments(store, project.id)));
  const environments: (string | null)[] = project.kind === 'multi' ? project.environments : [null];
  return (flag) =>
    environments.map((environment) => {
      const reason = flagdInexpressible(flag, environment, audiences, allowed, fragments);
      return { environment, served: reason === null, reason };
    });
}

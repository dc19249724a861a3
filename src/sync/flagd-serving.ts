// Whether the flagd flag sets serve a flag (issue 44, item 3): per environment of its project, served or
// left out and why, as buildFlagSet decides it (flagdInexpressible is the one judgement). The Management
// API (GET /api/v1/flags/{flag_id}/flagd) and the console's flag page say it for the flag.
import type { Flag } from '../flags/records.js';
import { hasAudiences } from '../model/plans.js';
import type { Org } from '../model/accounts.js';
import type { Project } from '../model/projects.js';
import type { StoreReader } from '../store/interfaces.js';
import { type Static, Type } from '../typebox.js';
import { flagdInexpressible } from './flag-set.js';

export const FlagdServing = Type.Object({
  environment: Type.Union([Type.String(), Type.Null()], {
    description: "The environment's flag set; null for a single-environment project's one set",
  }),
  served: Type.Boolean({ description: 'Whether the flag is in that flag set, answering exactly as OFREP does' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it is left out; null when served' }),
});
export type FlagdServing = Static<typeof FlagdServing>;

export const FlagdServingAnswer = Type.Object({
  id: Type.String(),
  name: Type.String(),
  flagd: Type.Array(FlagdServing, { description: "One entry per flag set of the flag's project" }),
});
export type FlagdServingAnswer = Static<typeof FlagdServingAnswer>;

/** `flag` in each flag set of `project` (one per environment of a multi-environment project, else one), with `org` its organisation. */
export function flagdServing(store: StoreReader, flag: Flag, project: Project, org: Org | null | undefined, now: number): FlagdServing[] {
  const audiences = store.listAudiences(project.id);
  const allowed = hasAudiences(org, now);
  const environments: (string | null)[] = project.kind === 'multi' ? project.environments : [null];
  return environments.map((environment) => {
    const reason = flagdInexpressible(flag, environment, audiences, allowed);
    return { environment, served: reason === null, reason };
  });
}

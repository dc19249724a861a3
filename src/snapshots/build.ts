// A project environment's snapshot (shape.ts), read from the store in one read snapshot: each flag's
// state in the environment as the engine resolves it (src/evaluation/engine/engine.ts compileFlag: shared fragments
// included), and the audiences those states name.
import { effectiveState } from '../flags/records/flag-state.js';
import type { Flag } from '../model/flags.js';
import type { Org } from '../model/accounts.js';
import { hasAudiences } from '../model/plans.js';
import type { Project } from '../model/projects.js';
import type { SnapshotReader } from '../store/interfaces.js';
import type { Snapshot, SnapshotAudience, SnapshotFlag } from '../model/snapshot-shape.js';
import { fragmentRules, projectFragments } from '../flags/records/fragment-records.js';
import { ResolvedFragments } from '../flags/records/fragment-resolve.js';
import { listFlags } from '../flags/records/flag-store.js';
import { listAudiences } from '../model/records/project-records.js';

export type SnapshotStore = Pick<SnapshotReader, 'listKeyedBy' | 'revision' | 'getKeyed'>;

/**
 * `env`: one of a multi-environment project's environments, null for a single-environment project
 * (checked by the caller). `org`: the project's organisation, whose plan decides whether audiences apply
 * (EvalEngine.audiencesAllowed).
 */
export function buildSnapshot(store: SnapshotStore, project: Project, env: string | null, org: Org, now: number): Snapshot {
  const audiences = new Map(listAudiences(store, project.id).map((audience) => [audience.id, audience]));
  const named = new Map<string, SnapshotAudience>();
  // Each fragment resolved once for the whole snapshot, the same object in every rule that names it.
  const fragments = new ResolvedFragments(fragmentRules(projectFragments(store, project.id)));
  const flags = listFlags(store, project.id).map((flag) => {
    const out = snapshotFlag(flag, env, fragments);
    const audienceId = out.state.audienceId;
    const audience = audienceId === null ? undefined : audiences.get(audienceId);
    if (audience !== undefined && !named.has(audience.id))
      named.set(audience.id, { id: audience.id, name: audience.name, updatedAt: audience.updatedAt, rules: audience.rules });
    return out;
  });
  return {
    projectId: project.id,
    environment: env,
    revision: store.revision(),
    audiencesAllowed: hasAudiences(org, now),
    // A trial ends by the clock alone, with no change to announce: the provider applies it itself.
    audiencesUntil: org.plan === 'teams-trial' ? org.trialEndsAt : null,
    flags,
    audiences: [...named.values()],
  };
}

/**
 * A single flag's own state; a group flag's in `env` (its effective cohorts). Its rule is written with
 * its `$ref`s replaced by the project's shared fragments: a provider evaluates it as the server does.
 */
function snapshotFlag(flag: Flag, env: string | null, fragments: ResolvedFragments): SnapshotFlag {
  const state = effectiveState(flag, flag.kind === 'flag' ? null : env);
  const out: SnapshotFlag = {
    id: flag.id,
    name: flag.name,
    updatedAt: flag.updatedAt,
    state: { enabled: state.enabled, trafficPercentage: state.trafficPercentage, audienceId: state.audienceId, cohorts: state.cohorts },
  };
  if (state.typed !== undefined) out.state.typed = fragments.typed(state.typed);
  if (state.experiment !== undefined) out.state.experiment = state.experiment;
  if (state.unleash !== undefined) out.state.unleash = state.unleash;
  if (flag.bucketing !== undefined) out.bucketing = flag.bucketing;
  return out;
}

// What a project environment's flags in Unleash's model are made from, read from the store once: for
// GET /api/client/features (service-routes.ts) and its stream (streaming.ts), with the tag that decides the
// answer (the project's configuration tag, the plan's audience switch, the environment, the prefix):
// the same tag, the same answer.
import { projectConfigTag } from '../evaluation/engine/config-tag.js';
import { listFlags } from '../flags/records/flag-store.js';
import { projectFragments } from '../flags/records/fragment-records.js';
import { hasAudiences } from '../model/plans.js';
import type { Project } from '../model/projects.js';
import type { StoreReader } from '../store/interfaces.js';
import type { ClientFeaturesInput } from './client-features.js';
import { getOrg } from '../model/records/org-records.js';
import { listAudiences } from '../model/records/project-records.js';

export type FeaturesStore = Pick<StoreReader, 'listKeyedBy' | 'getKeyed'>;

/** The answer's form, in its tag: a release that says an unchanged flag differently bumps it. */
const kForm = 1;

export interface FeaturesSource {
  input: ClientFeaturesInput;
  /** Changes when the answer does (the features route's ETag, quoted). */
  tag: string;
}

/** `project`'s flags in `environment` (null: a single-environment project) whose names start with `namePrefix`, at `now` (the plan's time). */
export function readFeaturesSource(
  store: FeaturesStore,
  project: Project,
  environment: string | null,
  namePrefix: string,
  now: number,
): FeaturesSource {
  const org = project.orgId === null ? null : (getOrg(store, project.orgId) ?? null);
  const audiencesAllowed = hasAudiences(org, now);
  const flags = listFlags(store, project.id);
  const audiences = listAudiences(store, project.id);
  const configTag = projectConfigTag(project, flags, audiences, org, projectFragments(store, project.id)?.updatedAt);
  const hex = (text: string | null) => (text === null || text === '' ? '' : `-${Buffer.from(text).toString('hex')}`);
  return {
    input: { projectId: project.id, environment, flags, audiences, audiencesAllowed, namePrefix },
    tag: `"${kForm}${audiencesAllowed ? '+' : '-'}${configTag}${hex(environment)}.${hex(namePrefix)}"`,
  };
}

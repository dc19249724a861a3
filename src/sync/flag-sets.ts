// The flag sets a node serves (the sync service's streams and FetchAllFlags, and GET /v1/flag-sets):
// each project environment's set read from the store, built by buildFlagSet (flag-set.ts) and kept,
// encoded once, until what decides its answers changes. Every subscriber of a selector is sent the same
// Buffer.
//
// A set is rebuilt only when its fingerprint moves: the project's configuration tag (its environments,
// every flag's and audience's version, its shared fragments' version, the organisation's plan:
// src/evaluation/engine/config-tag.ts) and whether the
// plan allows audiences now (a trial can end with no write). So a set's revision (its metadata's
// flagwireRevision, the HTTP route's Flagwire-Revision) is the store revision it was built at, and stays
// that while the project does not change: commits elsewhere (another project, token activity) neither
// rebuild it nor change its bytes, and its ETag holds.
import { projectConfigTag } from '../evaluation/engine/config-tag.js';
import { hasAudiences } from '../model/plans.js';
import type { Project } from '../model/projects.js';
import type { SnapshotReader } from '../store/interfaces.js';
import { buildFlagSet, type OmittedFlag } from './flag-set.js';
import { encodeFlagConfiguration } from './codec.js';
import { frameMessage } from '../capability/grpc-frame.js';
import { flagSetIdOf } from '../flags/records/flag-set-read-records.js';
import { fragmentRules, projectFragments } from '../flags/records/fragment-records.js';
import { listFlags } from '../flags/records/flag-store.js';
import { getOrg } from '../model/records/org-records.js';
import { listAudiences } from '../model/records/project-records.js';

export type FlagSetStore = Pick<SnapshotReader, 'revision' | 'listKeyedBy' | 'getKeyed'>;

/** One project environment's set, as built at `revision`. */
export interface ServedFlagSet {
  readonly flagSetId: string;
  readonly revision: number;
  /** The flagd document. */
  readonly json: string;
  /**
   * The SyncFlagsResponse (and FetchAllFlagsResponse: the same bytes) carrying it, framed for gRPC once:
   * the very Buffer every call it is sent to queues (src/capability/grpc-server.ts).
   */
  readonly message: Buffer;
  /** A strong ETag: the fingerprint and the revision, which decide the bytes. */
  readonly etag: string;
  readonly omitted: readonly OmittedFlag[];
  /** What it was built from: the configuration tag and the plan's audience switch. */
  readonly fingerprint: string;
}

/**
 * Sets kept per node: one per project environment read recently. Each is the size of its document
 * (twice: the text and its message), so the bound is on memory: the least recently built go first.
 */
const kMaxKept = 1000;

/** A kept set, with the snapshot it was last found current in and the plan's audience switch then. */
interface Kept {
  readonly set: ServedFlagSet;
  checkedAt: number;
  audiencesAllowed: boolean;
}

export class FlagSets {
  private readonly kept = new Map<string, Kept>();

  constructor(private readonly store: FlagSetStore) {}

  /**
   * The set of `project` (`environment`: one of a multi-environment project, null for a single one) as
   * the store's current snapshot has it; the caller renews the snapshot first. `now` decides whether
   * the plan allows audiences.
   */
  current(project: Project, environment: string | null, now: number): ServedFlagSet {
    const { store } = this;
    const flagSetId = flagSetIdOf(project.id, environment);
    const revision = store.revision();
    const org = project.orgId === null ? null : (getOrg(store, project.orgId) ?? null);
    const audiencesAllowed = hasAudiences(org, now);
    const known = this.kept.get(flagSetId);
    // Asked again in the snapshot it was last found current in (1,000 streams opening at once, each
    // FetchAllFlags): nothing that decides it can have moved but the clock's part, so the flags are not
    // listed again. Work per call that grew with the set stalled the main thread (issue 55, item 2).
    if (known !== undefined && known.checkedAt === revision && known.audiencesAllowed === audiencesAllowed) return known.set;
    const flags = listFlags(store, project.id);
    const audiences = listAudiences(store, project.id);
    const fragments = projectFragments(store, project.id);
    const fingerprint = `${projectConfigTag(project, flags, audiences, org, fragments?.updatedAt)}${audiencesAllowed ? '+' : '-'}`;
    if (known !== undefined && known.set.fingerprint === fingerprint) {
      known.checkedAt = revision;
      known.audiencesAllowed = audiencesAllowed;
      return known.set;
    }
    const set = buildFlagSet({
      projectId: project.id,
      environment,
      flags,
      audiences,
      fragments: fragmentRules(fragments),
      audiencesAllowed,
      revision,
    });
    const served: ServedFlagSet = {
      flagSetId,
      revision,
      json: set.json,
      message: frameMessage(encodeFlagConfiguration(set.json)),
      etag: `"${fingerprint}.${revision}"`,
      omitted: set.omitted,
      fingerprint,
    };
    this.kept.delete(flagSetId);
    this.kept.set(flagSetId, { set: served, checkedAt: revision, audiencesAllowed });
    if (this.kept.size > kMaxKept) this.kept.delete(this.kept.keys().next().value!);
    return served;
  }
}

// When each flagd flag set was last read (issue 99, item 3; docs/decisions.md: flag set reads): by a path
// that reports no usage (a stock flagd provider or daemon through the sync service or GET /v1/flag-sets),
// so a flag a set serves is "usage unknown" while a set serving it was read in the lifecycle's window, and
// its count is all its use once none was. Kept below the capabilities: the sync capability records the
// reads (src/sync/read-recorder.ts) and the flags capability reads them (lifecycle-facts.ts).
import type { StoreReader } from '../../store/interfaces.js';
import { keyedRecords } from '../../store/record-kinds.js';

/** One flag set's latest read; with projectId '', since when reads are recorded, or every set's latest read (a relay's). */
export interface FlagSetRead {
  /** The set's id (flagSetIdOf), kSinceKey or kEveryKey. */
  flagSetId: string;
  projectId: string;
  /** Unix ms: the latest read recorded; for kSinceKey, the first time any node recorded reads. */
  lastReadAt: number;
}

/** The record that says since when reads are recorded: a set read before then was read unseen. */
export const kSinceKey = '*since';
/** The record of the latest read of every set at once: a relay following serves any project's sets unseen. */
export const kEveryKey = '*every';
/** The project a mark names for every project's sets (no project id holds it). */
export const kEveryProject = '*';

export const kFlagSetReadRecords = keyedRecords<FlagSetRead>()({
  name: 'flagSetRead',
  database: 'flagSetReads',
  // Not configuration: no evaluation reads it, so relays are not sent it and a read moves no revision.
  relayed: false,
  key: (read) => read.flagSetId,
  indexes: {
    /** A project's sets' reads: the lifecycle's facts read them per request. */
    project: { keysOf: (read) => (read.projectId === '' ? [] : [read.projectId]) },
  },
});

/** The id of a project environment's flag set, as flagd's selector and the set's metadata name it (`environment` null: a single-environment project). */
export function flagSetIdOf(projectId: string, environment: string | null): string {
  return environment === null ? projectId : `${projectId}/${environment}`;
}

/** A read of one set, as a recorder sends it. */
export interface FlagSetReadMark {
  projectId: string;
  environment: string | null;
  at: number;
}

/** The reads of a project's flag sets and since when reads are recorded, read once for its flags. */
export interface ProjectFlagSetReads {
  /** Unix ms of each set's latest read, by flagSetId. */
  readonly lastReadAt: ReadonlyMap<string, number>;
  /** Since when reads are recorded (null: never, on this store). */
  readonly since: number | null;
  /** The latest read of every set at once (a relay following); null: none. */
  readonly everyAt: number | null;
}

export function projectFlagSetReads(r: Pick<StoreReader, 'getKeyed' | 'listKeyedBy'>, projectId: string): ProjectFlagSetReads {
  const lastReadAt = new Map<string, number>();
  for (const read of r.listKeyedBy(kFlagSetReadRecords, 'project', projectId)) lastReadAt.set(read.flagSetId, read.lastReadAt);
  return {
    lastReadAt,
    since: r.getKeyed(kFlagSetReadRecords, kSinceKey)?.lastReadAt ?? null,
    everyAt: r.getKeyed(kFlagSetReadRecords, kEveryKey)?.lastReadAt ?? null,
  };
}

/**
 * Whether one of the sets `flagSetIds` may have been read at or after `from`: one was, a relay followed
 * (it serves every set), or reads were not yet recorded then (a set read before the first recorder ran
 * was read unseen). False only when known not to be.
 */
export function readSince(reads: ProjectFlagSetReads, flagSetIds: readonly string[], from: number): boolean {
  if (flagSetIds.length === 0) return false;
  if (reads.since === null || reads.since > from) return true;
  if (reads.everyAt !== null && reads.everyAt >= from) return true;
  return flagSetIds.some((id) => (reads.lastReadAt.get(id) ?? Number.NEGATIVE_INFINITY) >= from);
}

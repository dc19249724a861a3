// A node's LMDB as its copy of PostgreSQL: brought to a revision from the change log, or by a full
// copy when it is empty, follows another database, or is behind the log's retention.
import { StoreOpenError } from '../data-file.js';
import type { StoreCopy } from '../interfaces.js';
import type { PgSystem, RecordSource } from './pg-system.js';

/**
 * Brings `copy` to revision `target` of database `databaseId`; returns the copy's revision then. A
 * data directory holding data of its own (not a copy of any database) is refused, never replaced:
 * `flagwire migrate-to-postgres` copies it into an empty database first.
 */
export async function catchUp(copy: StoreCopy, source: RecordSource, databaseId: string, target: number): Promise<number> {
  const follows = copy.replicaOf();
  if (follows !== databaseId) {
    if (follows === undefined && copy.holdsConfiguration()) {
      throw new StoreOpenError(
        'the data directory holds data of its own, not a copy of this PostgreSQL database; copy it there with `flagwire migrate-to-postgres --database URL --data DIR` (into an empty database), or give each node an empty data directory',
      );
    }
    return fullCopy(copy, source, databaseId);
  }
  let at = copy.replicaRevision();
  while (at < target) {
    const batch = await source.changesAfter(at, target);
    if (batch === null) return fullCopy(copy, source, databaseId);
    at = copy.applyRevisions(batch);
  }
  return at;
}

async function fullCopy(copy: StoreCopy, source: RecordSource, databaseId: string): Promise<number> {
  const { revision, records } = await source.snapshot();
  copy.replaceAll(databaseId, revision, records);
  return revision;
}

/** Brings `copy` to PostgreSQL's latest revision (a node's start, a command-line command); returns the revision. */
export async function catchUpLatest(copy: StoreCopy, pg: PgSystem): Promise<number> {
  const id = await pg.databaseId();
  return catchUp(copy, pg, id, (await pg.latestRevision()).revision);
}
